#!/usr/bin/env bash
# A stand-in for enroot's stock hook `99-mellanox.sh` (enroot 3.x/4.x, conf/hooks/), written for
# this project from a reading of it — not a copy — to time `ibwire hook` against an anchor with
# the stock hook's cost structure:
#   - bash with `set -euo pipefail`, `shopt -s lastpipe nullglob`, PATH extended;
#   - `common::checkcmd grep awk ldd ldconfig` (a `command -v` each);
#   - the MELLANOX_* lines of the container's environ file through `tac | grep` into a `read` loop;
#   - the three globs over `/sys/bus/pci/drivers/mlx?_core/*/{infiniband_verbs,infiniband,
#     infiniband_mad}/*/uevent`, each uevent *sourced in a subshell* (`$(. "$uevent"; echo …)`);
#   - one `enroot-mount` for the sysfs masks and rdma_cm, then per visible device one
#     `enroot-mount` and two `ln -s "$(readlink -f …)"` (common::realpath) into the rootfs.
# What it does not mirror, so it is a lower bound of the stock hook's cost: `enroot-mount` is a
# compiled program that parses its stdin and mounts; here each call is `cat > /dev/null`, a
# process that reads the same stdin and mounts nothing. The umad/issm binds (only with
# ENROOT_ALLOW_SUPERUSER as root in the user namespace) are not mirrored; common.sh's sourcing is
# replaced by the two functions used. `ln -sfn` instead of `ln -s` so that repeated runs into the
# same scratch rootfs succeed (the same one exec).
# Environment: SYSFS (default /sys) replaces /sys; ENROOT_ENVIRON, ENROOT_ROOTFS as enroot sets
# them; MELLANOX_VISIBLE_DEVICES (`all` in the benchmarks).
set -euo pipefail
shopt -s lastpipe nullglob
export PATH="${PATH}:/usr/sbin:/sbin"
SYSFS=${SYSFS:-/sys}

err() { echo "[ERROR] $*" >&2; exit 1; }
checkcmd() { for cmd in "$@"; do command -v "${cmd}" > /dev/null || err "Command not found: ${cmd}"; done; }
realpath_() { local rpath; rpath=$(readlink -f "$1" 2> /dev/null) || err "No such file or directory: $1"; printf "%s" "${rpath}"; }
enroot_mount() { cat > /dev/null; } # stand-in: see above

checkcmd grep awk ldd ldconfig

tac "${ENROOT_ENVIRON}" | grep "^MELLANOX_" | while IFS='=' read -r key value; do
    [ -v "${key}" ] || export "${key}=${value}"
done || :

if [ "${MELLANOX_VISIBLE_DEVICES:-void}" = "void" ] || [ "${MELLANOX_VISIBLE_DEVICES}" = "none" ]; then
    exit 0
fi

declare -a drivers=() devices=() ifaces=() issms=() umads=()
declare -A providers=()

for uevent in "${SYSFS}"/bus/pci/drivers/mlx?_core/*/infiniband_verbs/*/uevent; do
    case "${uevent}" in
    *mlx4*) drivers+=("mlx4") ;;
    *mlx5*) drivers+=("mlx5") ;;
    *) continue ;;
    esac
    devices+=("$(. "${uevent}"; echo "/dev/${DEVNAME}")")
done
for uevent in "${SYSFS}"/bus/pci/drivers/mlx?_core/*/infiniband/*/uevent; do
    ifaces+=("$(. "${uevent}"; echo "${NAME}")")
done
for uevent in "${SYSFS}"/bus/pci/drivers/mlx?_core/*/infiniband_mad/*/uevent; do
    case "${uevent}" in
    *issm*) issms+=("$(. "${uevent}"; echo "/dev/${DEVNAME}")") ;;
    *umad*) umads+=("$(. "${uevent}"; echo "/dev/${DEVNAME}")") ;;
    *) continue ;;
    esac
done

cat << EOF | enroot_mount
tmpfs /sys/class/infiniband tmpfs nosuid,noexec,nodev,mode=755,private
tmpfs /sys/class/infiniband_verbs tmpfs nosuid,noexec,nodev,mode=755,private
tmpfs /sys/class/infiniband_cm tmpfs nosuid,noexec,nodev,mode=755,private,nofail,silent
tmpfs /sys/class/infiniband_mad tmpfs nosuid,noexec,nodev,mode=755,private
/sys/class/infiniband_verbs/abi_version /sys/class/infiniband_verbs/abi_version none x-create=file,bind,ro,nosuid,noexec,nodev,private
/sys/class/infiniband_cm/abi_version /sys/class/infiniband_cm/abi_version none x-create=file,bind,ro,nosuid,noexec,nodev,private,nofail,silent
/sys/class/infiniband_mad/abi_version /sys/class/infiniband_mad/abi_version none x-create=file,bind,ro,nosuid,noexec,nodev,private
/dev/infiniband/rdma_cm /dev/infiniband/rdma_cm none x-create=file,bind,ro,nosuid,noexec,private
EOF

if [ "${MELLANOX_VISIBLE_DEVICES}" = "all" ]; then
    MELLANOX_VISIBLE_DEVICES="$(seq -s, 0 $((${#devices[@]} - 1)))"
fi
for id in ${MELLANOX_VISIBLE_DEVICES//,/ }; do
    if [[ ! "${id}" =~ ^[[:digit:]]+$ ]] || [ "${id}" -lt 0 ] || [ "${id}" -ge "${#devices[@]}" ]; then
        err "Unknown MELLANOX device id: ${id}"
    fi
    providers["${drivers[id]}"]=true
    enroot_mount <<< "${devices[id]} ${devices[id]} none x-create=file,bind,ro,nosuid,noexec,private"
    ln -sfn "$(realpath_ "${SYSFS}/class/infiniband/${ifaces[id]}")" "${ENROOT_ROOTFS}/sys/class/infiniband/${ifaces[id]}"
    ln -sfn "$(realpath_ "${SYSFS}/class/infiniband_verbs/${devices[id]##*/}")" "${ENROOT_ROOTFS}/sys/class/infiniband_verbs/${devices[id]##*/}"
done
