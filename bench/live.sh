#!/usr/bin/env bash
# The hook as it runs on a node: root `/`, the kernel resolving every path. A real-sized fixture
# tree is bind-mounted over /sys, /proc and /dev/infiniband in a private mount namespace, so the
# hook reads it as the live system (no --root, no in-tree symlink walk), interleaved with the
# stock hook's stand-in (bench/stock-99-mellanox.sh) on the same mounted tree and with `true`
# (bench/interleave.py: wall and CPU). Needs root (unshare -m).
# Usage: bench/live.sh [story|sriov N]   Prints one markdown row per case.
#        bench/live.sh --readme            Both the story node and sriov 512, written between
#                                          docs/performance.md's `live:begin`/`live:end`.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) == 0 ]] || { echo "bench/live.sh: needs root (unshare -m, bind mounts)" >&2; exit 2; }
# shellcheck source=bench/build.sh
source bench/build.sh
if [[ ${1:-} == --readme ]]; then
  bench_binary
  rows=$( { echo "| case | wall median (min–max) | CPU median | files opened | note |"; echo "|---|---|---|---|---|"
    bash "$0" story; bash "$0" sriov 512; } )
  echo "$rows"
  python3 - "$rows" "$(git rev-parse --short HEAD)" "$(date -u +%F)" "$BUILD" <<'PY'
import sys
p = "docs/performance.md"; s = open(p).read()
b, e = "<!-- live:begin (bench/live.sh --readme) -->", "<!-- live:end -->"
i, j = s.index(b) + len(b), s.index(e)
open(p, "w").write(s[:i] + f"\nMeasured at {sys.argv[2]} on {sys.argv[3]} (bench/live.sh --readme), {sys.argv[4]}.\n\n" + sys.argv[1] + "\n" + s[j:])
PY
  exit 0
fi
bench_binary
cargo build --release -q --example gen_tree
W=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d); trap 'rm -rf "$W"' EXIT
kind=${1:-story}
if [[ $kind == story ]]; then target/release/examples/gen_tree story "$W/t"; else target/release/examples/gen_tree sriov "$2" "$W/t"; fi
: > "$W/environ"
mkdir -p "$W/t/dev/infiniband"
export B W kind
unshare -m --propagation private bash -euo pipefail -c '
  mount --bind "$W/t/sys" /sys
  mkdir -p /dev/infiniband && mount --bind "$W/t/dev/infiniband" /dev/infiniband
  # /proc last: hyperfine and the shell need nothing from it once started.
  mount --bind "$W/t/proc" /proc
  mkdir -p "$W/rootfs/sys/class/infiniband" "$W/rootfs/sys/class/infiniband_verbs" "$W/rootfs/dev"
  export ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS=$W/rootfs ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=$W/environ
  runs=50; [[ $kind == story ]] || runs=5
  python3 bench/interleave.py --runs $runs --warmup 2 --json "$W/h.json" --fresh "$W/environ" true true version "$B --version" hook "$B hook" \
    stock "MELLANOX_VISIBLE_DEVICES=all SYSFS=/sys $PWD/bench/stock-99-mellanox.sh" >/dev/null
  : > "$W/environ"
  strace -f -qq -e trace=openat,open,openat2 -o "$W/st" "$B" hook >/dev/null 2>&1 || true
  grep -c open "$W/st" > "$W/opens"
'
python3 - "$W/h.json" "$(cat "$W/opens")" "$kind ${2:-}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
t = sys.argv[3].strip()
f = lambda k: f"{r[k]['median_ms']:.2f} ms ({r[k]['min_ms']:.2f}–{r[k]['max_ms']:.2f}) | {r[k]['cpu_median_ms']:.2f} ms"
print(f"| hook, live ({t} tree mounted as /sys, /proc) | {f('hook')} | {sys.argv[2]} | same run: `true` {r['true']['median_ms']:.2f} ms, `ibwire --version` {r['version']['median_ms']:.2f} ms |")
print(f"| stock stand-in, live ({t} tree) | {f('stock')} | | CPU {r['stock']['cpu_median_ms']/r['hook']['cpu_median_ms']:.1f}× the hook's |")
PY
