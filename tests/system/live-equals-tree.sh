#!/usr/bin/env bash
# System test (root): the live probe (the kernel resolves paths; kernfs links are taken as
# written, the driver core's layout trusted) and the tree probe (--root: openat2 confined to
# the tree, every link walked) must see the same node. Each fixture tree is bound over /sys,
# /proc and /dev/infiniband in a private mount namespace; `probe --json` and the hook's
# decisions are compared with their --root twins on the story node, SR-IOV trees of 12 and
# 512 RDMA functions, and one of 256 where every VF also has its IPoIB netdev (gen_tree sriov:
# probe records those by their links only, which must read the same both ways).
set -euo pipefail
B=${IBWIRE:?}; G=${GEN_TREE:?}
W=$(mktemp -d /tmp/ibwire-live-XXXX); trap 'rm -rf "$W"' EXIT
: > "$W/environ"
hook_env=(ENROOT_RESTRICT_DEV=y "ENROOT_ROOTFS=$W" ENROOT_MOUNTS=/dev/null "ENROOT_ENVIRON=$W/environ" IBWIRE_DEBUG=1)
for kind in story "scaled 12 0" "scaled 512 0" "sriov 256"; do
  T="$W/t"; rm -rf "$T"
  # shellcheck disable=SC2086
  "$G" $kind "$T"
  mkdir -p "$T/dev/infiniband"
  "$B" probe --json --root "$T" > "$W/tree.json"
  : > "$W/environ"   # what a hook wrote, the next one would take for the job's own setting
  env "${hook_env[@]}" "$B" hook --root "$T" 2> "$W/tree-hook.txt"
  : > "$W/environ"
  # A network namespace of its own: the live probe's addresses come from netlink, not the tree.
  unshare -m -n --propagation private bash -euo pipefail -c '
    T=$1; B=$2; W=$3; shift 3
    mount --bind "$T/sys" /sys
    mount -t tmpfs ibwire-dev /dev
    mkdir /dev/infiniband && mount --bind "$T/dev/infiniband" /dev/infiniband
    mount --bind "$T/proc" /proc
    "$B" probe --json --no-nvidia-smi > "$W/live.json"
    env "$@" "$B" hook 2> "$W/live-hook.txt"
  ' _ "$T" "$B" "$W" "${hook_env[@]}"
  python3 - "$W" "$kind" <<'PY'
import json, sys
w, kind = sys.argv[1], sys.argv[2]
tree, live = (json.load(open(f"{w}/{n}.json")) for n in ("tree", "live"))
for key in ("rdma", "gpus"):
    assert tree[key] == live[key], f"{kind}: {key} differs between --root and live"
assert tree["host"]["dev_infiniband"] == live["host"]["dev_infiniband"], kind
tn = {i["name"]: i.get("pci") for i in tree["net"]}
ln = {i["name"]: i.get("pci") for i in live["net"]}
assert tn == ln, f"{kind}: interfaces or their PCI functions differ"
def decisions(path):
    lines = open(path).read().splitlines()
    keep = [l for l in lines if l.startswith("ibwire-hook: devices:") or "/dev/infiniband" in l or "NCCL_IB_HCA" in l]
    assert keep, f"{kind}: no decision in {path}: {lines}"
    return keep
td, ld = decisions(f"{w}/tree-hook.txt"), decisions(f"{w}/live-hook.txt")
assert td == ld, f"{kind}: hook decisions differ\n--root: {td}\nlive:   {ld}"
print(f"{kind}: live = --root ({len(tree['rdma'])} RDMA devices, {len(tree['gpus'])} GPUs, {len(td)} hook decision lines)")
PY
done
