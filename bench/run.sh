#!/usr/bin/env bash
# Whole-process costs of ibwire on real-sized node trees, against faithful anchors (a benchmark,
# not a test). Usage: bench/run.sh [--readme] [SECTION...]
#   sections: hook growth probe commands launch fleet health verify   (default: all)
#   --readme: rewrite the tables between docs/performance.md's `bench:begin`/`bench:end` markers
#             and the summary between README.md's `perf:begin`/`perf:end` (never copied by hand).
# Timings come from bench/interleave.py: the commands of one table run interleaved (round r runs
# each once, the order reversed every other round), spawned directly (no shell, no `env`
# wrapper), wall time and the child's CPU time (user + system, wait4). Counts are exact: files
# opened and system calls of the whole process tree (strace -f), instructions (valgrind
# callgrind, children traced). Needs python3; strace and valgrind for the counts ("-" without).
# Valgrind 3.19 (Debian 12) does not know openat2: under it a `--root` run takes the user-space
# resolution (SysRoot::resolve, the path for kernels before 5.6), so the instruction counts of
# `--root` runs are of that path, the heavier one; timings and strace counts are of openat2.
# Trees: examples/gen_tree.rs, in /dev/shm (memory, as sysfs is): the story node (8 GPUs, 9 RDMA
# devices with real-sized P_Key/GID tables and counters, 45 netdevs) and SR-IOV nodes where every
# virtual function has its RDMA device and its IPoIB netdev, as mlx5 creates them.
set -euo pipefail
cd "$(dirname "$0")/.."
readme=0
if [[ ${1:-} == --readme ]]; then readme=1; shift; fi
sections=${*:-hook growth probe commands launch fleet health verify}
want() { [[ " $sections " == *" $1 "* ]]; }
# shellcheck source=bench/build.sh
source bench/build.sh
bench_binary
cargo build --release -q --example gen_tree
G=$PWD/target/release/examples/gen_tree
I="python3 $PWD/bench/interleave.py"
W=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d); trap 'rm -rf "$W"' EXIT
# Every run starts with an empty environment file, as each enroot start gets a new one: the hook
# appends its ~400 bytes to it, and with one file kept over a table each run read all the
# earlier runs' lines (the hook rows up to 0ee76b4 were measured that way).
F=(--fresh "$W/environ")
"$G" story "$W/story"
for n in 16 64 256 512 1024; do "$G" sriov "$n" "$W/s$n"; done
: > "$W/environ"
mkdir -p "$W/rootfs/sys/class/infiniband" "$W/rootfs/sys/class/infiniband_verbs" "$W/rootfs/dev"
# enroot's variables, exported as enroot exports them to a hook.
export ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS=$W/rootfs ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=$W/environ
unset SLURM_JOB_NODELIST SLURM_JOB_ID
stock() { echo "MELLANOX_VISIBLE_DEVICES=all SYSFS=$W/$1/sys $PWD/bench/stock-99-mellanox.sh"; }
show() { sed "s|$B|ibwire|g; s|$W|DIR|g; s|$PWD/||g"; }
ms() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][sys.argv[2]]; print(f\"{r[sys.argv[3]]:.2f}\")" "$W/t.json" "$1" "$2"; }
# table LABEL CMD [LABEL CMD...]: one interleaved run (RUNS, default 50) and a row per command:
# wall median (min–max), CPU median, files, syscalls, instructions (COUNT=instr|files|none).
table() {
  $I --runs "${RUNS:-50}" --warmup "${WARM:-5}" --json "$W/t.json" "${F[@]}" "$@" > /dev/null
  echo "| case | wall median (min–max) | CPU median | files opened | system calls | instructions | command |"
  echo "|---|---|---|---|---|---|---|"
  while (($#)); do
    local label=$1 cmd=$2; shift 2
    local counts="- - -"
    case ${COUNT:-instr} in
      instr) counts=$($I --count "${F[@]}" "$cmd") ;;
      files) counts=$($I --count --no-instructions "${F[@]}" "$cmd") ;;
    esac
    read -r f c n <<< "$counts"
    echo "| $label | $(ms "$label" median_ms) ms ($(ms "$label" min_ms)–$(ms "$label" max_ms)) | $(ms "$label" cpu_median_ms) ms | $f | $c | $n | \`$(echo "$cmd" | show)\` |"
  done
}
ratio() { # LABEL_A LABEL_B → "B/A" of CPU medians from the last table
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; print(f\"{r[sys.argv[3]]['cpu_median_ms']/r[sys.argv[2]]['cpu_median_ms']:.1f}\")" "$W/t.json" "$1" "$2"
}
out=$W/out.md; summary=$W/summary.md; : > "$out"
echo "| what (bench/run.sh) | measured | target (issue 26) | |" > "$summary"
echo "|---|---|---|---|" >> "$summary"
say() { echo "$@" | tee -a "$out"; }
# goal WHAT MEASURED TARGET PYTHON-CONDITION: a summary row, "met" when the condition holds.
goal() { local v; v=$(python3 -c "print('met' if ($4) else '**missed**')"); echo "| $1 | $2 | $3 | $v |" >> "$summary"; }

# The build goes into the stamp above every table (--readme); on the terminal, here.
echo "Build measured: $BUILD."
if want hook; then
  say "#### The hook against the stock hook's stand-in (\`bench/stock-99-mellanox.sh\`), story node"
  say ""
  say "$(table "true" "true" "ibwire --version" "$B --version" "ibwire hook" "$B hook --root $W/story" \
    "stock stand-in" "$(stock story)")"
  r1=$(ratio "ibwire hook" "stock stand-in")
  say ""
  say "CPU: the stand-in uses ${r1}× the hook's."
  say ""
  say "#### The same, SR-IOV node with 512 RDMA functions (and 512 netdevs)"
  say ""
  say "$(RUNS=5 WARM=1 COUNT=files table "ibwire hook" "$B hook --root $W/s512" "stock stand-in" "$(stock s512)")"
  r2=$(ratio "ibwire hook" "stock stand-in")
  say ""
  say "CPU: the stand-in uses ${r2}× the hook's."
  say ""
  goal "hook's CPU against the stock stand-in's, story node (\`--root\`)" "1/${r1}" "≤ 1/20 (aim 1/40)" "$r1 >= 20"
  goal "hook's CPU against the stock stand-in's, 512 SR-IOV functions (\`--root\`)" "1/${r2}" "≤ 1/20" "$r2 >= 20"
fi

if want growth; then
  say "#### Growth with SR-IOV functions (instructions and files: exact counts)"
  say ""
  say "| RDMA functions | hook instructions | hook files opened | probe --json instructions | probe --json files opened |"
  say "|---|---|---|---|---|"
  declare -A hi pi hf pf
  for n in 16 64 256 512 1024; do
    read -r "hf[$n]" _ "hi[$n]" <<< "$($I --count "${F[@]}" "$B hook --root $W/s$n")"
    read -r "pf[$n]" _ "pi[$n]" <<< "$($I --count "$B probe --json --root $W/s$n")"
    say "| $n | ${hi[$n]} | ${hf[$n]} | ${pi[$n]} | ${pf[$n]} |"
  done
  fpf=$(python3 -c "print(f'{(${pf[1024]}-${pf[512]})/512:.2f}')"); fhf=$(python3 -c "print(f'{(${hf[1024]}-${hf[512]})/512:.2f}')")
  gh=$(python3 -c "print(f'{${hi[1024]}/${hi[256]}:.2f}')"); gp=$(python3 -c "print(f'{${pi[1024]}/${pi[256]}:.2f}')")
  say ""
  say "1 024 functions against 256 (4× the functions): hook ${gh}×, probe ${gp}× the instructions."
  say ""
  goal "hook instructions, 1 024 SR-IOV functions ÷ 256" "${gh}×" "≤ 4.4×" "$gh <= 4.4"
  goal "probe instructions, 1 024 SR-IOV functions ÷ 256" "${gp}×" "≤ 4.4×" "$gp <= 4.4"
  goal "files opened per added SR-IOV function (512 → 1 024)" "probe ${fpf}, hook ${fhf}" "≤ 5" "$fpf <= 5 and $fhf <= 5"
fi

if want probe; then
  say "#### probe against \`lspci -tv\` on the same tree"
  say ""
  if command -v lspci > /dev/null; then
    for t in story s512; do
      # The story node's few milliseconds need more rounds than the noise of a shared VM.
      runs=${PROBE_RUNS:-20}; [[ $t == story ]] && runs=${PROBE_RUNS:-60}
      say "$(RUNS=$runs COUNT=files table "ibwire probe --json ($t)" "$B probe --json --root $W/$t" \
        "lspci -tv ($t)" "lspci -A linux-sysfs -O sysfs.path=$W/$t/sys/bus/pci -tv")"
      say ""
      pc=$(ms "ibwire probe --json ($t)" cpu_median_ms); lc=$(ms "lspci -tv ($t)" cpu_median_ms)
      limit=5; [[ $t == story ]] || limit=50
      goal "probe --json CPU, $t, against lspci -tv's" "$pc ms (lspci $lc ms)" "≤ $limit ms and below lspci" "$pc <= $limit and $pc < $lc"
    done
  else
    say "lspci not installed (Debian: pciutils): not measured."
  fi
  say "lstopo (hwloc) is not compared: it needs CPU topology under \`sys/devices/system/cpu\` and its"
  say "pci plugin, which the generated trees and Debian's base hwloc package lack."
  say ""
fi

if want commands; then
  say "#### Other commands, story node"
  say ""
  say "$(COUNT=files table "true" "true" "probe --json" "$B probe --json --root $W/story" \
    "probe --all --json" "$B probe --all --json --root $W/story" \
    "env" "$B env --root $W/story --master-addr 198.21.3.5" \
    "launch --dry-run" "$B launch --root $W/story --dry-run -- train.py" \
    "topo --json" "$B topo --root $W/story --no-nvidia-smi --json")"
  say ""
fi

if want launch; then
  # Launch overhead up to torchrun's exit, with a torchrun that exits at once: a plain exec of
  # it, ibwire launch watching it (child process, signal forwarding, log directory), and launch
  # exec'ing it (--expect-net socket: nothing to watch).
  mkdir -p "$W/bin"; printf '#!/bin/sh\nexit 0\n' > "$W/bin/torchrun"; chmod +x "$W/bin/torchrun"
  L="PATH=$W/bin:/usr/bin:/bin TMPDIR=$W $B launch --root $W/story --nnodes 2 --master-addr 198.21.151.17"
  say "#### launch: to torchrun's exit, against a plain exec of the same torchrun"
  say ""
  say "$(COUNT=none table "plain exec" "PATH=$W/bin:/usr/bin:/bin torchrun t.py" \
    "launch (watched)" "$L -- t.py" "launch --expect-net socket (exec)" "$L --expect-net socket -- t.py")"
  over=$(python3 -c "import json; r=json.load(open('$W/t.json'))['results']; print(f\"{r['launch (watched)']['median_ms']-r['plain exec']['median_ms']:.2f}\")")
  say ""
  say "Overhead of a watched launch over the plain exec (wall medians): ${over} ms."
  say ""
  goal "\`launch\` to torchrun's exit, over a plain exec of it (wall)" "${over} ms" "≤ 5 ms" "$over <= 5"
fi

if want fleet; then
  mkdir -p "$W/fj" "$W/fy"
  "$B" probe --root "$W/story" --json > "$W/one.json"
  python3 - "$W/one.json" "$W" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i in range(1, 1025):
    d["hostname"] = f"gpu-{i:04d}"
    json.dump(d, open(f"{sys.argv[2]}/fj/gpu-{i:04d}.json", "w"))
PY
  for f in "$W"/fj/*.json; do b=$(basename "$f" .json); "$B" probe --snapshot "$f" --save "$W/fy/$b.yaml" > /dev/null; done
  say "#### fleet: 1 024 snapshots of the story node, JSON (what \`probe --save\` writes) against YAML"
  say ""
  say "$(RUNS=5 WARM=1 COUNT=none table "fleet, JSON" "$B fleet $W/fj" "fleet, YAML" "$B fleet $W/fy")"
  say ""
  fj=$(ms "fleet, JSON" cpu_median_ms); fy=$(ms "fleet, YAML" cpu_median_ms)
  goal "\`fleet\`, 1 024 snapshots as \`probe --save\` writes them (JSON), CPU" "${fj} ms (YAML: ${fy} ms)" "≤ 300 ms" "$fj <= 300"
fi

if want health; then
  # HealthCheckProgram runs every few minutes on every node: the whole check, as slurmd runs it
  # (no --drain here: scontrol is Slurm's cost, one `show node` per run).
  say "#### health: the story node and 512 SR-IOV functions"
  say ""
  say "$(table "health, story" "$B health --root $W/story" "health, s512" "$B health --root $W/s512")"
  say ""
  hs=$(ms "health, story" cpu_median_ms); h5=$(ms "health, s512" cpu_median_ms)
  goal "\`health\` CPU, story node / 512 SR-IOV functions" "${hs} ms / ${h5} ms" "≤ 50 ms / ≤ 200 ms (issue 42)" "$hs <= 50 and $h5 <= 200"
fi

if want verify; then
  # shellcheck source=/dev/null
  source bench/verify-case.sh
fi

if ((readme)); then
  python3 - "$out" "$summary" "$(git rev-parse --short HEAD)" "$(date -u +%F)" "$BUILD" <<'PY'
import sys
body, summary, rev, day, build = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3], sys.argv[4], sys.argv[5]
def put(path, begin, end, text):
    s = open(path).read()
    b = s.index(begin) + len(begin)
    open(path, "w").write(s[:b] + "\n" + text.rstrip("\n") + "\n" + s[s.index(end, b):])
import textwrap
# prose at most 100 columns (README lines outside tables and code)
stamp = textwrap.fill(f"Measured at {rev} on {day} (bench/run.sh --readme), {build}.", 100, break_long_words=False, break_on_hyphens=False) + "\n\n"
put("docs/performance.md", "<!-- bench:begin (bench/run.sh --readme) -->", "<!-- bench:end -->", stamp + body)
put("README.md", "<!-- perf:begin (bench/run.sh --readme) -->", "<!-- perf:end -->", stamp + summary)
PY
fi
