#!/usr/bin/env bash
# Issue 15 on a real node's sysfs (the device machine: real kernel, GPUs, PCIe tree):
#   1. the kernfs rules the live probe relies on, checked against the kernel (unit test binary);
#   2. the same answers from the previous binary and this one (probe --json, env --explain,
#      topo, the hook's output) on the live system;
#   3. whole-process time of the hook, live, against the previous binary and `true` (interleaved
#      rounds of a bash loop: the device has no hyperfine), and strace counts when present.
# Usage: OUT=dir IBWIRE=new-binary IBWIRE_OLD=old-binary IBWIRE_TEST=unit-test-binary realsys.sh
set -u
OUT=${OUT:-device-out}; mkdir -p "$OUT"
B=${IBWIRE:-$PWD/target/release/ibwire}; O=${IBWIRE_OLD:-}; T=${IBWIRE_TEST:-}
W=$(mktemp -d); : > "$W/environ"
export ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS=$W ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=$W/environ
{
  uname -r; nproc
  echo "netdevs $(ls /sys/class/net | wc -l), rdma $(ls /sys/class/infiniband 2>/dev/null | wc -l), pci functions $(ls /sys/bus/pci/devices | wc -l), gpus $(ls /proc/driver/nvidia/gpus 2>/dev/null | wc -l)"
} > "$OUT/node.txt" 2>&1
[ -n "$T" ] && "$T" --exact probe::sysroot::tests::live_sysfs_links_resolve_as_the_kernel_does --nocapture > "$OUT/kernfs-rules.txt" 2>&1
echo "kernfs rules test rc=$?" >> "$OUT/kernfs-rules.txt"
same=0; differ=0
for args in "probe --json --no-nvidia-smi" "env --explain --master-addr 10.0.0.1" "topo --no-nvidia-smi" "topo --no-nvidia-smi --json" "hook"; do
  name=$(echo "$args" | tr ' ' '_' | tr -d -- '-')
  IBWIRE_DEBUG=1 "$B" $args > "$OUT/new-$name.txt" 2>&1
  [ -n "$O" ] || continue
  IBWIRE_DEBUG=1 "$O" $args > "$OUT/old-$name.txt" 2>&1
  if cmp -s "$OUT/old-$name.txt" "$OUT/new-$name.txt"; then same=$((same+1)); else differ=$((differ+1)); diff "$OUT/old-$name.txt" "$OUT/new-$name.txt" > "$OUT/diff-$name.txt"; fi
done
echo "old vs new outputs: $same identical, $differ differ" > "$OUT/summary.txt"
loop() { # the `true` builtin costs nothing: pass /bin/true for a spawn floor
 local n=$1; shift; local t0 t1; t0=$(date +%s%N); for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1; done; t1=$(date +%s%N); echo $(( (t1 - t0) / n / 1000 )); }
for round in 1 2 3; do
  f=$(loop 200 /bin/true); n=$(loop 200 "$B" hook); v=$(loop 200 "$B" --version)
  o=-; [ -n "$O" ] && o=$(loop 200 "$O" hook)
  pn=$(loop 50 "$B" probe --json --no-nvidia-smi); po=-; [ -n "$O" ] && po=$(loop 50 "$O" probe --json --no-nvidia-smi)
  echo "round $round (µs per run, bash loop): true $f | ibwire --version $v | hook new $n old $o | probe --json new $pn old $po" >> "$OUT/summary.txt"
done
if command -v strace >/dev/null; then
  strace -f -c -o "$OUT/strace-hook-new.txt" "$B" hook >/dev/null 2>&1
  [ -n "$O" ] && strace -f -c -o "$OUT/strace-hook-old.txt" "$O" hook >/dev/null 2>&1
  strace -f -qq -e trace=openat,open,openat2 -o "$W/st" "$B" hook >/dev/null 2>&1; echo "hook files opened (whole process): $(grep -c open "$W/st")" >> "$OUT/summary.txt"
fi
cat "$OUT/node.txt" "$OUT/summary.txt" "$OUT/kernfs-rules.txt"
