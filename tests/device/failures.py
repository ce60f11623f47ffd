"""Make NCCL fail on purpose on one GPU machine, to collect NCCL's real failure wording.

Run under torchrun with 2 processes on one GPU; each rank takes its own NCCL_HOSTID, so NCCL
treats the two as two nodes and connects them over its network transport (what a two-node job
does). IBWIRE_CASE picks what to break:
  ok           nothing (the Socket transport between the two "nodes": a multi-node socket run)
  die          rank 1 exits right after init; rank 0's next collective sees the remote death
  dup          no NCCL_HOSTID: both ranks on one host and one GPU (NCCL's duplicate-GPU check)
  hang         rank 1 sleeps IBWIRE_HANG_S (60) before its second all-reduce; rank 0 goes on
               until PyTorch's watchdog (PG_TIMEOUT) fires
  loop         all-reduces for IBWIRE_LOOP_S (20) seconds (a long healthy job, for RAS)
  preinit      rank 1 exits before it joins the process group; rank 0 waits in its init
  fillmem      rank 1 takes all but IBWIRE_LEAVE_MB (64) of the GPU's free memory before init
  killmid      rank 1 kills itself (SIGKILL) in the middle of a stream of all-reduces
  segv         rank 1 dies of SIGSEGV right after init
  failfirst    rank 1 exits (code 5) after init in torchrun's first attempt only
  failalways   rank 1 exits (code 5) after init in every attempt
  torchoom     rank 1 asks PyTorch for more GPU memory than there is, after init
  skip         rank 1 skips one all-reduce: rank 0 waits for it until the watchdog
  mismatch     rank 1 calls all-gather where rank 0 calls all-reduce (a collective mismatch)
  sizemismatch rank 1 all-reduces half as many elements as rank 0
  sendrecv     point-to-point only: rank 0 sends, rank 1 receives, then a batch of isend/irecv
  ordinal      every rank takes GPU LOCAL_RANK (torch.cuda.set_device(rank)) on a one-GPU machine
  killinit     rank 1 SIGKILLs itself after joining the process group, before NCCL's first
               communicator (made lazily at the first collective)
  newgroup     a second communicator (dist.new_group of every rank) and an all-reduce on it
  pyerr        the last rank raises ValueError in its own code after init (a job's own bug)
  nan          rank 1 puts a NaN in its all-reduce input (with TORCH_NCCL_NAN_CHECK=1 PyTorch's
               check stops it)
  late         rank 1 sleeps IBWIRE_LATE_S (60) before it joins the process group (a node that
               started late)
  gloo         the whole job on gloo (no NCCL at all): the launcher's lines only
  progress     rank 0 prints a progress bar (carriage returns) while it all-reduces
  devassert    rank 1 indexes past a CUDA tensor's end after init (a device-side assert: a job's
               own bug that surfaces as a CUDA error at the next synchronisation)
  freeze       rank 1 stops itself (SIGSTOP) in the middle of a stream of all-reduces (a node that
               froze: no death to report, only silence)
  graph        all-reduces captured in a CUDA graph and replayed
  alltoall     an all-to-all (all_to_all_single) and an all-gather between the "nodes"
  abort        rank 1 calls os.abort() (SIGABRT) after init
  termself     rank 1 sends itself SIGTERM in the middle of a stream of all-reduces (a stop
               from outside, as a scheduler's)
IBWIRE_RANK1_ENV ("K=V K2=V2") is set in rank 1's environment only, before its init (settings
that differ between ranks).
"""
import time
import datetime
import os
import sys

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
case = os.environ.get("IBWIRE_CASE", "ok")
if case != "dup":
    os.environ["NCCL_HOSTID"] = f"ibwire-node{rank}"
if rank == 1:
    for kv in os.environ.get("IBWIRE_RANK1_ENV", "").split():
        k, _, v = kv.partition("=")
        os.environ[k] = v
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) if case == "ordinal" else 0)
if case == "late" and rank == 1:
    time.sleep(int(os.environ.get("IBWIRE_LATE_S", "60")))
if case == "preinit" and rank == 1:
    os._exit(4)
hold = None
if case == "fillmem" and rank == 1:
    free, _ = torch.cuda.mem_get_info()
    leave = int(os.environ.get("IBWIRE_LEAVE_MB", "64")) << 20
    hold = torch.empty(max(free - leave, 0), dtype=torch.uint8, device="cuda")
backend = "gloo" if case == "gloo" else "nccl"
pg_timeout = datetime.timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "40")))
if case == "eager":
    # eager init (device_id): NCCL's communicator at init_process_group, subgroups by ncclCommSplit
    dist.init_process_group(backend, timeout=pg_timeout, device_id=torch.device("cuda", 0))
else:
    dist.init_process_group(backend, timeout=pg_timeout)
if case == "barrier":
    # a barrier before any collective, devices unknown: PyTorch's warning in healthy runs
    dist.barrier()
if case == "gloo":
    t = torch.ones(1 << 10)
    dist.all_reduce(t)
    print(f"rank={rank} gloo sum={t[0].item()}", flush=True)
    dist.destroy_process_group()
    sys.exit(0)
if case == "killinit" and rank == 1:
    import signal
    os.kill(os.getpid(), signal.SIGKILL)
# rank 0 publishes NCCL's unique id at its first collective: late (past the group's timeout), or
# never (it leaves, taking the store it serves with it)
if case == "uidlate" and rank == 0:
    time.sleep(int(os.environ.get("IBWIRE_LATE_S", "45")))
if case == "uidgone" and rank == 0:
    time.sleep(3)
    os._exit(0)
x = torch.ones(1 << 20, device="cuda")
if case == "nan" and rank == 1:
    x[7] = float("nan")
dist.all_reduce(x)
torch.cuda.synchronize()
if case == "die" and rank == 1:
    os._exit(3)
if case == "abortpg" and rank == 1:
    # the rank aborts its communicators (ncclCommAbort) and leaves cleanly: its peer's next
    # collective has no partner
    dist.distributed_c10d._abort_process_group()
    os._exit(0)
if case == "die0" and rank == 0:
    # the rank that hosts torchrun's store (and NCCL's bootstrap root) leaves
    time.sleep(1)
    os._exit(3)
if case == "eager":
    g = dist.new_group(list(range(dist.get_world_size())))
    dist.all_reduce(x, group=g)
    torch.cuda.synchronize()
if rank == 1 and (case == "failalways" or (case == "failfirst" and os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") == "0")):
    sys.exit(5)
if case == "torchoom" and rank == 1:
    big = torch.empty(1 << 40, dtype=torch.uint8, device="cuda")
if case == "abort" and rank == 1:
    os.abort()
if case == "segv" and rank == 1:
    import ctypes
    ctypes.string_at(0)
# rank 1 signals itself in the middle of a stream of all-reduces: killed (SIGKILL, at once),
# frozen (SIGSTOP) or stopped from outside (SIGTERM), the last two after its work is done
MIDSIG = {"killmid": "SIGKILL", "freeze": "SIGSTOP", "termself": "SIGTERM"}
if case in MIDSIG:
    import signal
    for i in range(400):
        dist.all_reduce(x)
        if rank == 1 and i == 200:
            if case != "killmid":
                torch.cuda.synchronize()
            os.kill(os.getpid(), getattr(signal, MIDSIG[case]))
    torch.cuda.synchronize()
if case == "graph":
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            dist.all_reduce(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        dist.all_reduce(x)
    for _ in range(10):
        g.replay()
    torch.cuda.synchronize()
if case == "progress":
    for i in range(100):
        dist.all_reduce(x)
        if rank == 0:
            sys.stdout.write(f"\rstep {i + 1}/100 [{'#' * (i // 5):<20}] loss={1.0 / (i + 1):.4f}")
            sys.stdout.flush()
    torch.cuda.synchronize()
    if rank == 0:
        sys.stdout.write("\n")
if case == "hang" and rank == 1:
    time.sleep(int(os.environ.get("IBWIRE_HANG_S", "60")))
if case == "loop":
    end = time.time() + int(os.environ.get("IBWIRE_LOOP_S", "20"))
    while time.time() < end:
        dist.all_reduce(x)
        torch.cuda.synchronize()
if case == "mismatch":
    if rank == 1:
        out = [torch.empty_like(x) for _ in range(2)]
        dist.all_gather(out, x)
    else:
        dist.all_reduce(x)
    torch.cuda.synchronize()
if case == "sizemismatch":
    dist.all_reduce(x if rank == 0 else x[: x.numel() // 2])
    torch.cuda.synchronize()
if case == "sendrecv":
    if rank == 0:
        dist.send(x, 1)
    else:
        dist.recv(x, 0)
    peer = 1 - rank
    y = torch.empty_like(x)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, x, peer), dist.P2POp(dist.irecv, y, peer)])
    for r in reqs:
        r.wait()
    torch.cuda.synchronize()
if case == "alltoall":
    ws = dist.get_world_size()
    y = torch.empty_like(x)
    dist.all_to_all_single(y, x)
    out = [torch.empty_like(x) for _ in range(ws)]
    dist.all_gather(out, x)
    torch.cuda.synchronize()
if case == "newgroup":
    g = dist.new_group(list(range(dist.get_world_size())))
    dist.all_reduce(x, group=g)
    torch.cuda.synchronize()
if case == "devassert" and rank == 1:
    idx = torch.tensor([1 << 30], device="cuda")
    x[idx] = 2.0
    torch.cuda.synchronize()
if case == "pyerr" and rank == dist.get_world_size() - 1:
    raise ValueError("bad batch: expected 4 dimensions, got 3")
for i in range(3):
    if case == "skip" and rank == 1 and i == 0:
        continue
    dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank={rank} sum={x[0].item()}", flush=True)
if case != "nodestroy":
    # nodestroy: PyTorch warns at exit that the process group was not destroyed
    dist.destroy_process_group()
