"""taotop's NCCL probe: one all-reduce across every GPU of its allocation
(one node with the job's GPUs, or two nodes), run under the container's
torchrun before the first job of that shape on a cluster. It prints
NCCL_PROBE_OK from rank 0 when the sum is right; a hung collective never
prints it, and either ends by its own timeout (the process group's, below)
or is cancelled by taotop, which then tries the next NCCL knobs of its
ladder."""
import datetime
import os
import sys

import torch
import torch.distributed as dist


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=100))
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    world = dist.get_world_size()
    if int(x[0].item()) != world:
        print("NCCL_PROBE_WRONG_SUM %s != %d" % (x[0].item(), world), flush=True)
        sys.exit(1)
    if dist.get_rank() == 0:
        print("NCCL_PROBE_OK world=%d" % world, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
