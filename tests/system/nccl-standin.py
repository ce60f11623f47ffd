#!/usr/bin/env python3
"""A training script's stand-in for the system tests, run by real torchrun: it writes a real
NCCL log where NCCL writes its log (NCCL_DEBUG_FILE with %h and %p expanded when NCCL_DEBUG is
set, else standard output), "trains" for STANDIN_RUN seconds and exits 0. There is no GPU in
CI: what the job's NCCL says is the part replayed.

The log is NCCL 2.28.9's own, from a real 2-rank run on an H200 with each rank its own node
(NCCL_HOSTID; tests/fixtures/verify-corpus/h200-nccl-2.28.9-debug-file-rank{0,1}.log), the
file of this rank (RANK), its host `vm` renamed to this one. That machine has no HCA, so NCCL
chose Socket there: the socket-fallback case as it happened. STANDIN_IB=1 rewrites the
transport lines as NCCL prints them when it takes the node's InfiniBand HCAs (the node's
devices in `NET/IB : Using [i]dev:port/IB …`, `Using network IB`, channels `via
NET/IB/<dev>/GDRDMA`, `GDR 1`): a healthy IB job, every other line as NCCL wrote it."""
import os
import re
import socket
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
rank = int(os.environ.get("RANK", "0"))
src = os.path.join(here, "../fixtures/verify-corpus", f"h200-nccl-2.28.9-debug-file-rank{rank % 2}.log")
host = socket.gethostname()
lines = [re.sub(r"^vm:", host + ":", l) for l in open(src, errors="replace").read().splitlines()]
if os.environ.get("STANDIN_IB"):
    hcas = os.environ.get("STANDIN_HCAS", "mlx5_0:1").split(",")
    using = " ".join(f"[{i}]{h}/IB" for i, h in enumerate(hcas))
    out = []
    for l in lines:
        if "NET/IB : No device found." in l or "NET/Socket : " in l:
            continue
        l = re.sub(r"NET/IB : Using \[RO\]", f"NET/IB : Using {using} [RO]", l)
        l = l.replace("Using network Socket", "Using network IB")
        l = l.replace("via NET/Socket/0", "via NET/IB/0/GDRDMA")
        l = l.replace("use ring PXN 0 GDR 0", "use ring PXN 0 GDR 1")
        out.append(l)
    lines = out
text = "\n".join(lines) + "\n"
dest = os.environ.get("NCCL_DEBUG_FILE")
if dest and os.environ.get("NCCL_DEBUG"):
    with open(dest.replace("%h", host).replace("%p", str(os.getpid())), "a") as f:
        f.write(text)
else:
    sys.stdout.write(text)
    sys.stdout.flush()
time.sleep(float(os.environ.get("STANDIN_RUN", "1")))
print(f"standin rank={rank} of {os.environ.get('WORLD_SIZE')} done", flush=True)
