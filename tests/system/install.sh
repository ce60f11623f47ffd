#!/usr/bin/env bash
# install.sh into a staging DESTDIR: twice (idempotent), the hook's binary path filled in,
# --uninstall removes both; a missing cargo gives a clear message.
set -euo pipefail
S=$(mktemp -d /tmp/ibwire-stage-XXXX); trap 'rm -rf "$S"' EXIT
for i in 1 2; do DESTDIR=$S PREFIX=/opt/ib ./install.sh > "$S/log$i"; done
test -x "$S/opt/ib/bin/ibwire" || { echo "FAIL: binary not installed"; exit 1; }
[ "$(readlink "$S/opt/ib/bin/ibwire-taskprolog")" = ibwire ] || { echo "FAIL: no ibwire-taskprolog link"; exit 1; }
hook=$(find "$S" -name 90-ibwire.sh)
[ -n "$hook" ] && [ -x "$hook" ] || { echo "FAIL: hook not installed"; cat "$S/log1"; exit 1; }
grep -q '^IBWIRE="/opt/ib/bin/ibwire"$' "$hook" || { echo "FAIL: hook path"; cat "$hook"; exit 1; }
"$S/opt/ib/bin/ibwire" --version | grep -q ibwire
DESTDIR=$S PREFIX=/opt/ib ./install.sh --uninstall > /dev/null
[ ! -e "$S/opt/ib/bin/ibwire" ] && [ ! -L "$S/opt/ib/bin/ibwire-taskprolog" ] && [ ! -e "$hook" ] || { echo "FAIL: uninstall left files"; exit 1; }
out=$(env PATH=/usr/bin:/bin ./install.sh 2>&1 || true)
echo "$out" | grep -q "cargo not found" || { echo "FAIL: no clear message without cargo: $out"; exit 1; }
# The hook goes where enroot reads it: stand-ins for enroot 4.x (`info`, indented) and 3.x (no
# `info`; the default is on the script's config::export line), both built from source
# (/usr/local/etc/enroot), with the real cargo already built above.
F=$S/fake; mkdir -p "$F/v4" "$F/v3" "$F/old"
printf '#!/bin/sh\n[ "$1" = info ] && { printf "Environment:\\n  ENROOT_SYSCONF_PATH=/usr/local/etc/enroot\\n"; exit 0; }\nexit 1\n' > "$F/v4/enroot"
printf '#!/usr/bin/env bash\nconfig::export ENROOT_SYSCONF_PATH "${ENROOT_SYSCONF_PATH:-/usr/local/etc/enroot}"\necho usage >&2; exit 1\n' > "$F/v3/enroot"
chmod +x "$F/v4/enroot" "$F/v3/enroot"
for v in v4 v3; do
  D=$S/$v; env -u ENROOT_SYSCONF_PATH PATH="$F/$v:$PATH" DESTDIR=$D PREFIX=/opt/ib ./install.sh > "$S/log-$v"
  test -x "$D/usr/local/etc/enroot/hooks.d/90-ibwire.sh" || { echo "FAIL: enroot $v: hook not in /usr/local/etc/enroot/hooks.d"; find "$D"; cat "$S/log-$v"; exit 1; }
done
# A toolchain older than clap 4 needs is named, with what works.
printf '#!/bin/sh\necho "rustc 1.65.0 (897e37553 2022-11-02)"\n' > "$F/old/rustc"; chmod +x "$F/old/rustc"
out=$(env PATH="$F/old:$PATH" DESTDIR=$S/old ./install.sh 2>&1 || true)
echo "$out" | grep -q "rustc 1.65.0 is too old: ibwire needs 1.75" || { echo "FAIL: old rustc not named: $out"; exit 1; }
echo "ok: staged install twice, hook at ${hook#$S}, uninstall clean, enroot 4.x and 3.x hooks.d found, old rustc named"
