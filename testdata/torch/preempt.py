"""A PyTorch DDP job that checkpoints when YARN warns of its preemption (docs/running.md#preemption;
am/preemption_integration_test.go).

Run by yarn-am in gang mode, one process per TaskExecutor (RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT from the launcher). It resumes from CKPT_DIR/checkpoint.pt when there is one, then takes
DDP steps on a tiny model (gloo, CPU) until it is told to stop:

  - SIGUSR1 (taskexecutor.preemption-signal) only sets a flag: the handler runs between two
    bytecodes, where a collective call must not start. After each step the ranks agree on the flag
    (an all_reduce of it), so all of them checkpoint after the same step; rank 0 writes the
    checkpoint (model, optimizer, the next step) to a temporary file and renames it into place.
  - Without a checkpoint to resume from it runs until YARN kills it; resumed, it stops
    STEPS_AFTER_RESUME steps later and exits 0.

Every rank appends what happens to CKPT_DIR/events-rank<R>.log, one line each, as
"<unix time> round=<N> <what> step=<S> ...", for the test: start, resumed, signal (this rank's own
signal arrived; with what the notice file holds), warned (the ranks agreed), checkpoint, sigterm,
done, and progress every 10 steps.

usage: preempt.py CKPT_DIR STEPS_AFTER_RESUME
"""

import json
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

warned = False


def main() -> int:
    ckpt_dir, after_resume = sys.argv[1], int(sys.argv[2])
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    rnd = os.environ.get("YARN_AM_ROUND", "?")
    log_path = os.path.join(ckpt_dir, f"events-rank{rank}.log")

    def event(what: str) -> None:
        # One write per line (O_APPEND): a line is never split, even when the process dies after it.
        line = f"{time.time():.3f} round={rnd} {what}\n"
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def on_warning(signum, frame):
        global warned
        warned = True

    step = 0

    def on_term(signum, frame):
        event(f"sigterm step={step}")
        sys.exit(143)

    signal.signal(signal.SIGUSR1, on_warning)
    signal.signal(signal.SIGTERM, on_term)
    event(f"start pid={os.getpid()} preemption_file={os.environ.get('YARN_AM_PREEMPTION_FILE', '')}")

    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=timedelta(minutes=3))
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    ckpt = os.path.join(ckpt_dir, "checkpoint.pt")
    resumed = None
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = resumed = state["step"]
        event(f"resumed step={step}")
    ddp = DistributedDataParallel(model)
    stop = None if resumed is None else resumed + after_resume
    flag = torch.zeros(1)
    checkpointed = signalled = False
    while stop is None or step < stop:
        opt.zero_grad()
        ddp(torch.randn(16, 8)).pow(2).mean().backward()
        opt.step()
        step += 1
        if step % 10 == 0:
            event(f"progress step={step}")
        if warned and not signalled:
            # This rank's own signal: its launcher wrote the notice file before sending it.
            path = os.environ.get("YARN_AM_PREEMPTION_FILE", "")
            with open(path) as f:
                n = json.load(f)
            event(f"signal step={step} container={n['container']} deadline={n['deadline']}")
            signalled = True
        flag[0] = 1.0 if warned else 0.0
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item() > 0 and not checkpointed:
            event(f"warned step={step}")
            if rank == 0:
                tmp = ckpt + ".tmp"
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
                os.replace(tmp, ckpt)
                event(f"checkpoint step={step}")
            checkpointed = True
        time.sleep(0.2)
    dist.barrier()
    dist.destroy_process_group()
    event(f"done step={step}")
    return 0


if __name__ == "__main__":
    code = main()
    # Leave without the interpreter's teardown. torch 2.15's gloo can still have a thread there after
    # destroy_process_group, and its destruction aborted a rank that had done and reported its work
    # ("terminate called without an active exception", SIGABRT; seen once under torchrun in CI).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
