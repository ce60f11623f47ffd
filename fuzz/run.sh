#!/usr/bin/env bash
# Run every cargo-fuzz target for SECONDS each (default 15), seeded from the real fixtures, and
# print one line per target: executions, and whether it found a crash. cargo-fuzz needs nightly
# features; on a stable toolchain RUSTC_BOOTSTRAP=1 enables them, and --sanitizer none is used
# (the crate's unsafe blocks — fd adoption, signal set-ups, the allocator, the netlink socket —
# parse no input; panics and assertion failures are what fuzzing looks for).
# Crashes are kept under fuzz/artifacts/<target>/ — turn each into a regression test. Memory is
# limited (512 MiB RSS, 256 MiB per allocation): an input that makes a parser allocate without
# bound, such as a hostlist of many ranges, counts as a crash.
set -uo pipefail
cd "$(dirname "$0")"
SECONDS_PER=${1:-15}
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || { echo "fuzz: cargo-fuzz not installed (cargo install --locked cargo-fuzz)" >&2; exit 2; }
S=../tests/fixtures/real
seed() { # target, files...
  local t=$1; shift; mkdir -p "corpus/$t"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "corpus/$t/$(basename "$f")"; done
}
seed nccl_log $S/nccl-logs/* ../tests/fixtures/h200-*/*nccl*.log ../tests/fixtures/verify-corpus/*.log
seed nccl_tests $S/nccl-tests/*
seed nvsmi_topo $S/topo/* ../tests/fixtures/h200-*/nvidia-smi-topo-m.txt
seed config_yaml ../examples/ibwire.yaml
seed snapshot ../tests/fixtures/h200-*/ibwire-probe.json
mkdir -p corpus/hostlist corpus/nccl_filter corpus/procfs_tables corpus/enroot_formats
printf 'gpu-[001-004,010],login1' > corpus/hostlist/a; printf 'a[096-100]b[1-2]' > corpus/hostlist/b
printf '^=mlx5_bond_0,mlx5_4:1' > corpus/nccl_filter/a; printf '=mlx5_0:1,mlx5_3:1' > corpus/nccl_filter/b
printf 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\nethX\t0097A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\n' > corpus/procfs_tables/a
printf 'x040\\ y\n' > corpus/enroot_formats/a
cargo fuzz build --sanitizer none -O >/dev/null 2>&1 || { echo "fuzz: build failed" >&2; cargo fuzz build --sanitizer none -O; exit 1; }
fail=0
for t in $(cargo fuzz list); do
  out=$(cargo fuzz run --sanitizer none -O "$t" "corpus/$t" -- -max_total_time="$SECONDS_PER" -rss_limit_mb=512 -malloc_limit_mb=256 -print_final_stats=1 2>&1)
  rc=$?
  runs=$(echo "$out" | sed -n 's/^stat::number_of_executed_units: *//p' | tail -1)
  if [ $rc -eq 0 ]; then echo "fuzz: $t: ${runs:-?} executions in ${SECONDS_PER}s, no crash"
  else echo "fuzz: $t: CRASH (rc $rc) after ${runs:-?} executions; see fuzz/artifacts/$t"; echo "$out" | tail -20; fail=1; fi
done
exit $fail
