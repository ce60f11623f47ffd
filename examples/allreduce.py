"""Minimal torch.distributed all-reduce, for checking a launch end to end.

Run under torchrun (one process per GPU, or one per node with gloo on CPU):
    torchrun --nproc-per-node=1 examples/allreduce.py                # gloo on CPU if no GPU
    torchrun --nproc-per-node=8 examples/allreduce.py --size-mb 256  # NCCL, with a bandwidth run

Each rank all-reduces [rank+1] and prints one line:
    rank=0 world=2 local_rank=0 group_rank=0 master=10.77.0.1:29500 backend=gloo allreduce_sum=3.0 expected=3.0
With --size-mb, rank 0 also prints the measured bus bandwidth as nccl-tests computes it:
    # ibwire-allreduce size=268435456 time_us=1234.5 algbw_gbps=217.4 busbw_gbps=380.5 world=8
Exit status 0 when the sum is right. The backend is --backend, else IBWIRE_BACKEND, else nccl
when CUDA is available, else gloo. PG_TIMEOUT (seconds) bounds every collective.
"""
import argparse
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default=os.environ.get("IBWIRE_BACKEND"))
    p.add_argument("--size-mb", type=float, default=0.0)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--timeout", type=int, default=int(os.environ.get("PG_TIMEOUT", "300")))
    a = p.parse_args()
    backend = a.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        dev = torch.device("cuda", local_rank)
    else:
        dev = torch.device("cpu")
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=a.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()

    def sync():
        if backend == "nccl":
            torch.cuda.synchronize()

    t = torch.tensor([float(rank + 1)], device=dev)
    dist.all_reduce(t)
    expected = world * (world + 1) / 2
    got = t.item()
    print(
        f"rank={rank} world={world} local_rank={local_rank} group_rank={os.environ.get('GROUP_RANK')} "
        f"master={os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')} backend={backend} "
        f"allreduce_sum={got} expected={expected}",
        flush=True,
    )
    if a.size_mb > 0:
        n = int(a.size_mb * 1e6) // 4
        x = torch.ones(n, dtype=torch.float32, device=dev)
        for _ in range(a.warmup):
            dist.all_reduce(x)
        sync()
        t0 = time.perf_counter()
        for _ in range(a.iters):
            dist.all_reduce(x)
        sync()
        dt = (time.perf_counter() - t0) / a.iters
        size = n * 4
        algbw = size / dt / 1e9
        busbw = algbw * 2 * (world - 1) / world
        if rank == 0:
            print(
                f"# ibwire-allreduce size={size} time_us={dt * 1e6:.1f} algbw_gbps={algbw:.2f} "
                f"busbw_gbps={busbw:.2f} world={world}",
                flush=True,
            )
    dist.destroy_process_group()
    return 0 if got == expected else 1


if __name__ == "__main__":
    sys.exit(main())
