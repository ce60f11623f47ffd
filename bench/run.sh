#!/usr/bin/env bash
# Whole-process timings of ibwire on generated node trees (a benchmark, not a test).
# Usage: bench/run.sh [probe|env|topo|hook|launch|all]   (default: all)
# Needs hyperfine (Debian: apt-get install hyperfine). Prints one markdown row per case.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
command -v hyperfine >/dev/null || { echo "bench: hyperfine not found (apt-get install hyperfine)" >&2; exit 2; }
cargo build --release -q
cargo build --release -q --example gen_tree
B=$PWD/target/release/ibwire
G=$PWD/target/release/examples/gen_tree
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
"$G" story "$W/story"
"$G" scaled 9 30 "$W/n9"
"$G" scaled 12 30 "$W/n12"
"$G" scaled 64 30 "$W/n64"
"$G" scaled 512 30 "$W/n512"
row() { # name, command...
  local name=$1; shift
  hyperfine -N -w 5 -r 50 --export-json "$W/h.json" "$*" >/dev/null 2>&1
  python3 - "$name" "$*" "$W/h.json" "$B" "$W" <<'PY'
import json, sys
r = json.load(open(sys.argv[3]))["results"][0]
cmd = sys.argv[2].replace(sys.argv[4], "ibwire").replace(sys.argv[5], "DIR")
print(f"| {sys.argv[1]} | {r['median']*1000:.2f} ms | {r['min']*1000:.2f} ms | {r['max']*1000:.2f} ms | `{cmd}` |")
PY
}
echo "| case | median | min | max | command |"
echo "|---|---|---|---|---|"
if [[ $what == probe || $what == all ]]; then
  row "probe, 8 GPU / 9 RDMA / ~45 netdevs" "$B probe --root $W/n9 --json"
  row "probe, 64 RDMA devices" "$B probe --root $W/n64 --json"
  row "probe, 512 RDMA devices (SR-IOV VFs)" "$B probe --root $W/n512 --json"
fi
for extra in bench/cases/*.sh; do
  [[ -e $extra ]] || continue
  # shellcheck source=/dev/null
  case_name=$(basename "$extra" .sh)
  if [[ $what == all || $what == "$case_name" ]]; then source "$extra"; fi
done
