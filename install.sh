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

hooks_dir() {
  # enroot knows where its hooks live (a source install uses /usr/local/etc/enroot).
  d=""
  if command -v enroot >/dev/null 2>&1; then
    d=$(enroot info 2>/dev/null | sed -n 's/^ENROOT_SYSCONF_PATH=//p' | head -n1)
  fi
  [ -n "$d" ] || d=/etc/enroot
  echo "$DESTDIR$d/hooks.d"
}

if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$BIN"
  hd=$(hooks_dir)
  if [ -f "$hd/$HOOK_NAME" ]; then rm -f "$hd/$HOOK_NAME"; echo "removed $hd/$HOOK_NAME"; fi
  echo "removed $BIN"
  exit 0
fi
if [ -n "${1:-}" ]; then
  echo "install.sh: unknown argument '$1' (use --uninstall or nothing)" >&2
  exit 2
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "install.sh: cargo not found. Install Rust (https://rustup.rs or 'apt-get install cargo') and run again." >&2
  exit 1
fi
cd "$here"
cargo build --release --locked --quiet
install -d "$DESTDIR$PREFIX/bin"
install -m 0755 target/release/ibwire "$BIN"
echo "installed $BIN"

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
