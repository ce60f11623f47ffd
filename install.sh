#!/usr/bin/env sh
# Install ibwire: the binary, the ibwire-taskprolog and ibwire-health links, the enroot hook,
# manual pages and bash, zsh and fish completion.
#   ./install.sh                 the prebuilt static binary next to this script (a release
#                                tarball) or in dist/ (packaging/build.sh); else build it with cargo
#   ./install.sh --binary FILE   install FILE, a binary you built or downloaded (no toolchain)
#   ./install.sh --uninstall     remove what install put there
# PREFIX defaults to /usr/local; DESTDIR is honoured for staged installs (packaging). Running it
# twice is harmless. The enroot hook is hooks.d/90-ibwire.sh, a link to the binary; with
# IBWIRE_HOOK_FORM=sh it is the sh wrapper hooks/90-ibwire.sh instead (about 1 ms more per
# container start; it also lets a container start when the binary cannot run or is killed).
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

case "${1:-}" in
  -h | --help)
    # the header of this file, without its '# '
    sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    echo "Environment: PREFIX (default /usr/local), DESTDIR, IBWIRE_HOOK_FORM=link|sh, ENROOT_SYSCONF_PATH,"
    echo "IBWIRE_INSTALL_HOOK=1 (create enroot's hooks.d when it does not exist yet)."
    exit 0 ;;
esac
if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$BIN" "$BIN-taskprolog" "$BIN-health" "$DESTDIR$PREFIX/share/bash-completion/completions/ibwire" \
    "$DESTDIR$PREFIX/share/zsh/site-functions/_ibwire" "$DESTDIR$PREFIX/share/fish/vendor_completions.d/ibwire.fish"
  rm -f "$DESTDIR$PREFIX"/share/man/man1/ibwire.1 "$DESTDIR$PREFIX"/share/man/man1/ibwire-*.1
  hd=$(hooks_dir)
  if [ -e "$hd/$HOOK_NAME" ] || [ -L "$hd/$HOOK_NAME" ]; then rm -f "$hd/$HOOK_NAME"; echo "removed $hd/$HOOK_NAME"; fi
  echo "removed $BIN"
  exit 0
fi
FROM=
case "${1:-}" in
  "") ;;
  --binary)
    [ -n "${2:-}" ] || { echo "install.sh: --binary needs a FILE" >&2; exit 2; }
    FROM=$2 ;;
  --binary=*) FROM=${1#--binary=} ;;
  *) echo "install.sh: unknown argument '$1' (use --binary FILE, --uninstall, --help or nothing)" >&2; exit 2 ;;
esac
cd "$here"
form=${IBWIRE_HOOK_FORM:-link}
case $form in
  link | sh) ;;
  *) echo "install.sh: IBWIRE_HOOK_FORM=$form: use link (the default) or sh" >&2; exit 2 ;;
esac

# The prebuilt static binary for this machine: next to this script (an unpacked release
# tarball) or in dist/ (packaging/build.sh).
if [ -z "$FROM" ]; then
  arch=$(uname -m)
  for f in ./ibwire dist/ibwire-*-"$arch"-linux-musl; do
    if [ -f "$f" ] && [ -x "$f" ]; then FROM=$f; echo "installing the prebuilt $f"; break; fi
  done
fi

NEED_RUST=1.85
if [ -z "$FROM" ]; then
  if ! command -v cargo >/dev/null 2>&1; then
    # Under sudo, secure_path drops ~/.cargo/bin: find the invoking user's cargo and say what to run.
    user_home=
    if [ -n "${SUDO_USER:-}" ]; then user_home=$(getent passwd "$SUDO_USER" 2>/dev/null | cut -d: -f6); fi
    if [ -n "$user_home" ] && [ -x "$user_home/.cargo/bin/cargo" ]; then
      echo "install.sh: cargo is in $user_home/.cargo/bin, which sudo's secure_path leaves out. Build as $SUDO_USER, then install the binary:" >&2
      echo "  cargo build --release --locked && sudo ./install.sh --binary target/release/ibwire" >&2
    else
      echo "install.sh: no prebuilt binary here and cargo not found. Either install a binary you built or downloaded (./install.sh --binary FILE; release tarballs and packages hold a static one), or get Rust $NEED_RUST or newer: rustup (https://rustup.rs), or the distribution's cargo on Debian 13 / Ubuntu 24.04 (Debian 12's is 1.65, too old)." >&2
    fi
    exit 1
  fi
  have=$(rustc --version 2>/dev/null | awk '{print $2}')
  if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$NEED_RUST.0" "$have" | sort -t. -k1,1n -k2,2n -k3,3n | head -n1)" != "$NEED_RUST.0" ]; then
    echo "install.sh: rustc ${have:-?} is too old: ibwire needs $NEED_RUST or newer (clap 4.6). Use rustup (https://rustup.rs), or install a prebuilt binary: ./install.sh --binary FILE." >&2
    exit 1
  fi
  echo "building ibwire (release; a first build takes a few minutes)..."
  cargo build --release --locked
  FROM=target/release/ibwire
fi
[ -f "$FROM" ] || { echo "install.sh: $FROM: no such file" >&2; exit 1; }
# A binary for another architecture, or one needing a newer libc, installs fine and then fails
# at every use: run it once first (the enroot hook survives it, but nothing else would work).
if ! "$FROM" --version >/dev/null 2>&1; then
  echo "install.sh: $FROM does not run on this machine ($(uname -m)): take the binary for this architecture (the static ibwire-*-$(uname -m)-linux-musl runs on any Linux of it)" >&2
  exit 1
fi
install -d "$DESTDIR$PREFIX/bin"
install -m 0755 "$FROM" "$BIN"
# The Slurm TaskProlog is ibwire called through this name (TaskProlog= takes no arguments).
ln -sf ibwire "$BIN-taskprolog"
ln -sf ibwire "$BIN-health"
echo "installed $BIN (and $BIN-taskprolog, $BIN-health for slurm.conf's TaskProlog=, HealthCheckProgram=)"
# Manual pages and bash, zsh and fish completion, written by the binary itself (the places
# each shell searches under a prefix: bash-completion, zsh's site-functions, fish's vendor dir).
man_dir="$DESTDIR$PREFIX/share/man/man1"
install -d "$man_dir" && "$BIN" man --dir "$man_dir" 2>/dev/null && echo "installed manual pages into $man_dir"
for c in "bash bash-completion/completions/ibwire" "zsh zsh/site-functions/_ibwire" "fish fish/vendor_completions.d/ibwire.fish"; do
  sh_name=${c%% *}; f="$DESTDIR$PREFIX/share/${c#* }"
  install -d "${f%/*}" && "$BIN" completions "$sh_name" > "$f" && echo "installed $sh_name completion $f"
done

hd=$(hooks_dir)
if [ "$form" = sh ] && [ ! -f hooks/$HOOK_NAME ]; then
  echo "install.sh: IBWIRE_HOOK_FORM=sh needs hooks/$HOOK_NAME next to this script: hook not installed" >&2
elif [ -d "$hd" ] || [ -n "$DESTDIR" ] || [ "${IBWIRE_INSTALL_HOOK:-}" = 1 ]; then
  install -d "$hd"
  rm -f "$hd/.$HOOK_NAME.tmp"
  # The hook names the binary by absolute path: enroot runs hooks with the job's PATH.
  if [ "$form" = link ]; then
    # enroot runs only hooks.d's *.sh files that pass `[ -x ]`: a link whose binary is gone is
    # skipped, so removing the binary never breaks a start. Called through it, ibwire is the hook.
    ln -s "$PREFIX/bin/ibwire" "$hd/.$HOOK_NAME.tmp"
  else
    sed "s#@IBWIRE@#$PREFIX/bin/ibwire#" hooks/$HOOK_NAME > "$hd/.$HOOK_NAME.tmp"
    chmod 0755 "$hd/.$HOOK_NAME.tmp"
  fi
  # rename(2): a container starting now sees the old hook or the new one, never none.
  mv -f "$hd/.$HOOK_NAME.tmp" "$hd/$HOOK_NAME"
  echo "installed enroot hook $hd/$HOOK_NAME ($form form)"
else
  echo "enroot hooks directory $hd not found: hook not installed (set IBWIRE_INSTALL_HOOK=1 to create it)"
fi
case ":$PATH:" in
  *":$PREFIX/bin:"*) ;;
  *) [ -n "$DESTDIR" ] || echo "note: $PREFIX/bin is not on your PATH: call $PREFIX/bin/ibwire, or add it: export PATH=\"$PREFIX/bin:\$PATH\"" ;;
esac
