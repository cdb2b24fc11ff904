"""A PyTorch DDP job for the mini cluster (docs/running.md#pytorch; am/torch_integration_test.go).

Run by yarn-am in gang mode, either directly (one process per TaskExecutor: RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT come from the launcher) or by torchrun in each TaskExecutor (several
processes per TaskExecutor: torchrun sets them). It joins the gloo process group (CPU; no GPU is
used), all_reduces the ranks and checks the sum, takes one DDP step on a tiny model with different
data on every rank and checks that every rank ends with the same parameters, and prints one line:

  ddp: rank=R world=W local_rank=L cuda_visible_devices=V container_gpus=C allreduce=S want=S
       params_equal=true stepped=true maxrss_mib=M ok=true

(on one line). Exit status 1 when a check fails.
"""

import os

# The container's GPUs as the launcher set them, for the report line.
CONTAINER_GPUS = os.environ.get("CUDA_VISIBLE_DEVICES", "")

# One GPU per process under torchrun (docs/running.md#pytorch): the lines to copy into a training
# script, before torch is imported (CUDA reads the variable once). With one process per TaskExecutor,
# or a number of GPUs other than processes, they change nothing.
# torchrun hands every process the container's GPUs: keep the LOCAL_RANK-th one.
if "TORCHELASTIC_RUN_ID" in os.environ:  # set only in processes torchrun started
    gpus = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    if len(gpus) == int(os.environ["LOCAL_WORLD_SIZE"]):
        os.environ["CUDA_VISIBLE_DEVICES"] = gpus[int(os.environ["LOCAL_RANK"])]

import resource  # noqa: E402
import sys  # noqa: E402
from datetime import timedelta  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402


def main() -> int:
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    # env:// reads MASTER_ADDR and MASTER_PORT; the timeout bounds a rank that never comes.
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=timedelta(minutes=3))
    failures = []
    if dist.get_rank() != rank or dist.get_world_size() != world:
        failures.append(f"process group says rank {dist.get_rank()} of {dist.get_world_size()}")

    total = torch.tensor([rank], dtype=torch.int64)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    want = world * (world - 1) // 2
    if total.item() != want:
        failures.append(f"all_reduce sum {total.item()}, want {want}")

    # Different initial weights per rank: DistributedDataParallel must broadcast rank 0's. Different
    # data per rank: only averaged gradients leave the ranks with equal parameters after the step.
    torch.manual_seed(1000 + rank)
    model = torch.nn.Linear(8, 4)
    ddp = DistributedDataParallel(model)
    before = torch.cat([p.detach().flatten() for p in model.parameters()]).clone()
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    opt.zero_grad()
    loss = ddp(torch.randn(16, 8)).pow(2).mean()
    loss.backward()
    opt.step()
    after = torch.cat([p.detach().flatten() for p in model.parameters()])
    stepped = not torch.equal(before, after)
    if not stepped:
        failures.append("the optimizer step left the parameters unchanged")
    gathered = [torch.empty_like(after) for _ in range(world)]
    dist.all_gather(gathered, after)
    params_equal = all(torch.equal(g, gathered[0]) for g in gathered)
    if not params_equal:
        failures.append("the ranks' parameters differ after the DDP step")

    dist.barrier()
    dist.destroy_process_group()
    maxrss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # Linux: KiB
    ok = not failures
    line = (f"ddp: rank={rank} world={world} local_rank={local_rank}"
            f" cuda_visible_devices={os.environ.get('CUDA_VISIBLE_DEVICES', '')}"
            f" container_gpus={CONTAINER_GPUS} allreduce={total.item()} want={want}"
            f" params_equal={str(params_equal).lower()} stepped={str(stepped).lower()}"
            f" maxrss_mib={maxrss_mib} ok={str(ok).lower()}\n")
    # One write for the whole line: under torchrun the ranks of a container share one stdout file,
    # and print() writes the text and its newline separately, so two ranks' lines could interleave.
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), line.encode())
    for f in failures:
        print(f"ddp: rank {rank}: {f}", file=sys.stderr, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    code = main()
    # Leave without the interpreter's teardown. torch 2.15's gloo can still have a thread there after
    # destroy_process_group, and its destruction aborted a rank that had done and reported its work
    # ("terminate called without an active exception", SIGABRT; seen once under torchrun in CI).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
