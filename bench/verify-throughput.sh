#!/usr/bin/env bash
# verify --from-log against grep on the same 512 MiB NCCL_DEBUG=INFO log (issue 38: at least
# half of `grep -cE 'NCCL (INFO|WARN)|via NET|Using network'`'s speed, in < 64 MiB).
# The log replays real logs of tests/fixtures (a healthy 2-node RoCE run, a 2×H200 run, the
# healthy 2-node vLLM IB run), host names renumbered per copy so 64 hosts appear, then one real
# EINVAL line at the very end, which the verdict must find. Runs interleave (grep, verify, grep,
# …) so both see the same machine; the page cache holds the file for both. grep writes its
# count to a file: with its output on /dev/null GNU grep stops at the first match.
#   bench/verify-throughput.sh [--readme]   (RUNS=5 SIZE_MB=512; a release build of ibwire)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}; SIZE_MB=${SIZE_MB:-512}
cargo build --release -q
B=${IBWIRE_BIN:-target/release/ibwire}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
python3 - "$W/big.log" "$SIZE_MB" <<'PY'
import sys, glob
paths = ["tests/fixtures/real/nccl-logs/h100-roce-2node-tpgds-aihub0008-aws-ofi-plugin-fallback-to-ib.log",
         "tests/fixtures/h200-2gpu/verify-2gpu-nccl.log"]
paths += sorted(glob.glob("tests/fixtures/verify-corpus/*llm-k8s-deepseek*ib*.log"))[:1]
src = [open(p, errors="replace").read() for p in paths]
out, n, i, limit = open(sys.argv[1], "w"), 0, 0, int(sys.argv[2]) << 20
while n < limit:
    for t in src:
        t = t.replace("tpgds-aihub0008", f"gpu-{i % 64:03d}")
        out.write(t); n += len(t)
    i += 1
out.write("gpu-007:1:1 [3] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_bond_0:1, curr state INIT, next state RTR\n")
PY
size=$(stat -c %s "$W/big.log")
cat "$W/big.log" > /dev/null   # into the page cache
g=(); v=(); m=()
for i in $(seq "$RUNS"); do
  /usr/bin/time -f "%e %M" -o "$W/g" grep -cE 'NCCL (INFO|WARN)|via NET|Using network' "$W/big.log" > "$W/count"
  g+=("$(cut -d' ' -f1 < "$W/g")")
  /usr/bin/time -f "%e %M" -o "$W/t" "$B" verify --from-log "$W/big.log" > "$W/v" 2>&1 || true
  v+=("$(tail -1 "$W/t" | cut -d' ' -f1)"); m+=("$(tail -1 "$W/t" | cut -d' ' -f2)")
done
grep -q '^NOT OK: ibv_modify_qp failed with EINVAL' "$W/v" || { echo "verify missed the EINVAL line:"; head -3 "$W/v"; exit 1; }
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
gm=$(med "${g[@]}"); vm=$(med "${v[@]}"); mm=$(printf '%s\n' "${m[@]}" | sort -n | tail -1)
table=$(cat <<MD
| $((size >> 20)) MiB log, $RUNS interleaved runs | median wall | throughput | peak RSS |
|---|---|---|---|
| \`grep -cE 'NCCL (INFO|WARN)|via NET|Using network'\` | $gm s | $(awk -v s="$size" -v t="$gm" 'BEGIN{printf "%.0f MiB/s", s/1048576/t}') | - |
| \`ibwire verify --from-log\` | $vm s | $(awk -v s="$size" -v t="$vm" 'BEGIN{printf "%.0f MiB/s", s/1048576/t}') | $((mm / 1024)) MiB |

verify's speed is $(awk -v g="$gm" -v v="$vm" 'BEGIN{printf "%.2f", g/v}') of grep's (all runs: grep ${g[*]} s; verify ${v[*]} s), measured $(date -u +%F) at $(git rev-parse --short HEAD) on $(nproc) cores.
MD
)
echo "$table"
if [ "${1:-}" = --readme ]; then
  python3 - docs/performance.md "$table" <<'PY'
import sys
p, t = sys.argv[1], sys.argv[2]
s = open(p).read()
a, b = "<!-- verify-throughput:begin (bench/verify-throughput.sh --readme) -->\n", "<!-- verify-throughput:end -->"
i, j = s.index(a) + len(a), s.index(b)
open(p, "w").write(s[:i] + t + "\n" + s[j:])
PY
fi
