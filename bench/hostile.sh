#!/usr/bin/env bash
# The hook over a hostile corpus (issues 13 and 23): whole-process wall time, peak memory and
# stderr bytes of each case (date around the run, which includes env and /usr/bin/time; peak
# RSS from /usr/bin/time), and its exit status outside strict mode; then fleet over a hostile
# directory. Not a test: the tests are tests/it/hostile.rs; this reports the worst case. Needs
# python3 (to write the large inputs) and GNU time. Usage: bench/hostile.sh
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
python3 - "$W" <<'PY'
import os, sys
w = sys.argv[1]
def env(name, text):
    with open(os.path.join(w, name), "w") as f:
        f.write(text)
lines, n, i = [], 0, 0
while n < (4 << 20) - 40:
    l = "V%06d=xx\n" % i; lines.append(l); n += len(l); i += 1
env("environ-4mib", "".join(lines))
lines, n, i = [], 0, 0
while n < (4 << 20) - 40:
    l = "NCCL_V%06d=xx\n" % i; lines.append(l); n += len(l); i += 1
env("environ-4mib-nccl", "".join(lines))
env("environ-plugin", "LD_LIBRARY_PATH=" + ":".join("/d%d" % i for i in range(30000)) + "\nNCCL_NET_PLUGIN=" + ",".join("p%d" % i for i in range(30000)) + "\n")
env("environ-master", "MASTER_ADDR=" + "m" * (3 << 20) + "\n")
env("environ-devices", "MELLANOX_VISIBLE_DEVICES=" + ",".join("d%d" % i for i in range(300000)) + "\n")
# the story node with 100 000 more netdevs (virtual: a directory and a class link each)
root = os.path.join(w, "netdevs")
os.system("cp -a '%s' '%s'" % (os.path.join(w, "story"), root))
for i in range(100000):
    d = "sys/devices/virtual/net/veth%d" % i
    os.makedirs(os.path.join(root, d))
    for k, v in (("ifindex", str(1000 + i)), ("operstate", "up"), ("mtu", "1500"), ("type", "1")):
        with open(os.path.join(root, d, k), "w") as f:
            f.write(v + "\n")
    os.symlink("../../../" + d, os.path.join(root, "sys/class/net/veth%d" % i))
# link loops
loops = os.path.join(w, "loops")
os.system("cp -a '%s' '%s'" % (os.path.join(w, "story"), loops))
for t, l in ((".", "sys/class/net/loop1"), ("loop2b", "sys/class/net/loop2a"), ("loop2a", "sys/class/net/loop2b"), ("../../..", "sys/class/infiniband/up"), (".", "sys/bus/pci/devices/0000:ff:00.0")):
    os.symlink(t, os.path.join(loops, l))
# fleet: 200 sparse 4 MB files and a planted link
fl = os.path.join(w, "fleet")
os.makedirs(fl)
for i in range(200):
    with open(os.path.join(fl, "s%03d.json" % i), "w") as f:
        f.truncate(4 << 20)
os.symlink("/etc/shadow", os.path.join(fl, "evil.yml"))
PY
run() { # name, env assignments...
  local name=$1; shift
  : > "$W/fstab"; cp "${ENVIRON:-/dev/null}" "$W/environ" 2>/dev/null || : > "$W/environ"
  set +e
  local t0; t0=$(date +%s%N)
  env -i PATH=/usr/bin:/bin HOME="$W" ENROOT_ROOTFS="$W/rootfs" ENROOT_MOUNTS="$W/fstab" \
    ENROOT_ENVIRON="$W/environ" ENROOT_RESTRICT_DEV=y "$@" \
    /usr/bin/time -f "%e %M" -o "$W/t" "$B" hook --root "${ROOT:-$W/story}" 2>"$W/err"
  local rc=$? t1; t1=$(date +%s%N); set -e
  read -r _ kb < <(tail -1 "$W/t")
  printf '| %s | %s | %.1f ms | %.1f MiB | %s B |\n' "$name" "$rc" "$(echo "($t1-$t0)/1000000" | bc -l)" "$(echo "$kb/1024" | bc -l)" "$(wc -c < "$W/err")"
}
echo "| case | exit | wall | peak RSS | stderr |"
echo "|---|---|---|---|---|"
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
ENVIRON="$W/environ-4mib" run "4 MiB image environment (381 000 variables)"
ENVIRON="$W/environ-4mib-nccl" run "4 MiB image environment, every name NCCL_*"
ENVIRON="$W/environ-plugin" run "LD_LIBRARY_PATH and NCCL_NET_PLUGIN of 30 000 entries each" SLURM_JOB_NUM_NODES=2
ENVIRON="$W/environ-master" run "3 MB MASTER_ADDR in the image"
ENVIRON="$W/environ-devices" run "300 000 unknown MELLANOX_VISIBLE_DEVICES names"
ROOT="$W/netdevs" run "--root tree with 100 000 more netdevs"
ROOT="$W/loops" run "--root tree with link loops"
echo
echo "| fleet case | exit | wall | peak RSS | stderr |"
echo "|---|---|---|---|---|"
set +e
t0=$(date +%s%N)
/usr/bin/time -f "%e %M" -o "$W/t" "$B" fleet "$W/fleet" >/dev/null 2>"$W/err"
rc=$?; t1=$(date +%s%N); set -e
read -r _ kb < <(tail -1 "$W/t") # GNU time writes "Command exited with non-zero status" first
printf '| %s | %s | %.1f ms | %.1f MiB | %s B |\n' "200 sparse 4 MB files and a link to /etc/shadow" "$rc" "$(echo "($t1-$t0)/1000000" | bc -l)" "$(echo "$kb/1024" | bc -l)" "$(wc -c < "$W/err")"
