#!/usr/bin/env bash
# System test (root): `probe --capture` into a full filesystem (a 32 KiB tmpfs in a private
# mount namespace) ends with exit 2 and one line naming the file and ENOSPC.
set -euo pipefail
B=${IBWIRE:?}; G=${GEN_TREE:?}
W=$(mktemp -d /tmp/ibwire-full-XXXX); trap 'rm -rf "$W"' EXIT
"$G" story "$W/node"; mkdir -p "$W/small"
unshare -m --propagation private bash -c '
  mount -t tmpfs -o size=32k ibwire-small "$1/small"
  set +e; "$2" probe --root "$1/node" --capture "$1/small/cap" 2> "$1/err"; echo $? > "$1/rc"
' _ "$W" "$B"
rc=$(cat "$W/rc"); err=$(cat "$W/err")
[ "$rc" = 2 ] || { echo "FAIL: rc $rc: $err"; exit 1; }
[ "$(wc -l < "$W/err")" = 1 ] || { echo "FAIL: not one line: $err"; exit 1; }
case "$err" in *"No space left on device"*) ;; *) echo "FAIL: $err"; exit 1;; esac
echo "ok: full disk -> rc 2, one line: $err"
