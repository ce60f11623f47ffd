#!/usr/bin/env bash
# Run on a GPU machine (the `device` tool) to collect real data for fixtures and checks.
# Writes into $OUT (default ./device-out): the machine's facts, ibwire's view of it, and a real
# NCCL INFO log of examples/allreduce.py over all GPUs. Every step has a time limit.
set -u
OUT=${OUT:-device-out}; mkdir -p "$OUT"
B=${IBWIRE:-target/release/ibwire}
t() { timeout "${T:-60}" "$@"; }
{ uname -a; cat /etc/os-release; ldd --version | head -1; nproc; } > "$OUT/host.txt" 2>&1
t nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
t nvidia-smi topo -m > "$OUT/nvidia-smi-topo-m.txt" 2>&1
t nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
ls -la /sys/class/infiniband /dev/infiniband > "$OUT/ib-ls.txt" 2>&1
t python3 -c 'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version(), torch.cuda.device_count())' > "$OUT/torch.txt" 2>&1
which torchrun all_reduce_perf >> "$OUT/torch.txt" 2>&1
"$B" --version > "$OUT/ibwire-version.txt" 2>&1
/usr/bin/time -v "$B" probe > "$OUT/ibwire-probe.txt" 2> "$OUT/ibwire-probe.time"
"$B" probe --json > "$OUT/ibwire-probe.json" 2>&1
"$B" probe --capture "$OUT/capture" > /dev/null 2>&1 && tar -C "$OUT" -czf "$OUT/capture.tgz" capture && rm -rf "$OUT/capture"
for sub in topo env doctor; do "$B" $sub --help >/dev/null 2>&1 && "$B" $sub > "$OUT/ibwire-$sub.txt" 2>&1; done
n=$(nvidia-smi -L 2>/dev/null | wc -l); [ "$n" -ge 1 ] || n=1
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV,BOOTSTRAP,GRAPH NCCL_NVLS_ENABLE=0 \
  T=300 t torchrun --nproc-per-node="$n" --master-addr=127.0.0.1 --master-port=29555 \
  examples/allreduce.py --size-mb 256 > "$OUT/nccl-allreduce-${n}gpu.log" 2>&1
echo "torchrun rc=$?" >> "$OUT/nccl-allreduce-${n}gpu.log"
ls -la "$OUT"
