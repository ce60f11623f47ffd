#!/usr/bin/env bash
# System test (root): Debian 12's podman (4.3.1) with runc reads the spec `ibwire cdi` writes
# from a fixture tree (device nodes with explicit type/major/minor need no node on the host):
#   - `--device KIND=healthy` gives exactly the healthy HCAs' uverbs nodes, rdma_cm and the
#     NCCL_IB_HCA of that set;
#   - asking for the LID-0 bond fails the start (it is not offered: fail-closed);
#   - the same spec with cdiVersion 0.6.0 is ignored by this podman (why ibwire writes the
#     lowest version its content needs);
#   - `ibwire launch --dry-run` inside such a container, with Kubeflow's PET_* variables, gives
#     the exact torchrun command.
# The VM needs `--runtime runc` and lowered ulimits to start containers. A kind of its own
# (ibwire.test/hca) and a spec file of its own, removed at exit.
set -euo pipefail
B=${IBWIRE:?}; G=${GEN_TREE:?}
for t in podman runc busybox ldd; do
  command -v $t > /dev/null || { echo "cdi-podman: $t is not installed (apt-get install podman runc busybox)"; exit 1; }
done
W=$(mktemp -d /tmp/ibwire-cdi-XXXX)
SPEC=/var/run/cdi/ibwire-system-test-$$.yaml
cleanup() { rm -rf "$W"; rm -f "$SPEC"; }
trap cleanup EXIT
mkdir -p /var/run/cdi
KIND=ibwire.test/hca
"$G" story "$W/tree"
# A rootfs of busybox and ibwire, each with the libraries it links (none for a static build).
R=$W/rootfs
mkdir -p "$R/bin" "$R/dev" "$R/proc" "$R/sys" "$R/tmp" "$R/etc" "$R/tree"
with_libs() { # FILE DEST
  cp "$1" "$R$2"
  ldd "$1" 2> /dev/null | grep -o '/[^ ]*' | while read -r l; do mkdir -p "$R$(dirname "$l")"; cp -L "$l" "$R$l"; done || :
}
with_libs "$(command -v busybox)" /bin/busybox
# Every applet as a link: Debian's dynamic busybox (CI's) runs no applet without one, unlike
# busybox-static's standalone shell.
for a in $(busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$R/bin/$a"; done
with_libs "$B" /bin/ibwire
"$B" cdi --root "$W/tree" --kind "$KIND" --output "$SPEC" 2> "$W/cdi.err"
grep -q '^cdiVersion: 0.3.0$' "$SPEC" || { echo "FAILED: spec version"; cat "$SPEC"; exit 1; }
P=(timeout 120 podman --runtime runc run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1"; echo "  want: $3"; echo "  got:  $2"; fail=1; fi; }

out=$("${P[@]}" --device "$KIND=healthy" --rootfs "$R" /bin/sh -c 'ls /dev/infiniband | sort | tr "\n" " "; echo; env | grep ^NCCL_' 2>&1) || { echo "FAILED: podman run: $out"; exit 1; }
check "healthy: the healthy HCAs' nodes and rdma_cm" "$(echo "$out" | sed -n 1p)" \
  "rdma_cm uverbs0 uverbs3 uverbs4 uverbs5 uverbs6 uverbs7 uverbs8 uverbs9 "
check "healthy: NCCL_IB_HCA of exactly that set" "$(echo "$out" | sed -n 2p)" \
  "NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1"
out=$("${P[@]}" --device "$KIND=mlx5_3" --rootfs "$R" /bin/ls /dev/infiniband 2>&1 | tr '\n' ' ')
check "one HCA by name: its node and rdma_cm" "$out" "rdma_cm uverbs3 "

rc=0; out=$("${P[@]}" --device "$KIND=mlx5_bond_0" --rootfs "$R" /bin/true 2>&1) || rc=$?
check "the LID-0 bond is not offered: the start fails" "$rc $(echo "$out" | grep -o 'unresolvable CDI devices' | head -n1)" "126 unresolvable CDI devices"

sed -i 's/^cdiVersion: 0.3.0$/cdiVersion: 0.6.0/' "$SPEC"
rc=0; out=$("${P[@]}" --device "$KIND=healthy" --rootfs "$R" /bin/true 2>&1) || rc=$?
check "the same spec as cdiVersion 0.6.0 is ignored by podman $(podman --version | awk '{print $3}')" "$rc $(echo "$out" | grep -o 'unresolvable CDI devices' | head -n1)" "126 unresolvable CDI devices"
sed -i 's/^cdiVersion: 0.6.0$/cdiVersion: 0.3.0/' "$SPEC"

out=$("${P[@]}" --device "$KIND=healthy" -v "$W/tree:/tree:ro" \
  -e PET_NNODES=2 -e PET_NODE_RANK=1 -e PET_MASTER_ADDR=10.9.8.7 -e PET_MASTER_PORT=23456 -e PET_NPROC_PER_NODE=8 \
  --rootfs "$R" /bin/ibwire launch --root /tree --dry-run -- train.py --lr 3e-4 2>&1) || { echo "FAILED: launch in the container: $out"; exit 1; }
check "launch --dry-run in the container reads PET_*" "$(echo "$out" | grep -o 'torchrun .*')" \
  "torchrun --nnodes=2 --nproc-per-node=8 --node-rank=1 --master-addr=10.9.8.7 --master-port=23456 train.py --lr 3e-4"
check "the spec's NCCL_IB_HCA reaches launch's decision unchanged" "$(echo "$out" | grep -o 'NCCL_IB_HCA=[^ ]*')" \
  "NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1"
exit $fail
