#!/usr/bin/env sh
# Build ibwire in release mode and install it.
#   ./install.sh                 install to $PREFIX/bin (PREFIX defaults to /usr/local)
#   ./install.sh --uninstall     remove what install put there
# DESTDIR is honoured for staged installs (packaging). Running it twice is harmless.
set -eu
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BIN="$DESTDIR$PREFIX/bin/ibwire"
HOOK_NAME=90-ibwire.sh
here=$(cd "$(dirname "$0")" && pwd)

# enroot reads system hooks from $ENROOT_SYSCONF_PATH/hooks.d, a path compiled into it:
# /etc/enroot for the distribution packages, /usr/local/etc/enroot for a source install.
sysconf_path() {
  if [ -n "${ENROOT_SYSCONF_PATH:-}" ]; then echo "$ENROOT_SYSCONF_PATH"; return; fi
  command -v enroot >/dev/null 2>&1 || { echo /etc/enroot; return; }
  # enroot 4.x: `enroot info` lists its settings, indented: "  ENROOT_SYSCONF_PATH=/etc/enroot".
  d=$(enroot info 2>/dev/null | sed -n 's/^[[:space:]]*ENROOT_SYSCONF_PATH=//p' | head -n1 | tr -d "\"'")
  # enroot 3.x has no `info`: its script holds the default, on a line like
  # config::export ENROOT_SYSCONF_PATH "${ENROOT_SYSCONF_PATH:-/usr/local/etc/enroot}"
  if [ -z "$d" ]; then
    d=$(sed -n 's/^[[:space:]]*config::export[[:space:]][[:space:]]*ENROOT_SYSCONF_PATH[[:space:]]//p' "$(command -v enroot)" 2>/dev/null \
      | head -n1 | grep -o '/[^"'"'"'}[:space:]]*' | tail -n1)
  fi
  echo "${d:-/etc/enroot}"
}

hooks_dir() {
  echo "$DESTDIR$(sysconf_path)/hooks.d"
}

if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$BIN" "$BIN-taskprolog"
  hd=$(hooks_dir)
  if [ -f "$hd/$HOOK_NAME" ]; then rm -f "$hd/$HOOK_NAME"; echo "removed $hd/$HOOK_NAME"; fi
  echo "removed $BIN"
  exit 0
fi
if [ -n "${1:-}" ]; then
  echo "install.sh: unknown argument '$1' (use --uninstall or nothing)" >&2
  exit 2
fi

NEED_RUST=1.75
if ! command -v cargo >/dev/null 2>&1; then
  echo "install.sh: cargo not found. ibwire needs Rust $NEED_RUST or newer: rustup (https://rustup.rs), or the distribution's cargo on Debian 13 / Ubuntu 24.04 (Debian 12's is 1.65, too old)." >&2
  exit 1
fi
have=$(rustc --version 2>/dev/null | awk '{print $2}')
if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$NEED_RUST.0" "$have" | sort -t. -k1,1n -k2,2n -k3,3n | head -n1)" != "$NEED_RUST.0" ]; then
  echo "install.sh: rustc ${have:-?} is too old: ibwire needs $NEED_RUST or newer (clap 4). Use rustup (https://rustup.rs), or the distribution's cargo on Debian 13 / Ubuntu 24.04; Debian 12's apt cargo is 1.65." >&2
  exit 1
fi
cd "$here"
echo "building ibwire (release; a first build takes a few minutes)..."
cargo build --release --locked
install -d "$DESTDIR$PREFIX/bin"
install -m 0755 target/release/ibwire "$BIN"
# The Slurm TaskProlog is ibwire called through this name (TaskProlog= takes no arguments).
ln -sf ibwire "$BIN-taskprolog"
echo "installed $BIN (and $BIN-taskprolog for slurm.conf's TaskProlog=)"

if [ -f hooks/$HOOK_NAME ]; then
  hd=$(hooks_dir)
  if [ -d "$hd" ] || [ -n "$DESTDIR" ] || [ "${IBWIRE_INSTALL_HOOK:-}" = 1 ]; then
    install -d "$hd"
    # The hook must name the binary by absolute path: enroot runs hooks with the job's PATH.
    sed "s#@IBWIRE@#$PREFIX/bin/ibwire#" hooks/$HOOK_NAME > "$hd/.$HOOK_NAME.tmp"
    chmod 0755 "$hd/.$HOOK_NAME.tmp"
    mv "$hd/.$HOOK_NAME.tmp" "$hd/$HOOK_NAME"
    echo "installed enroot hook $hd/$HOOK_NAME"
  else
    echo "enroot hooks directory $hd not found: hook not installed (set IBWIRE_INSTALL_HOOK=1 to create it)"
  fi
fi
