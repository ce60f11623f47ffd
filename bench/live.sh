#!/usr/bin/env bash
# The hook as it runs on a node: root `/`, the kernel resolving every path. A real-sized fixture
# tree is bind-mounted over /sys, /proc and /dev/infiniband in a private mount namespace, so the
# hook reads it as the live system (no --root, no in-tree symlink walk). Needs root (unshare -m)
# and hyperfine. Usage: bench/live.sh [story|scaled N]   Prints one markdown row per case.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) == 0 ]] || { echo "bench/live.sh: needs root (unshare -m, bind mounts)" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "bench: hyperfine not found (apt-get install hyperfine)" >&2; exit 2; }
cargo build --release -q
cargo build --release -q --example gen_tree
B=$PWD/target/release/ibwire
W=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d); trap 'rm -rf "$W"' EXIT
kind=${1:-story}
if [[ $kind == story ]]; then target/release/examples/gen_tree story "$W/t"; else target/release/examples/gen_tree scaled "$2" 0 "$W/t"; fi
: > "$W/environ"
mkdir -p "$W/t/dev/infiniband"
export B W kind
unshare -m --propagation private bash -euo pipefail -c '
  mount --bind "$W/t/sys" /sys
  mkdir -p /dev/infiniband && mount --bind "$W/t/dev/infiniband" /dev/infiniband
  # /proc last: hyperfine and the shell need nothing from it once started.
  mount --bind "$W/t/proc" /proc
  export ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS=$W ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=$W/environ
  hyperfine -N -w 10 -r 200 --export-json "$W/h.json" true "$B --version" "$B hook" >/dev/null 2>&1
  # The stock discovery on the same mounted tree, as it runs on a node (SYSFS=/sys); fewer runs:
  # on the 512-function tree one takes seconds.
  hyperfine -N -w 1 -r 10 --export-json "$W/s.json" \
    "env MELLANOX_VISIBLE_DEVICES=all SYSFS=/sys $PWD/bench/stock-mellanox-discovery.sh" >/dev/null 2>&1
  strace -f -qq -e trace=openat,open,openat2 -o "$W/st" "$B" hook >/dev/null 2>&1 || true
  echo "$(grep -c open "$W/st")" > "$W/opens"
'
python3 - "$W/h.json" "$(cat "$W/opens")" "$kind ${2:-}" "$W/s.json" <<'PY'
import json, sys
floor, version, hook = json.load(open(sys.argv[1]))["results"]
stock = json.load(open(sys.argv[4]))["results"][0]
ms = lambda r, k: r[k] * 1000
t = sys.argv[3].strip()
print(f"| hook, live ({t} tree mounted as /sys, /proc) | {ms(hook,'median'):.2f} ms | {ms(hook,'min'):.2f} ms | {ms(hook,'max'):.2f} ms | {sys.argv[2]} | same run: `true` {ms(floor,'median'):.2f} ms, `ibwire --version` {ms(version,'median'):.2f} ms |")
print(f"| stock discovery, live ({t} tree) | {ms(stock,'median'):.2f} ms | {ms(stock,'min'):.2f} ms | {ms(stock,'max'):.2f} ms | | hook {stock['median']/hook['median']:.1f}× faster |")
PY
