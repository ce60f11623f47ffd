#!/usr/bin/env bash
# The discovery part of enroot's stock 99-mellanox.sh (v4), for timing next to `ibwire hook`:
# its required-tool checks, the reading of MELLANOX_* from the environ file, and the three
# globs over mlx?_core functions — everything but its enroot-mount calls, which cannot run
# outside enroot. A lower bound of the stock hook's cost. SYSFS=<tree>/sys replaces /sys.
set -euo pipefail
shopt -s lastpipe nullglob
export PATH="${PATH}:/usr/sbin:/sbin"
for cmd in grep awk ldd ldconfig; do command -v "$cmd" > /dev/null; done
SYSFS=${SYSFS:-/sys}
tac "${ENROOT_ENVIRON:-/dev/null}" | grep "^MELLANOX_" | while IFS='=' read -r key value; do
    [ -z "${!key+x}" ] && export "${key}=${value}" || :
done || :
[ -z "${MELLANOX_VISIBLE_DEVICES-}" ] || [ "${MELLANOX_VISIBLE_DEVICES}" = "void" ] && exit 0
devices=() ifaces=() issms=() umads=()
for uevent in "$SYSFS"/bus/pci/drivers/mlx?_core/*/infiniband_verbs/*/uevent; do
    devices+=("/dev/$(awk -F= '/DEVNAME/ {print $2}' "$uevent")")
done
for uevent in "$SYSFS"/bus/pci/drivers/mlx?_core/*/infiniband/*/uevent; do
    ifaces+=("$(awk -F= '/NAME/ {print $2}' "$uevent")")
done
for uevent in "$SYSFS"/bus/pci/drivers/mlx?_core/*/infiniband_mad/*/uevent; do
    case "$(awk -F= '/DEVNAME/ {print $2}' "$uevent")" in
        */issm*) issms+=("x") ;; */umad*) umads+=("x") ;;
    esac
done
echo "${#devices[@]} devices ${#ifaces[@]} ifaces"
