#!/usr/bin/env bash
# Whole-process timings and files opened by ibwire on real-sized node trees (a benchmark, not a
# test). Usage: bench/run.sh [probe|env|topo|hook|launch|all]   (default: all)
# Needs hyperfine (Debian: apt-get install hyperfine); strace for the files-opened column.
# Prints one markdown row per case: median/min/max wall time, openat calls of the whole process.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
command -v hyperfine >/dev/null || { echo "bench: hyperfine not found (apt-get install hyperfine)" >&2; exit 2; }
cargo build --release -q
cargo build --release -q --example gen_tree
B=$PWD/target/release/ibwire
G=$PWD/target/release/examples/gen_tree
# Trees live in memory (/dev/shm) when it is there, as sysfs does: on a disk filesystem every
# long symlink costs a block lookup that kernfs does not have.
W=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d); trap 'rm -rf "$W"' EXIT
# The story node has real-sized tables (128 P_Keys and 8 GIDs a port, counters, 45 netdevs);
# scaled N adds N-9 SR-IOV VFs of the eight PFs, each with the same tables.
"$G" story "$W/story"
"$G" scaled 12 0 "$W/n12"
"$G" scaled 64 0 "$W/n64"
"$G" scaled 512 0 "$W/n512"
opens() { # command... → openat calls of the whole process (all threads)
  command -v strace >/dev/null || { echo "-"; return; }
  env "$@" >/dev/null 2>&1 </dev/null || true
  strace -f -qq -e trace=openat,open,openat2 -o "$W/st" env "$@" >/dev/null 2>&1 </dev/null || true
  grep -c 'open' "$W/st" | awk '{print $1 - 0}'
}
show() { sed "s|$B|ibwire|g; s|$W|DIR|g; s|$PWD/||g"; }
row() { # name, command...
  local name=$1; shift
  hyperfine -N -w 5 -r 50 --export-json "$W/h.json" "$*" >/dev/null 2>&1
  local o; o=$(opens $*)
  python3 - "$name" "$W/h.json" "$o" "$(echo "$*" | show)" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))["results"][0]
print(f"| {sys.argv[1]} | {r['median']*1000:.2f} ms | {r['min']*1000:.2f} ms | {r['max']*1000:.2f} ms | {sys.argv[3]} | `{sys.argv[4]}` |")
PY
}
pair() { # name, command A, command B: one hyperfine run, A/B ratio of medians
  hyperfine -N -w 5 -r 50 --export-json "$W/p.json" "$2" "$3" >/dev/null 2>&1
  python3 - "$1" "$W/p.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[2]))["results"]
print(f"| {sys.argv[1]} | {a['median']*1000:.2f} ms vs {b['median']*1000:.2f} ms | {b['median']/a['median']:.1f}× | | | |")
PY
}
echo "| case | median | min | max | files opened | command |"
echo "|---|---|---|---|---|---|"
row "spawn floor" true
if [[ $what == probe || $what == all ]]; then
  row "probe --json, story node (8 GPU / 9 RDMA / 45 netdevs)" "$B probe --root $W/story --json"
  row "probe --json, 64 RDMA functions" "$B probe --root $W/n64 --json"
  row "probe --json, 512 RDMA functions (SR-IOV)" "$B probe --root $W/n512 --json"
  row "probe --all --json, story node" "$B probe --root $W/story --json --all"
fi
for extra in bench/cases/*.sh; do
  [[ -e $extra ]] || continue
  case_name=$(basename "$extra" .sh)
  # shellcheck source=/dev/null
  if [[ $what == all || $what == "$case_name" ]]; then source "$extra"; fi
done
