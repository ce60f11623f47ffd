#!/usr/bin/env bash
# Issue 16 on real NCCL (2 GPUs, no InfiniBand): two ranks with NCCL_P2P_DISABLE=1
# NCCL_SHM_DISABLE=1 must use NCCL's network transport, which here can only be Socket.
#   1. --expect-net ib, a net plugin present (so no NCCL_NET pin): the watch must stop the job
#      at NCCL's "Using network Socket".
#   2. --expect-net ib, no plugin: NCCL_NET=IB is pinned and NCCL's init fails; the watch says why.
#   3. --expect-net socket: examples/allreduce.py runs to completion.
# Each run's stderr, exit status and wall time go to $OUT; NCCL's own logs too.
set -u
OUT=${OUT:-device-out}; mkdir -p "$OUT"
B=${IBWIRE:-$PWD/target/release/ibwire}
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 PYTHONWARNINGS=ignore PG_TIMEOUT=120
W=$(mktemp -d); export TMPDIR=$W
mkdir -p "$W/plugin"; : > "$W/plugin/libnccl-net.so"   # an empty library: NCCL cannot load it
run() { # name, env…, -- launch args…
  local name=$1; shift; local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  local t0; t0=$(date +%s%N)
  env "${envs[@]}" timeout 300 "$B" launch --nnodes 1 --master-addr 127.0.0.1 "$@" -- examples/allreduce.py --size-mb 64 \
    > "$OUT/$name.out" 2>&1
  local rc=$? t1; t1=$(date +%s%N)
  echo "$name: rc=$rc wall=$(( (t1 - t0) / 1000000 )) ms" | tee -a "$OUT/summary.txt"
  for d in "$W"/ibwire-nccl-*; do [ -d "$d" ] && cat "$d"/* > "$OUT/$name-nccl.log" 2>/dev/null && rm -rf "$d"; done
}
{ nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } > "$OUT/summary.txt" 2>&1
run 1-expect-ib-plugin LD_LIBRARY_PATH="$W/plugin" -- --expect-net ib
run 2-expect-ib-pinned X=1 -- --expect-net ib
run 3-expect-socket NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_DEBUG_FILE="$W/sock.%h.%p.log" -- --expect-net socket
cat "$W"/sock.*.log > "$OUT/3-expect-socket-nccl.log" 2>/dev/null
"$B" probe --json > "$OUT/probe.json" 2>&1
tail -n 4 "$OUT"/[123]-*.out
cat "$OUT/summary.txt"
