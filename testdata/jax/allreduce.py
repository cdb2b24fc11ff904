"""One rank of a JAX multi-process job on CPU, run by yarn-am's gang mode (docs/running.md#jax).

The launcher gives every rank RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
(docs/running.md#gang-mode-distributed-training); rank 0 hosts JAX's coordinator on MASTER_PORT. Each
process adds rank+1 into a global array (one CPU device per process), sums it with a jitted reduction
across the processes (an all-reduce over gloo), gathers every process's index with
multihost_utils.process_allgather, and prints one line (am/jax_integration_test.go reads it):

  jax: rank=R world=N process_index=I process_count=C devices=D sum=S want=W gathered=0,1,... version=V maxrss_mib=M ok=true

It exits non-zero when a check fails, so a wrong answer fails the application, not only the test.
"""

import os
import resource
import sys

# CPU only: the containers' fake GPUs are for the scheduler, and no accelerator plugin is wanted.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
coordinator = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"

# Cross-process collectives on CPU need an implementation: gloo, the default of the pinned jax 0.10.2
# (testdata/jax/jax.mk), named here so that a release with another default behaves the same.
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address=coordinator, num_processes=world, process_id=rank,
                           initialization_timeout=120)

devices = jax.devices()  # every process's CPU device, in process order
mesh = Mesh(np.array(devices), ("p",))
sharding = NamedSharding(mesh, PartitionSpec("p"))
local = [jax.device_put(np.array([rank + 1], dtype=np.int32), d) for d in jax.local_devices()]
global_array = jax.make_array_from_single_device_arrays((len(devices),), sharding, local)
total = int(jax.jit(jnp.sum, out_shardings=NamedSharding(mesh, PartitionSpec()))(global_array))
want = world * (world + 1) // 2

gathered = multihost_utils.process_allgather(np.int32(jax.process_index()))
gathered = [int(x) for x in np.asarray(gathered).reshape(-1)]

ok = (total == want and jax.process_index() == rank and jax.process_count() == world
      and gathered == list(range(world)))
line = (f"jax: rank={rank} world={world} process_index={jax.process_index()} "
        f"process_count={jax.process_count()} devices={len(devices)} sum={total} want={want} "
        f"gathered={','.join(map(str, gathered))} version={jax.__version__} "
        f"maxrss_mib={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} ok={str(ok).lower()}\n")
# One write per line: the ranks of one container share its stdout file.
os.write(1, line.encode())
jax.distributed.shutdown()
sys.exit(0 if ok else 1)
