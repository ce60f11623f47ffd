#!/usr/bin/env bash
# install.sh into a staging DESTDIR: twice (idempotent), the hook's binary path filled in,
# --uninstall removes both; a missing cargo gives a clear message.
set -euo pipefail
S=$(mktemp -d /tmp/ibwire-stage-XXXX); trap 'rm -rf "$S"' EXIT
for i in 1 2; do DESTDIR=$S PREFIX=/opt/ib ./install.sh > "$S/log$i"; done
test -x "$S/opt/ib/bin/ibwire" || { echo "FAIL: binary not installed"; exit 1; }
hook=$(find "$S" -name 90-ibwire.sh)
[ -n "$hook" ] && [ -x "$hook" ] || { echo "FAIL: hook not installed"; cat "$S/log1"; exit 1; }
grep -q '^IBWIRE="/opt/ib/bin/ibwire"$' "$hook" || { echo "FAIL: hook path"; cat "$hook"; exit 1; }
"$S/opt/ib/bin/ibwire" --version | grep -q ibwire
DESTDIR=$S PREFIX=/opt/ib ./install.sh --uninstall > /dev/null
[ ! -e "$S/opt/ib/bin/ibwire" ] && [ ! -e "$hook" ] || { echo "FAIL: uninstall left files"; exit 1; }
out=$(env PATH=/usr/bin:/bin ./install.sh 2>&1 || true)
echo "$out" | grep -q "cargo not found" || { echo "FAIL: no clear message without cargo: $out"; exit 1; }
echo "ok: staged install twice, hook at ${hook#$S}, uninstall clean"
