#!/usr/bin/env bash
# Byte-identical outputs across a refactor: builds REV (default HEAD) in a scratch worktree and
# the working tree, runs the same commands on the same fixture trees with both, and diffs every
# stdout, stderr and file the hook writes. Exit 0 when all are identical, 1 with the diffs.
# Usage: bench/same-output.sh [REV]
# Trees: story, plain, scaled 12, sriov 16 (examples/gen_tree.rs of the working tree, so both
# binaries read the same files). Commands: probe (text, --json), env (sh, json, --explain), topo
# (text, --json), doctor --json, cdi, launch --dry-run (plain and with PET_*), hook (restricted
# /dev, with a Slurm job id), taskprolog, fleet over the trees' snapshots, verify --from-log over
# the corpus (SKIP_VERIFY=1 leaves it out, for a change that alters verify's rules on purpose).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
W=$(mktemp -d); trap 'git worktree remove --force "$W/base" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
git worktree add -q --detach "$W/base" "$rev"
(cd "$W/base" && CARGO_TARGET_DIR="$W/target-base" cargo build -q)
cargo build -q; cargo build -q --example gen_tree
OLD=$W/target-base/debug/ibwire NEW=$PWD/target/debug/ibwire G=$PWD/target/debug/examples/gen_tree
"$G" story "$W/t/story"; "$G" plain "$W/t/plain"; "$G" scaled 12 0 "$W/t/scaled12"; "$G" sriov 16 "$W/t/sriov16"
run() { # label bin out-dir
  local b=$2 o=$3; mkdir -p "$o"
  for t in story plain scaled12 sriov16; do
    local r=$W/t/$t
    c() { local name=$1; shift; env -i PATH=/usr/bin:/bin HOME="$W" "$@" > "$o/$t.$name.out" 2> "$o/$t.$name.err" || echo "rc=$?" >> "$o/$t.$name.err"; }
    c probe "$b" probe --root "$r" --no-nvidia-smi
    c probe-json "$b" probe --root "$r" --json --no-nvidia-smi
    c env "$b" env --root "$r" --master-addr 198.21.3.5
    c env-json "$b" env --root "$r" --format json
    c env-explain "$b" env --root "$r" --explain
    c topo "$b" topo --root "$r" --no-nvidia-smi
    c topo-json "$b" topo --root "$r" --no-nvidia-smi --json
    c doctor "$b" doctor --root "$r" --json
    c cdi "$b" cdi --root "$r"
    c launch "$b" launch --root "$r" --dry-run -- train.py
    c launch-pet env PET_NNODES=2 PET_NODE_RANK=1 PET_MASTER_ADDR=10.9.8.7 "$b" launch --root "$r" --dry-run -- train.py
    c taskprolog env SLURM_JOB_ID=77 SLURM_JOB_NODELIST="gpu-[01-02]" SLURM_NODEID=0 "$b" taskprolog --root "$r"
    mkdir -p "$o/$t.rootfs/dev"; : > "$o/$t.fstab"; : > "$o/$t.environ"
    c hook env ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS="$o/$t.rootfs" ENROOT_MOUNTS="$o/$t.fstab" ENROOT_ENVIRON="$o/$t.environ" SLURM_JOB_ID=77 "$b" hook --root "$r"
    "$b" probe --root "$r" --json --no-nvidia-smi > "$o/snap-$t.json" 2>/dev/null || true
  done
  (cd "$o" && env -i PATH=/usr/bin:/bin "$b" fleet snap-*.json > fleet.out 2> fleet.err || echo "rc=$?" >> fleet.err)
  # SKIP_VERIFY=1: when verify's rules changed on purpose, compare everything else.
  [ "${SKIP_VERIFY:-0}" = 1 ] && return 0
  for l in tests/fixtures/verify-corpus/*.log; do
    env -i PATH=/usr/bin:/bin "$b" verify --root "$W/t/story" --from-log "$l" > "$o/verify.$(basename "$l").out" 2>&1 || echo "rc=$?" >> "$o/verify.$(basename "$l").out"
  done
}
run old "$OLD" "$W/old"; run new "$NEW" "$W/new"
# launch's kept-log directory is named by the time and pid of the run (ibwire-nccl-<t>-<pid>).
find "$W/old" "$W/new" -type f -exec sed -i -E 's/ibwire-nccl-[0-9]+-[0-9]+/ibwire-nccl-ID/g' {} +
# The rootfs directories the hook fills (hide_sysfs off: empty) are compared too.
if diff -r "$W/old" "$W/new" > "$W/diff"; then
  echo "same-output: $(find "$W/new" -type f | wc -l) outputs identical between $rev and the working tree"
else
  sed "s|$W|DIR|g" "$W/diff" | head -200; echo "same-output: outputs differ between $rev and the working tree"; exit 1
fi
