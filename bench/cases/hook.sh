# sourced by bench/run.sh
: > "$W/environ"
# enroot's variables are exported for these rows (as enroot sets them) instead of an `env`
# wrapper, whose own exec would be counted in the hook's time.
export ENROOT_RESTRICT_DEV=y ENROOT_ROOTFS=$W ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=$W/environ
stock="env MELLANOX_VISIBLE_DEVICES=all SYSFS=$W/story/sys $PWD/bench/stock-mellanox-discovery.sh"
row "hook, story node, restricted /dev" "$B hook --root $W/story"
row "hook, 512 RDMA functions (SR-IOV)" "$B hook --root $W/n512"
row "stock 99-mellanox.sh discovery (no mounts), story node" "$stock"
pair "hook vs stock discovery, story node, one hyperfine run" "$B hook --root $W/story" "$stock"
unset ENROOT_RESTRICT_DEV ENROOT_ROOTFS ENROOT_MOUNTS ENROOT_ENVIRON
