# sourced by bench/run.sh
: > "$W/environ"
hook() { echo "env ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS=$W ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=$W/environ $B hook --root $1"; }
stock="env MELLANOX_VISIBLE_DEVICES=all SYSFS=$W/story/sys ENROOT_ENVIRON=$W/environ $PWD/bench/stock-mellanox-discovery.sh"
row "hook, story node, restricted /dev" "$(hook "$W/story")"
row "hook, 512 RDMA functions (SR-IOV)" "$(hook "$W/n512")"
row "stock 99-mellanox.sh discovery (no mounts), story node" "$stock"
pair "hook vs stock discovery, story node, one interleaved run" "$(hook "$W/story")" "$stock"
