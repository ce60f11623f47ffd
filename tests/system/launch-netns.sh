#!/usr/bin/env bash
# System test (root): `ibwire launch -- examples/allreduce.py` on two "nodes" (network
# namespaces) with real torchrun (CPU, gloo) and a fake Slurm environment per node. Checks the
# all-reduce result and that the decided bootstrap interface was eno8303; then that a pinned
# wrong interface fails fast with ibwire's own message. Every run is under `timeout`.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${IBWIRE:?}; VENV=$(tests/system/setup-torch.sh)
. tests/system/netns-lib.sh
W=$(mktemp -d /tmp/ibwire-launch-XXXX)
trap 'netns_down; rm -rf "$W"' EXIT
netns_up
for n in 1 2; do
  in_ns $n node$n env PATH="$VENV/bin:$PATH" SLURM_JOB_NODELIST='node[1-2]' SLURM_NODEID=$((n-1)) \
    SLURM_JOB_ID=777 PYTHONWARNINGS=ignore PG_TIMEOUT=60 \
    timeout 150 "$B" launch --explain -- examples/allreduce.py > "$W/n$n.out" 2> "$W/n$n.err" &
done
wait
for n in 1 2; do
  grep -q "allreduce_sum=3.0 expected=3.0" "$W/n$n.out" || { echo "FAIL: node$n"; cat "$W/n$n.out" "$W/n$n.err"; exit 1; }
  grep -q "^GLOO_SOCKET_IFNAME=eno8303$" "$W/n$n.err" || { echo "FAIL: node$n did not choose eno8303"; cat "$W/n$n.err"; exit 1; }
  grep -q "routes to the master node1 (10.77.0.1)" "$W/n$n.err" || { echo "FAIL: node$n reason"; cat "$W/n$n.err"; exit 1; }
done
# The dry run names the port derived from the job id and the node rank.
line=$(in_ns 2 node2 env SLURM_JOB_NODELIST='node[1-2]' SLURM_NODEID=1 SLURM_JOB_ID=777 "$B" launch --dry-run -- x.py)
case "$line" in *"--node-rank=1 --master-addr=10.77.0.1 --master-port=20777 x.py") ;; *) echo "FAIL: dry run: $line"; exit 1;; esac
# A pinned interface that does not reach the master: refused at once, nothing started.
start=$(date +%s)
set +e
in_ns 2 node2 env PATH="$VENV/bin:$PATH" SLURM_JOB_NODELIST='node[1-2]' SLURM_NODEID=1 SLURM_JOB_ID=778 \
  timeout 60 "$B" launch --bootstrap-if enp1s0f1 -- examples/allreduce.py > "$W/bad.out" 2> "$W/bad.err"
rc=$?
set -e
took=$(( $(date +%s) - start ))
[ $rc = 1 ] || { echo "FAIL: wrong interface rc=$rc"; cat "$W/bad.err"; exit 1; }
grep -q "ibwire launch: error: refused: NCCL_SOCKET_IFNAME: configured bootstrap interface enp1s0f1 does not route to the master node1 (10.77.0.1)" "$W/bad.err" \
  || { echo "FAIL: message"; cat "$W/bad.err"; exit 1; }
[ $took -lt 10 ] || { echo "FAIL: took ${took}s"; exit 1; }
echo "ok: 2-node torchrun over eno8303 gave allreduce_sum=3.0 on both; wrong interface refused in ${took}s"
