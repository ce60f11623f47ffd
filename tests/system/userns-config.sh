#!/usr/bin/env bash
# System test (root): the administrator's root-owned /etc/ibwire.yaml applies inside a user
# namespace that maps only the job's user, as enroot makes one for every unprivileged start
# (pyxis runs enroot as the job's user): there root's files show as the overflow uid (65534).
# A file the user owns but others could write is still refused there.
set -euo pipefail
B=${IBWIRE:?}; G=${GEN_TREE:?}
W=$(mktemp -d /tmp/ibwire-userns-XXXX); trap 'rm -rf "$W"' EXIT
chmod 755 "$W"
"$G" story "$W/node"; chmod -R a+rX "$W/node"
install -m 755 "$B" "$W/ibwire"
# /etc of a private mount namespace only: a copy with the admin's file added
cp -a /etc "$W/etc"
printf 'hca:\n  exclude: [mlx5_0]\n' > "$W/etc/ibwire.yaml"
chown root:root "$W/etc/ibwire.yaml"; chmod 644 "$W/etc/ibwire.yaml"
mkdir -m 755 "$W/rootfs"; : > "$W/fstab"; : > "$W/environ"; chown 1000:1000 "$W/fstab" "$W/environ"
unshare -m --propagation private bash -euo pipefail -c '
  W=$1
  mount --bind "$W/etc" /etc
  as_user() { setpriv --reuid=1000 --regid=1000 --clear-groups -- unshare --user --map-root-user -- "$@"; }
  as_user cat /proc/self/uid_map > "$W/map"
  as_user stat -c %u /etc/ibwire.yaml > "$W/owner"
  set +e
  as_user env HOME=/nonexistent "$W/ibwire" env --root "$W/node" > "$W/env.out" 2> "$W/env.err"; echo $? > "$W/env.rc"
  as_user env HOME=/nonexistent ENROOT_ROOTFS="$W/rootfs" ENROOT_MOUNTS="$W/fstab" ENROOT_ENVIRON="$W/environ" \
    "$W/ibwire" hook 2> "$W/hook.err"; echo $? > "$W/hook.rc"
  # the user own file, writable by others: still refused inside
  printf "hca:\n  exclude: [mlx5_1]\n" > "$W/user.yaml"; chown 1000:1000 "$W/user.yaml"; chmod 666 "$W/user.yaml"
  as_user env HOME=/nonexistent IBWIRE_CONFIG="$W/user.yaml" "$W/ibwire" env --root "$W/node" > /dev/null 2> "$W/bad.err"; echo $? > "$W/bad.rc"
' _ "$W"
echo "uid_map inside: $(tr -s ' ' < "$W/map")"
[ "$(cat "$W/owner")" = 65534 ] || { echo "FAIL: /etc/ibwire.yaml shows owner $(cat "$W/owner") inside, not the overflow uid"; exit 1; }
[ "$(cat "$W/env.rc")" = 0 ] || { echo "FAIL: env rc $(cat "$W/env.rc"): $(cat "$W/env.err")"; exit 1; }
grep -q '^export NCCL_IB_HCA=' "$W/env.out" || { echo "FAIL: no NCCL_IB_HCA: $(cat "$W/env.out")"; exit 1; }
if grep '^export NCCL_IB_HCA=' "$W/env.out" | grep -q 'mlx5_0:'; then
  echo "FAIL: the admin's exclude [mlx5_0] did not apply: $(grep NCCL_IB_HCA "$W/env.out")"; exit 1
fi
if grep -q 'refused' "$W/hook.err" "$W/environ"; then
  echo "FAIL: the hook refused the admin's file: $(cat "$W/hook.err")"; exit 1
fi
[ "$(cat "$W/hook.rc")" = 0 ] || { echo "FAIL: hook rc $(cat "$W/hook.rc"): $(cat "$W/hook.err")"; exit 1; }
[ "$(cat "$W/bad.rc")" != 0 ] && grep -q 'writable by group or others' "$W/bad.err" \
  || { echo "FAIL: a world-writable user file was not refused (rc $(cat "$W/bad.rc")): $(cat "$W/bad.err")"; exit 1; }
echo "ok: admin file (owner 65534 inside) applied: $(grep NCCL_IB_HCA "$W/env.out"); world-writable file refused"
