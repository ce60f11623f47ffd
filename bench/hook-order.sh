#!/usr/bin/env bash
# The static binary's code layout for the hook (packaging/hook.ld, which build.rs hands to the
# linker for musl targets): the functions a hook run executes, placed in one output section,
# `.text.hook`, ahead of the rest of `.text`, and after them those `probe --json` adds. Before it, the hook's ~520 functions lay across 46
# of the binary's 64 KiB fault-around windows; each first touch of one is a page fault at
# every container start (docs/performance.md has the measurements).
#
# Usage: bench/hook-order.sh            Regenerate packaging/hook.ld from callgrind runs of the
#                                       hook (needs valgrind; as root the live runs are added).
#        bench/hook-order.sh --check [N]
#                                       Fail when fewer than N % (default 90) of the functions a
#                                       hook run executes lie in `.text.hook` (CI: packages.sh;
#                                       IBWIRE_ORDER_VERBOSE=1 lists the functions outside).
#        bench/hook-order.sh --compare  The hook with and without the layout, interleaved
#                                       (CPU, wall, page faults); builds both.
# IBWIRE=path measures that binary instead of building one (bench/build.sh).
#
# What is run: the hook on the story node (examples/gen_tree.rs), through --root and, as root,
# live (the tree mounted over /sys, as bench/live.sh does), each into an image without
# libibverbs (the warning's path) and one with it and a Slurm job's environment.
#
# The patterns are the executed functions' mangled names without what changes from build to
# build: the legacy hash (`17h<16 hex>E`), a v0 crate disambiguator (`Cs<base 62>_`), thin
# LTO's `.llvm.<n>` suffix. So the file holds across compilers and dependency updates, at the
# cost of taking every instance of a generic function the hook runs one instance of (~1 MiB,
# not the ~470 KiB executed). Functions added to the hook since the file was
# made are simply laid out as before: --check says when too many are. The section holds the
# hook's ~1 MiB of patterns, then what probe adds (~1.3 MiB in all).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "bench/hook-order.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
mode=${1:-gen}
# shellcheck source=bench/build.sh
source bench/build.sh
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

# Run the shell command $1 with the story tree ($W/t) as /sys and /dev/infiniband, in a private
# mount namespace, as bench/live.sh does (root only).
as_live() {
  unshare -m --propagation private bash -euo pipefail -c "
    mount --bind '$W/t/sys' /sys
    mkdir -p /dev/infiniband && mount --bind '$W/t/dev/infiniband' /dev/infiniband
    $1"
}

# The function names (mangled) in callgrind outputs $@, one per line: callgrind names a function
# once, at its first mention (`fn=(id) name`, `cfn=(id) name`).
fn_names() {
  cat "$@" | sed -n -E 's/^c?fn=\([0-9]+\) (.+)$/\1/p' | sort -u
}

# The functions (mangled, one per line) that the hook runs of binary $1, into $2.
profile() {
  local b=$1 out=$2
  cargo build --release -q --example gen_tree
  target/release/examples/gen_tree story "$W/t" > /dev/null
  mkdir -p "$W/t/dev/infiniband" "$W/img0/dev" "$W/img1/dev" "$W/img1/usr/lib/x86_64-linux-gnu/libibverbs" \
    "$W/img1/usr/lib/aarch64-linux-gnu/libibverbs"
  for d in x86_64 aarch64; do
    : > "$W/img1/usr/lib/$d-linux-gnu/libibverbs.so.1"; : > "$W/img1/usr/lib/$d-linux-gnu/libibverbs/libmlx5-rdmav34.so"
  done
  local slurm="SLURM_JOB_ID=4242 SLURM_NNODES=2 SLURM_JOB_NUM_NODES=2 SLURM_JOB_NODELIST=127.0.0.1 MASTER_ADDR=127.0.0.1"
  export B W slurm
  local runs=("--root $W/t|img0|" "--root $W/t|img1|$slurm")
  if [[ $(id -u) == 0 ]]; then runs+=("|img0|" "|img1|$slurm"); fi
  local i=0
  for r in "${runs[@]}"; do
    IFS='|' read -r args img envs <<< "$r"
    i=$((i + 1))
    : > "$W/environ"; : > "$W/fstab"
    local cmd="env -i PATH=/usr/bin:/bin HOME=$W ENROOT_ROOTFS=$W/$img ENROOT_MOUNTS=$W/fstab ENROOT_ENVIRON=$W/environ ENROOT_RESTRICT_DEV=y MELLANOX_VISIBLE_DEVICES=all $envs valgrind --tool=callgrind --demangle=no --callgrind-out-file=$W/cg.$i $b hook $args"
    if [[ -z $args ]]; then
      as_live "$cmd" > "$W/log.$i" 2>&1 || true
    else
      $cmd > "$W/log.$i" 2>&1 || true
    fi
    # The run decided (what enroot's environ file gets), or its profile is not the hook's.
    grep -q '^NCCL_IB_HCA=' "$W/environ" || { cat "$W/log.$i" >&2; echo "bench/hook-order.sh: hook run $i ($r) wrote no NCCL_IB_HCA" >&2; exit 1; }
  done
  fn_names "$W"/cg.* > "$out"
  # A hook run executes ~500 functions: far fewer means a run failed, not a small hook.
  (( $(wc -l < "$out") >= 100 )) || { echo "bench/hook-order.sh: the callgrind runs of $b named $(wc -l < "$out") functions; a hook run failed under valgrind" >&2; exit 1; }
}

# The functions `probe --json` runs of binary $1 (story node, --root and, as root, live), into
# $2; after profile (it reuses the tree).
profile_probe() {
  local b=$1 out=$2
  rm -f "$W"/cp.*
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$W/cp.1" "$b" probe --json --root "$W/t" > /dev/null 2>&1
  if [[ $(id -u) == 0 ]]; then
    as_live "valgrind --tool=callgrind --demangle=no --callgrind-out-file='$W/cp.2' '$b' probe --json" > /dev/null 2>&1
  fi
  fn_names "$W"/cp.* > "$out"
}

# The section's bounds and the symbols of binary $1: "start end" then "name addr size" lines.
layout() {
  readelf -SW "$1" | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.search(r"\]\s+\.text\.hook\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)
    if m:
        print(int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16))
        break
else:
    print("0 0")'
  nm -S "$1" | awk 'NF == 4 && $3 ~ /^[tTwW]$/ {print $4, $1, $2}'
}

case $mode in
gen)
  bench_binary
  profile "$B" "$W/fns"
  profile_probe "$B" "$W/pfns"
  at=$(git rev-parse --short HEAD); git diff --quiet HEAD -- src || at="$at with uncommitted changes in src/"
  python3 - "$W/fns" "$at" "$(rustc --version)" "$BUILD" "$W/pfns" > packaging/hook.ld <<'PY'
import re, sys
def patterns(path):
    pats = set()
    for f in open(path):
        f = re.sub(r"'\d+$", "", f.strip())          # callgrind's recursion marks
        if not f or f.startswith("0x") or f.startswith("("):
            continue
        f = re.sub(r"\.llvm\.\d+$", ".llvm.*", f)
        m = re.match(r"^(_ZN.*17h)[0-9a-f]{16}E(\.llvm\.\*)?$", f)
        if m:
            p = m.group(1) + "*"
        elif f.startswith("_R"):
            p = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", f)
        else:
            p = f
        # Only what a linker script's wildcard pattern can say unquoted.
        if re.fullmatch(r"[A-Za-z0-9_$.*]+", p):
            pats.add(p)
    return pats
pats = patterns(sys.argv[1])
probe_only = patterns(sys.argv[5]) - pats
print(f"""/* packaging/hook.ld: generated by bench/hook-order.sh at {sys.argv[2]} ({sys.argv[3]}, {sys.argv[4]}).
   Do not edit: run bench/hook-order.sh again after changing the hook's code (bench/hook-order.sh
   --check, run by tests/system/packages.sh, says when too little of it is covered).

   The functions a hook run executes, as patterns of their sections' names (one section per
   function), gathered into .text.hook ahead of .text: the hook's code lies together instead
   of spread over the whole .text, so a container start takes fewer page faults. Then, in the
   same section, what `probe --json` executes besides. INSERT BEFORE keeps the linker's default
   layout for everything else. build.rs passes this file for musl targets (the static binary the
   packages ship). */
SECTIONS
{{
  .text.hook :
  {{""")
# `.text.NAME`, and `.text.unlikely.NAME` for a function marked cold (Vec's grow_one and kin).
for p in sorted(pats):
    print(f"    *(.text.{p} .text.unlikely.{p})")
# Then what `probe --json` runs besides (a section goes to the first pattern it matches, so the
# hook's stay together above).
print("    /* probe --json, beyond the hook */")
for p in sorted(probe_only):
    print(f"    *(.text.{p} .text.unlikely.{p})")
print("""  }
}
INSERT BEFORE .text;""")
PY
  echo "packaging/hook.ld: $(grep -c '^    \*(' packaging/hook.ld) patterns" >&2
  ;;
--check)
  min=${2:-90}
  bench_binary
  profile "$B" "$W/fns"
  layout "$B" > "$W/layout"
  python3 - "$W/fns" "$W/layout" "$min" "$B" <<'PY'
import os, re, sys
fns = {re.sub(r"'\d+$", "", l.strip()) for l in open(sys.argv[1])}
lines = open(sys.argv[2]).read().splitlines()
lo, hi = map(int, lines[0].split())
if hi == 0:
    sys.exit(f"bench/hook-order.sh: {sys.argv[4]} has no .text.hook section (built without packaging/hook.ld?)")
sym = {}
for l in lines[1:]:
    n, a, s = l.split()
    sym[n] = (int(a, 16), int(s, 16))
ran = [f for f in fns if f in sym]
inside = [f for f in ran if lo <= sym[f][0] < hi]
windows = lambda fs: len({x >> 16 for f in fs for x in range(sym[f][0], sym[f][0] + max(sym[f][1], 1), 4096)})
pct = 100 * len(inside) / max(len(ran), 1)
print(f"hook layout: {len(inside)} of the {len(ran)} functions a hook run executes lie in .text.hook ({pct:.0f} %); "
      f"they span {windows(ran)} 64 KiB windows (.text.hook is {(hi - lo) >> 10} KiB)")
if os.environ.get("IBWIRE_ORDER_VERBOSE"):
    for f in sorted(set(ran) - set(inside)):
        print("  outside:", f, file=sys.stderr)
if pct < float(sys.argv[3]):
    sys.exit(f"FAIL: under {sys.argv[3]} %: run bench/hook-order.sh to regenerate packaging/hook.ld")
PY
  ;;
--compare)
  [[ $(id -u) == 0 ]] || { echo "bench/hook-order.sh --compare: needs root (the live runs)" >&2; exit 2; }
  t=$(uname -m)-unknown-linux-musl
  cargo build --release --locked -q --target "$t"
  cp "target/$t/release/ibwire" "$W/ordered"
  IBWIRE_NO_HOOK_ORDER=1 cargo build --release --locked -q --target "$t"
  cp "target/$t/release/ibwire" "$W/default"
  cargo build --release --locked -q --target "$t"   # leave the ordered build in target/
  cargo build --release -q --example gen_tree
  target/release/examples/gen_tree story "$W/t" > /dev/null
  mkdir -p "$W/t/dev/infiniband" "$W/rootfs/dev"
  export W
  as_live '
    export ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS=$W/rootfs ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=$W/environ
    for b in default ordered; do
      : > "$W/environ"
      printf "%s: page faults %s\n" "$b" "$(perf stat -x, -e page-faults "$W/$b" hook 2>&1 >/dev/null | grep -m1 page-faults | cut -d, -f1 || echo "? (no perf)")"
    done
    python3 bench/interleave.py --runs "${RUNS:-300}" --warmup 5 --fresh "$W/environ" \
      default "$W/default hook" ordered "$W/ordered hook"'
  ;;
*)
  echo "usage: bench/hook-order.sh [--check [N] | --compare]" >&2; exit 2 ;;
esac
