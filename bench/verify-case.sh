# sourced by bench/run.sh (uses its W, B and say)
# verify on a 256 MiB NCCL_DEBUG=INFO log. The stand-in replays real logs, not generated lines:
# the healthy 2-node RoCE log and the 2×H200 run of tests/fixtures (their mix of INIT, NET and
# channel lines), host names renumbered per copy so 64 hosts appear, until 256 MiB; then one
# real EINVAL line at the very end, which the verdict must find.
python3 - "$W/big.log" <<'PY'
import sys
src = [open(p, errors="replace").read() for p in (
    "tests/fixtures/real/nccl-logs/h100-roce-2node-tpgds-aihub0008-aws-ofi-plugin-fallback-to-ib.log",
    "tests/fixtures/h200-2gpu/verify-2gpu-nccl.log")]
out, n, i = open(sys.argv[1], "w"), 0, 0
while n < 256 << 20:
    for t in src:
        t = t.replace("tpgds-aihub0008", f"gpu-{i % 64:03d}")
        out.write(t); n += len(t)
    i += 1
out.write("gpu-007:1:1 [3] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_bond_0:1, curr state INIT, next state RTR\n")
PY
# One run each (a run takes seconds; hyperfine's 50 would take minutes); exit 1 is the verdict.
for i in 1 2 3; do
  /usr/bin/time -f "%e %M" -o "$W/t$i" "$B" verify --from-log "$W/big.log" > "$W/v" 2>&1 || true
done
grep -q '^NOT OK: ibv_modify_qp failed with EINVAL' "$W/v" || { say "verify missed the EINVAL line:"; head -3 "$W/v"; }
read -r t1 m1 < <(tail -1 "$W/t1"); read -r t2 m2 < <(tail -1 "$W/t2"); read -r t3 m3 < <(tail -1 "$W/t3")
say "#### verify on a 256 MiB log"
say ""
say "| case | wall | | | peak memory | command |"
say "|---|---|---|---|---|---|"
say "| verify --from-log, 256 MiB of real INFO logs replayed (3 runs) | $t1 s, $t2 s, $t3 s | | | peak RSS $(( m1 / 1024 )) MiB | \`ibwire verify --from-log DIR/big.log\` |"
