#!/usr/bin/env bash
# Run on the `device` machine (one GPU): collect NCCL's real wording for failures ibwire's
# verify must name. Each case is a two-"node" job on one GPU (tests/device/failures.py gives
# every rank its own NCCL_HOSTID). Logs land in $OUT/failures.tgz. Every step has a time limit.
set -u
OUT=${OUT:-device-out}; W=$(mktemp -d); D=$W/failures; mkdir -p "$D"
export NCCL_NVLS_ENABLE=0 PYTHONWARNINGS=ignore NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV,BOOTSTRAP PG_TIMEOUT=40
py=tests/device/failures.py
run() { # name, then env assignments
  local name=$1; shift
  { echo "# case: $name; env: $*"; timeout 75 env "$@" torchrun --nproc-per-node=2 --master-port=$((29500 + RANDOM % 1000)) "$py"; echo "# rc=$?"; } > "$D/$name.log" 2>&1
}
python3 -c 'import torch;print(torch.__version__, torch.cuda.nccl.version())' > "$D/versions.txt" 2>&1
ls -la /dev/infiniband /sys/class/infiniband >> "$D/versions.txt" 2>&1
ldconfig -p | grep -i ibverbs >> "$D/versions.txt" 2>&1
run socket-2node IBWIRE_CASE=ok
run ifname-missing IBWIRE_CASE=ok NCCL_SOCKET_IFNAME==nonexist0
run net-ib-forced IBWIRE_CASE=ok NCCL_NET=IB
run ib-hca-prefix IBWIRE_CASE=ok NCCL_IB_HCA=mlx5
run remote-died IBWIRE_CASE=die
run ibverbs-lib-missing IBWIRE_CASE=ok NCCL_IBVERBS_LIB=/nonexistent/libibverbs.so.1
run net-plugin-missing IBWIRE_CASE=ok NCCL_NET_PLUGIN=nonexistent-plugin NCCL_NET=nonexistent
mkdir -p "$OUT"; tar -C "$W" -czf "$OUT/failures.tgz" failures; rm -rf "$W"
ls -la "$OUT"
