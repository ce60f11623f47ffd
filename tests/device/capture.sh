#!/usr/bin/env bash
# Run on a GPU machine (the `device` tool) to collect real data for fixtures and checks.
# Writes into $OUT (default ./device-out) and packs everything into $OUT/device.tgz:
#   the machine's facts (nvidia-smi, topo -m, torch/NCCL versions), ibwire probe/capture/topo/
#   env/doctor there, `ibwire verify` on one GPU and on all GPUs (NCCL logs kept), and a real
#   `ibwire launch` of examples/allreduce.py over all GPUs. Every step has a time limit.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the device machines require.
set -u
OUT=${OUT:-device-out}; W=$(mktemp -d); D=$W/device; mkdir -p "$D"
B=${IBWIRE:-$PWD/target/release/ibwire}
export NCCL_NVLS_ENABLE=0 PYTHONWARNINGS=ignore
t() { timeout "${T:-60}" "$@"; }
{ uname -a; cat /etc/os-release; ldd --version | head -1; nproc; } > "$D/host.txt" 2>&1
t nvidia-smi > "$D/nvidia-smi.txt" 2>&1
t nvidia-smi topo -m > "$D/nvidia-smi-topo-m.txt" 2>&1
t nvidia-smi nvlink -s > "$D/nvidia-smi-nvlink-s.txt" 2>&1
ls -la /sys/class/infiniband /dev/infiniband > "$D/ib-ls.txt" 2>&1
t python3 -c 'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version(), torch.cuda.device_count())' > "$D/torch.txt" 2>&1
which torchrun all_reduce_perf >> "$D/torch.txt" 2>&1
n=$(nvidia-smi -L 2>/dev/null | wc -l); [ "$n" -ge 1 ] || n=1
echo "$n" > "$D/gpus.txt"
"$B" probe > "$D/ibwire-probe.txt" 2>&1
"$B" probe --json > "$D/ibwire-probe.json" 2>&1
"$B" probe --capture "$D/capture" > /dev/null 2>&1 && tar -C "$D" -czf "$D/capture.tgz" capture && rm -rf "$D/capture"
"$B" topo > "$D/ibwire-topo.txt" 2>&1
"$B" topo --json > "$D/ibwire-topo.json" 2>&1
"$B" env --explain > "$D/ibwire-env.txt" 2>&1
"$B" doctor > "$D/ibwire-doctor.txt" 2>&1
for i in 1 2 3 4 5; do /usr/bin/time -f "%e s" "$B" topo > /dev/null 2>> "$D/ibwire-topo.time"; done
for i in 1 2 3 4 5; do /usr/bin/time -f "%e s" nvidia-smi topo -m > /dev/null 2>> "$D/nvidia-smi-topo.time"; done
T=400 t env CUDA_VISIBLE_DEVICES=0 "$B" verify --log "$D/verify-1gpu-nccl.log" > "$D/verify-1gpu.txt" 2>&1; echo "rc=$?" >> "$D/verify-1gpu.txt"
T=400 t "$B" verify --json --size-mb 1024 --log "$D/verify-${n}gpu-nccl.log" > "$D/verify-${n}gpu.json" 2>&1; echo "rc=$?" >> "$D/verify-${n}gpu.rc"
T=400 t "$B" verify --size-mb 1024 --from-log "$D/verify-${n}gpu-nccl.log" > "$D/verify-${n}gpu.txt" 2>&1
"$B" launch --dry-run -- examples/allreduce.py --size-mb 1024 > "$D/launch-dry-run.txt" 2>&1
T=400 t "$B" launch --explain -- examples/allreduce.py --size-mb 1024 --iters 50 > "$D/launch-${n}gpu.txt" 2>&1; echo "rc=$?" >> "$D/launch-${n}gpu.txt"
if command -v all_reduce_perf > /dev/null; then
  T=300 t all_reduce_perf -b 8M -e 4G -f 2 -g "$n" > "$D/all_reduce_perf.txt" 2>&1
fi
mkdir -p "$OUT"; tar -C "$W" -czf "$OUT/device.tgz" device; rm -rf "$W"
ls -la "$OUT"
