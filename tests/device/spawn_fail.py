"""torch.multiprocessing.spawn's own report of a failed process (DeepEP's and other tests launch
this way, not with torchrun): two processes as two NCCL "nodes" (a NCCL_HOSTID each) on one GPU
all-reduce once; process 1 then raises ValueError, process 0 waits in a barrier. spawn prints
`Terminating process %s via signal SIGTERM` for process 0 and raises ProcessRaisedException."""
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def work(rank, world):
    os.environ["NCCL_HOSTID"] = f"ibwire-node{rank}"
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", 0))
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"rank {rank}: all_reduce done, {x[0].item()}", flush=True)
    if rank == 1:
        raise ValueError("process 1 stops here on purpose (ibwire device case spawn-fail)")
    time.sleep(60)


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29611")
    mp.spawn(work, args=(2,), nprocs=2)
