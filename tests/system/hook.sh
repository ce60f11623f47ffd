#!/usr/bin/env bash
# System test (root): the hook on a fixture node with the fixture's /sys bound over /sys, real
# placeholder device nodes, its fstab lines applied with real bind mounts into a scratch rootfs
# whose /dev is a tmpfs (as 10-devices.sh makes it), and nothing created on the host.
set -euo pipefail
B=${IBWIRE:?}; G=${GEN_TREE:?}
W=$(mktemp -d /tmp/ibwire-hook-XXXX); trap 'rm -rf "$W"' EXIT
"$G" story "$W/node"
host_before=$(ls -la /dev/infiniband 2>&1 || true)
mkdir -p "$W/rootfs/dev" "$W/rt"
: > "$W/fstab"; : > "$W/environment"
unshare -m --propagation private bash -euo pipefail -c '
  W=$1; B=$2
  mount --bind "$W/node/sys" /sys
  # /dev of this namespace only: a tmpfs with real char nodes (uverbs majors 231:192+N)
  mount -t tmpfs ibwire-dev /dev
  mkdir /dev/infiniband
  for n in 0 1 3 4 5 6 7 8 9; do mknod /dev/infiniband/uverbs$n c 231 $((192 + n)); done
  mknod /dev/infiniband/rdma_cm c 10 58
  mount -t tmpfs ibwire-rootfs-dev "$W/rootfs/dev"       # the restricted /dev
  ENROOT_ROOTFS=$W/rootfs ENROOT_MOUNTS=$W/fstab ENROOT_ENVIRON=$W/environment \
    ENROOT_RESTRICT_DEV=y "$B" hook
  # 99-mellanox.sh (stock, MELLANOX_VISIBLE_DEVICES=0) binds its node at once, before enroot
  # applies the hook lines: ours must still apply on top of it.
  mkdir -p "$W/rootfs/dev/infiniband"; touch "$W/rootfs/dev/infiniband/uverbs0"
  mount --bind /dev/infiniband/uverbs0 "$W/rootfs/dev/infiniband/uverbs0"
  mount -o remount,bind,ro,nosuid,noexec "$W/rootfs/dev/infiniband/uverbs0"
  # apply the lines as enroot-mount would: x-create=file, bind, then remount nosuid,noexec
  while read -r src dst type opts freq pass; do
    [ -z "$src" ] && continue
    [ "$pass" = 0 ] || { echo "passno $pass is not 0" >&2; exit 1; }
    t="$W/rootfs$dst"; mkdir -p "$(dirname "$t")"; [ -e "$t" ] || touch "$t"
    mount --bind "$src" "$t"
    mount -o remount,bind,nosuid,noexec "$t"
  done < "$W/fstab"
  ls "$W/rootfs/dev/infiniband" | tr "\n" " " > "$W/seen"
  stat -c "%t:%T" "$W/rootfs/dev/infiniband/uverbs3" > "$W/major"
' _ "$W" "$B"
seen=$(cat "$W/seen")
[ "$seen" = "rdma_cm uverbs0 uverbs3 uverbs4 uverbs5 uverbs6 uverbs7 uverbs8 uverbs9 " ] || { echo "FAIL: rootfs /dev/infiniband has: $seen"; exit 1; }
[ "$(cat "$W/major")" = "e7:c3" ] || { echo "FAIL: uverbs3 is not char 231:195: $(cat "$W/major")"; exit 1; }
grep -q '^NCCL_IB_HCA="=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1"$' "$W/environment" || { echo "FAIL: environ"; cat "$W/environment"; exit 1; }
host_after=$(ls -la /dev/infiniband 2>&1 || true)
[ "$host_before" = "$host_after" ] || { echo "FAIL: host /dev/infiniband changed"; exit 1; }
echo "ok: rootfs /dev/infiniband = $seen; host untouched"
