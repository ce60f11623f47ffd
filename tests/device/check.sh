#!/usr/bin/env bash
# Second pass on a GPU machine: the live `ibwire verify` verdict end to end, and whole-process
# timings of `ibwire topo` (with and without nvidia-smi) against `nvidia-smi topo -m`.
set -u
OUT=${OUT:-device-out}; mkdir -p "$OUT"
B=${IBWIRE:-$PWD/target/release/ibwire}
export NCCL_NVLS_ENABLE=0 PYTHONWARNINGS=ignore
timeout 400 "$B" verify --size-mb 1024 > "$OUT/verify-live.txt" 2>&1; echo "rc=$?" >> "$OUT/verify-live.txt"
timeout 400 env CUDA_VISIBLE_DEVICES=0 "$B" verify > "$OUT/verify-live-1gpu.txt" 2>&1; echo "rc=$?" >> "$OUT/verify-live-1gpu.txt"
python3 - "$B" > "$OUT/topo-timing.txt" <<'PY'
import subprocess, sys, time, statistics
b = sys.argv[1]
def med(cmd, n=30):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1000
a = med([b, "topo", "--no-nvidia-smi"]); c = med([b, "topo"]); n = med(["nvidia-smi", "topo", "-m"])
print(f"ibwire topo --no-nvidia-smi median {a:.2f} ms; ibwire topo (with nvidia-smi) {c:.2f} ms; nvidia-smi topo -m {n:.2f} ms; ratio {n/a:.1f}x")
PY
"$B" topo > "$OUT/ibwire-topo.txt" 2>&1
cat "$OUT"/*.txt
