#!/usr/bin/env bash
# The static (musl) binary against the glibc build, on the story node: size, and for the hook
# (a container start) and `--version` (process start alone): instructions (valgrind callgrind:
# exact counts, stable where wall time is noisy), system calls and files opened (strace -f).
# Usage: bench/static.sh [--readme]   (--readme rewrites the table between docs/performance.md's
# `static:begin`/`static:end` markers; it is never copied by hand). Needs valgrind and strace;
# packaging/build.sh must have built dist/ first.
set -euo pipefail
cd "$(dirname "$0")/.."
v=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
S=dist/ibwire-$v-$(uname -m)-linux-musl
[ -x "$S" ] || { echo "bench: $S missing: run packaging/build.sh first" >&2; exit 2; }
for t in valgrind strace; do command -v $t >/dev/null || { echo "bench: $t not found (apt-get install $t)" >&2; exit 2; }; done
cargo build --release -q; cargo build --release -q --example gen_tree
G=target/release/ibwire
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
target/release/examples/gen_tree story "$W/story" >/dev/null; mkdir -p "$W/rootfs/dev"
hook_env() { : > "$W/fstab"; : > "$W/environ"; env -i PATH=/usr/bin:/bin HOME="$W" ENROOT_ROOTFS="$W/rootfs" ENROOT_MOUNTS="$W/fstab" ENROOT_ENVIRON="$W/environ" ENROOT_RESTRICT_DEV=y "$@"; }
instr() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : //p'; }
calls() { strace -f -c -o "$W/st" "$@" >/dev/null 2>&1 || true; awk '/ total$/ {print $(NF-2)}' "$W/st"; }
row() { # label, binary
  local b=$2
  printf '| %s | %s KiB | %s | %s | %s | %s | %s |\n' "$1" "$(( $(stat -c %s "$b") / 1024 ))" \
    "$(instr "$b" --version)" "$(calls "$b" --version)" \
    "$(hook_env valgrind --tool=callgrind --callgrind-out-file=/dev/null "$b" hook --root "$W/story" 2>&1 >/dev/null | sed -n 's/.*Collected : //p')" \
    "$(hook_env strace -f -c -o "$W/st" "$b" hook --root "$W/story" >/dev/null 2>&1; awk '/ total$/ {print $(NF-2)}' "$W/st")" \
    "$(hook_env strace -f -qq -e trace=open,openat,openat2 -o "$W/so" "$b" hook --root "$W/story" >/dev/null 2>&1; grep -c 'open' "$W/so")"
}
table=$(
  echo "| build | size | \`--version\` instructions | \`--version\` syscalls | hook instructions | hook syscalls | hook files opened |"
  echo "|---|---|---|---|---|---|---|"
  row "glibc (target/release, dynamic)" "$G"
  row "static musl (dist/, $(uname -m))" "$S"
)
echo "$table"
if [ "${1:-}" = --readme ]; then
  python3 - "$table" <<'PY'
import re, sys
p = "docs/performance.md"; s = open(p).read()
b, e = "<!-- static:begin (bench/static.sh --readme) -->", "<!-- static:end -->"
i, j = s.index(b) + len(b), s.index(e)
open(p, "w").write(s[:i] + "\n" + sys.argv[1] + "\n" + s[j:])
PY
fi
