"""torch.distributed for the stand-in: env:// rendezvous (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, as torchrun sets them), and an all_reduce whose
ranks meet through files in TORCH_STANDIN_RDZV (a folder every rank can
reach: the torchrun stand-in puts it beside the script, which the probe's
job mounts on both nodes).

The seed's cluster hangs in NCCL's intra-node P2P transport: an all_reduce
among two or more GPUs of one node (LOCAL_WORLD_SIZE > 1) never completes
unless NCCL_P2P_DISABLE=1. As in PyTorch, the hang ends when the process
group's timeout (init_process_group(timeout=...)) runs out: the watchdog
prints its error and takes the process down (SIGABRT). A rank that never
arrives at the rendezvous fails it (DistStoreError), as the TCPStore does.
TAOTOP_STANDIN_TIMEOUT_SCALE (a number, default
1) scales the time really waited, so tests need not wait the probe's 100 s;
the messages still name the nominal timeout."""
import datetime
import os
import shutil
import signal
import sys
import time

_state = None


class DistBackendError(RuntimeError):
    pass


class DistStoreError(RuntimeError):
    pass


class ReduceOp:
    SUM = "sum"


def _env(name):
    value = os.environ.get(name)
    if value is None:
        raise ValueError("Error initializing torch.distributed using env:// rendezvous: "
                         "environment variable %s expected, but not set" % name)
    return value


def is_available():
    return True


def is_initialized():
    return _state is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       **kwargs):
    global _state
    if _state is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if timeout is None:
        timeout = datetime.timedelta(minutes=10)
    _env("MASTER_ADDR")
    _env("MASTER_PORT")
    rank = int(_env("RANK")) if rank < 0 else rank
    world_size = int(_env("WORLD_SIZE")) if world_size < 0 else world_size
    rdzv = os.environ.get("TORCH_STANDIN_RDZV") or "/tmp/torch-stand-in-rdzv-%s-%s" % (
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])
    os.makedirs(rdzv, exist_ok=True)
    scale = float(os.environ.get("TAOTOP_STANDIN_TIMEOUT_SCALE", "1") or 1)
    # env:// rendezvous waits for every rank (PyTorch's TCPStore, within the
    # same timeout), so a collective's timeout counts from when all are
    # there: ranks of two nodes started seconds apart still meet.
    open(os.path.join(rdzv, "join.%d" % rank), "w").close()
    end = time.monotonic() + timeout.total_seconds() * scale
    while True:
        joined = len([n for n in os.listdir(rdzv) if n.startswith("join.")])
        if joined >= world_size:
            break
        if time.monotonic() >= end:
            raise DistStoreError("Timed out after %d seconds waiting for clients. %d/%d clients "
                                 "joined." % (timeout.total_seconds() + 1, joined, world_size))
        time.sleep(0.05)
    _state = {
        "backend": backend or "nccl", "rank": rank, "world": world_size, "dir": rdzv,
        "timeout_ms": int(timeout.total_seconds() * 1000), "scale": scale, "seq": 0,
        "local_world": int(os.environ.get("LOCAL_WORLD_SIZE", "1")),
    }


def _need():
    if _state is None:
        raise ValueError("Default process group has not been initialized, "
                         "please make sure to call init_process_group.")
    return _state


def get_rank():
    return _need()["rank"]


def get_world_size():
    return _need()["world"]


def _watchdog_abort(s, numel, waited_ms):
    # The text PyTorch's ProcessGroupNCCL watchdog prints, then the abort.
    r = s["rank"]
    work = ("WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=%d)"
            % (s["seq"], numel, numel, s["timeout_ms"]))
    what = ("[Rank %d] Watchdog caught collective operation timeout: %s ran for %d milliseconds "
            "before timing out." % (r, work, waited_ms))
    err = sys.stderr
    err.write("[rank%d]:[E ProcessGroupNCCL.cpp:563] %s\n" % (r, what))
    err.write("[rank%d]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank %d] Timeout at NCCL work: %d, "
              "last enqueued NCCL work: %d, last completed NCCL work: %d.\n"
              % (r, r, s["seq"], s["seq"], s["seq"] - 1))
    err.write("[rank%d]:[E ProcessGroupNCCL.cpp:577] [Rank %d] Some NCCL operations have failed or "
              "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations "
              "might run on corrupted/incomplete data.\n" % (r, r))
    err.write("[rank%d]:[E ProcessGroupNCCL.cpp:583] [Rank %d] To avoid data inconsistency, we are "
              "taking the entire process down.\n" % (r, r))
    err.write("terminate called after throwing an instance of 'c10::DistBackendError'\n")
    err.write("  what():  [PG 0 Rank %d] Process group watchdog thread terminated with exception: "
              "%s\n" % (r, what))
    err.flush()
    sys.stdout.flush()
    signal.signal(signal.SIGABRT, signal.SIG_DFL)
    os.abort()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    s = _need()
    s["seq"] += 1
    start = time.monotonic()
    deadline = start + s["timeout_ms"] / 1000.0 * s["scale"]
    nominal = lambda: s["timeout_ms"] + int((time.monotonic() - deadline) * 1000)  # noqa: E731
    if s["local_world"] > 1 and os.environ.get("NCCL_P2P_DISABLE") != "1":
        # The intra-node P2P hang: the kernel never finishes.
        time.sleep(max(deadline - time.monotonic(), 0))
        _watchdog_abort(s, tensor.numel(), nominal())
    mine = os.path.join(s["dir"], "%d.%d" % (s["seq"], s["rank"]))
    with open(mine + ".part", "w") as f:
        f.write(repr(tensor._value))
    os.rename(mine + ".part", mine)
    total = 0.0
    for r in range(s["world"]):
        path = os.path.join(s["dir"], "%d.%d" % (s["seq"], r))
        while not os.path.exists(path):
            if time.monotonic() >= deadline:
                _watchdog_abort(s, tensor.numel(), nominal())
            time.sleep(0.05)
        with open(path) as f:
            total += float(f.read())
    tensor._value = total
    return None


def barrier():
    all_reduce(__import__("torch").ones(1))


def destroy_process_group(group=None):
    global _state
    s = _need()
    open(os.path.join(s["dir"], "bye.%d" % s["rank"]), "w").close()
    if s["rank"] == 0:
        # The last one out tidies: wait (briefly) for every rank's goodbye.
        end = time.monotonic() + 5
        while time.monotonic() < end and len(
                [n for n in os.listdir(s["dir"]) if n.startswith("bye.")]) < s["world"]:
            time.sleep(0.05)
        shutil.rmtree(s["dir"], ignore_errors=True)
    _state = None
