#!/usr/bin/env bash
# install.sh into a staging DESTDIR: twice (idempotent), the hook a link to the installed
# binary (the sh form with IBWIRE_HOOK_FORM=sh, its binary path filled in; an unknown form
# refused), --uninstall removes both; --binary FILE under sudo's secure_path with no toolchain; a missing
# cargo gives a clear message (and under sudo names the user's cargo); a binary that cannot run
# is refused; a PREFIX whose bin is not on PATH is said.
set -euo pipefail
S=$(mktemp -d /tmp/ibwire-stage-XXXX); trap 'rm -rf "$S"' EXIT
for i in 1 2; do DESTDIR=$S PREFIX=/opt/ib ./install.sh > "$S/log$i"; done
test -x "$S/opt/ib/bin/ibwire" || { echo "FAIL: binary not installed"; exit 1; }
[ "$(readlink "$S/opt/ib/bin/ibwire-taskprolog")" = ibwire ] || { echo "FAIL: no ibwire-taskprolog link"; exit 1; }
[ "$(readlink "$S/opt/ib/bin/ibwire-health")" = ibwire ] || { echo "FAIL: no ibwire-health link"; exit 1; }
hook=$(find "$S" -name 90-ibwire.sh)
# The link names the binary where it will be, not in the staging DESTDIR.
[ -n "$hook" ] && [ "$(readlink "$hook")" = /opt/ib/bin/ibwire ] || { echo "FAIL: hook link not installed"; ls -l "$hook"; cat "$S/log1"; exit 1; }
DESTDIR=$S PREFIX=/opt/ib IBWIRE_HOOK_FORM=sh ./install.sh > "$S/log-sh"
[ -f "$hook" ] && [ ! -L "$hook" ] && [ -x "$hook" ] || { echo "FAIL: sh form not installed"; ls -l "$hook"; exit 1; }
grep -q '^IBWIRE="/opt/ib/bin/ibwire"$' "$hook" || { echo "FAIL: hook path"; cat "$hook"; exit 1; }
out=$(DESTDIR=$S PREFIX=/opt/ib IBWIRE_HOOK_FORM=wrapper ./install.sh 2>&1 || true)
echo "$out" | grep -q "IBWIRE_HOOK_FORM=wrapper: use link (the default) or sh" && [ -f "$hook" ] && ! echo "$out" | grep -q "^installed" || { echo "FAIL: unknown hook form: $out"; exit 1; }
"$S/opt/ib/bin/ibwire" --version | grep -q ibwire
B=$S/built-ibwire; cp "$S/opt/ib/bin/ibwire" "$B"
DESTDIR=$S PREFIX=/opt/ib ./install.sh --uninstall > /dev/null
[ ! -e "$S/opt/ib/bin/ibwire" ] && [ ! -L "$S/opt/ib/bin/ibwire-taskprolog" ] && [ ! -L "$S/opt/ib/bin/ibwire-health" ] && [ ! -e "$hook" ] && [ ! -L "$hook" ] \
  && [ -z "$(find "$S/opt/ib/share" -type f 2>/dev/null)" ] || { echo "FAIL: uninstall left files"; find "$S/opt"; exit 1; }
# Without a toolchain, as sudo runs it (secure_path, nothing else in the environment): the
# binary built above, named with --binary; man pages and completion come with it.
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DESTDIR=$S/sudo PREFIX=/usr/local ./install.sh --binary "$B" > "$S/log-sudo" \
  || { cat "$S/log-sudo"; echo "FAIL: --binary under secure_path"; exit 1; }
test -x "$S/sudo/usr/local/bin/ibwire" && test -f "$S/sudo/usr/local/share/man/man1/ibwire-env.1" \
  && test -f "$S/sudo/usr/local/share/bash-completion/completions/ibwire" \
  && test -f "$S/sudo/usr/local/share/zsh/site-functions/_ibwire" \
  && test -f "$S/sudo/usr/local/share/fish/vendor_completions.d/ibwire.fish" || { echo "FAIL: --binary install incomplete"; find "$S/sudo"; exit 1; }
# A copy of the sources without any binary: no prebuilt, no cargo.
C=$S/clean; mkdir -p "$C/hooks"; cp install.sh "$C/"; cp hooks/90-ibwire.sh "$C/hooks/"
out=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$C/install.sh" 2>&1 || true)
echo "$out" | grep -q "cargo not found" && echo "$out" | grep -q -- "--binary FILE" || { echo "FAIL: no clear message without cargo: $out"; exit 1; }
if [ -x /root/.cargo/bin/cargo ] && getent passwd root >/dev/null; then
  out=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SUDO_USER=root "$C/install.sh" 2>&1 || true)
  echo "$out" | grep -q "cargo is in /root/.cargo/bin, which sudo's secure_path leaves out" \
    && echo "$out" | grep -q "sudo ./install.sh --binary target/release/ibwire" || { echo "FAIL: sudo case: $out"; exit 1; }
else
  echo "skipped: the sudo case (no /root/.cargo/bin/cargo here)"
fi
# A binary for another machine is refused before anything is installed.
printf '\177ELF\002\001\001\000' > "$S/foreign"; head -c 56 /dev/zero >> "$S/foreign"; chmod +x "$S/foreign"
out=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DESTDIR=$S/foreign-root ./install.sh --binary "$S/foreign" 2>&1 || true)
echo "$out" | grep -q "does not run on this machine" && [ ! -e "$S/foreign-root/usr/local/bin/ibwire" ] || { echo "FAIL: foreign binary: $out"; exit 1; }
# A PREFIX whose bin is not on PATH is said (not in a staged install).
P=$S/prefix; out=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=$S PREFIX=$P ENROOT_SYSCONF_PATH=$S/no-enroot ./install.sh --binary "$B" 2>&1)
echo "$out" | grep -q "note: $P/bin is not on your PATH" || { echo "FAIL: PATH note: $out"; exit 1; }
# The hook goes where enroot reads it: stand-ins for enroot 4.x (`info`, indented) and 3.x (no
# `info`; the default is on the script's config::export line), both built from source
# (/usr/local/etc/enroot), with the real cargo already built above.
F=$S/fake; mkdir -p "$F/v4" "$F/v3" "$F/old"
printf '#!/bin/sh\n[ "$1" = info ] && { printf "Environment:\\n  ENROOT_SYSCONF_PATH=/usr/local/etc/enroot\\n"; exit 0; }\nexit 1\n' > "$F/v4/enroot"
printf '#!/usr/bin/env bash\nconfig::export ENROOT_SYSCONF_PATH "${ENROOT_SYSCONF_PATH:-/usr/local/etc/enroot}"\necho usage >&2; exit 1\n' > "$F/v3/enroot"
chmod +x "$F/v4/enroot" "$F/v3/enroot"
for v in v4 v3; do
  D=$S/$v; env -u ENROOT_SYSCONF_PATH PATH="$F/$v:$PATH" DESTDIR=$D PREFIX=/opt/ib ./install.sh > "$S/log-$v"
  [ "$(readlink "$D/usr/local/etc/enroot/hooks.d/90-ibwire.sh")" = /opt/ib/bin/ibwire ] || { echo "FAIL: enroot $v: hook not in /usr/local/etc/enroot/hooks.d"; find "$D"; cat "$S/log-$v"; exit 1; }
done
# A toolchain older than clap 4 needs is named, with what works.
printf '#!/bin/sh\necho "rustc 1.65.0 (897e37553 2022-11-02)"\n' > "$F/old/rustc"; chmod +x "$F/old/rustc"
out=$(env PATH="$F/old:$PATH" DESTDIR=$S/old "$C/install.sh" 2>&1 || true)
echo "$out" | grep -q "rustc 1.65.0 is too old: ibwire needs 1.85" || { echo "FAIL: old rustc not named: $out"; exit 1; }
echo "ok: staged install twice, hook link at ${hook#$S} (sh form on request, an unknown form refused), uninstall clean, --binary under secure_path, no-cargo and sudo messages, foreign binary refused, PATH note, enroot 4.x and 3.x hooks.d found, old rustc named"
