# sourced by bench/run.sh
: > "$W/environ"
row "hook, story node, restricted /dev" "env ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS=$W ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=$W/environ IBWIRE_ROOT=$W/story $B hook"
row "stock 99-mellanox.sh discovery (no mounts), same tree" "env MELLANOX_VISIBLE_DEVICES=all SYSFS=$W/story/sys ENROOT_ENVIRON=$W/environ $PWD/bench/stock-mellanox-discovery.sh"
