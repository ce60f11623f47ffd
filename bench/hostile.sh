#!/usr/bin/env bash
# The hook over a hostile corpus (issue 13): whole-process wall time and peak memory
# of each case (date around the run, which includes env and /usr/bin/time; peak RSS from
# /usr/bin/time), and its exit status outside strict mode. Not a test: the tests
# are tests/hostile.rs; this reports the worst case. Usage: bench/hostile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q; cargo build --release -q --example gen_tree
B=$PWD/target/release/ibwire
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
target/release/examples/gen_tree story "$W/story"
mkdir -p "$W/rootfs/dev"; mkfifo "$W/fifo.yaml"
printf 'hook:\n  strict: false\n' > "$W/loose.yaml"; chmod 666 "$W/loose.yaml"
{ echo 'hca:'; echo '  include: &a [x, x, x, x, x, x, x, x]'; for i in $(seq 30); do echo '  exclude: [*a, *a, *a, *a, *a, *a, *a, *a]'; done; } > "$W/bomb.yaml"
python3 -c "print('hca: {include: ' + '['*200000 + ']'*200000 + '}')" > "$W/deep.yaml"
head -c 3000000 /dev/urandom > "$W/random.yaml"
python3 -c "print('n[' + ','.join(['0-99999']*2000) + ']', end='')" > "$W/hostlist"
printf 'PATH=/usr/bin\nLABEL=caf\xe9\n' > "$W/environ-bad"
run() { # name, env assignments...
  local name=$1; shift
  : > "$W/fstab"; cp "${ENVIRON:-/dev/null}" "$W/environ" 2>/dev/null || : > "$W/environ"
  set +e
  local t0; t0=$(date +%s%N)
  env -i PATH=/usr/bin:/bin HOME="$W" ENROOT_ROOTFS="$W/rootfs" ENROOT_MOUNTS="$W/fstab" \
    ENROOT_ENVIRON="$W/environ" ENROOT_RESTRICT_DEV=y "$@" \
    /usr/bin/time -f "%e %M" -o "$W/t" "$B" hook --root "$W/story" 2>/dev/null
  local rc=$? t1; t1=$(date +%s%N); set -e
  read -r _ kb < "$W/t"
  printf '| %s | %s | %.1f ms | %.1f MiB |\n' "$name" "$rc" "$(echo "($t1-$t0)/1000000" | bc -l)" "$(echo "$kb/1024" | bc -l)"
}
echo "| case | exit | wall | peak RSS |"
echo "|---|---|---|---|"
run "baseline (story node)"
run "FIFO as IBWIRE_CONFIG" IBWIRE_CONFIG="$W/fifo.yaml"
run "/dev/zero as IBWIRE_CONFIG" IBWIRE_CONFIG=/dev/zero
run "world-writable config" IBWIRE_CONFIG="$W/loose.yaml"
run "YAML alias bomb config" IBWIRE_CONFIG="$W/bomb.yaml"
run "YAML nested 200 000 deep" IBWIRE_CONFIG="$W/deep.yaml"
run "3 MB of random bytes as config" IBWIRE_CONFIG="$W/random.yaml"
run "hostlist of 2 000 ranges in one bracket" SLURM_JOB_NODELIST="$(cat "$W/hostlist")"
run "unparsable SLURM_JOB_ID" SLURM_JOB_NODELIST="gpu-[001-002]" SLURM_JOB_ID="x1"
ENVIRON="$W/environ-bad" run "non-UTF-8 byte in the image environment"
run "IBWIRE_ROOT set empty" IBWIRE_ROOT=
run "HOME=/dev/null" HOME=/dev/null
run "hostile device selection" IBWIRE_VISIBLE_DEVICES='../../etc,$(reboot)'
