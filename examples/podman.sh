#!/usr/bin/env bash
# Multi-node PyTorch in podman (or Docker ≥ 25 with CDI enabled) on a node ibwire knows.
# Once per node (root), or let packaging/systemd/ibwire-cdi.timer keep it fresh:
#   ibwire cdi --output /var/run/cdi/ibwire.yaml
# Then, on each node (MASTER_ADDR: the first node's address; NODE_RANK: 0, 1, …):
#   - ibwire.dev/hca=healthy brings the healthy HCAs' /dev/infiniband nodes, rdma_cm and the
#     NCCL_IB_HCA of exactly that set (the LID-0 bond is not offered, so it cannot be taken);
#   - ibwire launch inside decides NCCL_SOCKET_IFNAME from what the container sees, pins
#     NCCL_NET=IB for multi-node runs, and watches NCCL's init (a TCP fallback fails the job).
# Verified here with Debian 12's podman 4.3.1 + runc (tests/system/cdi-podman.sh); GPUs come
# from NVIDIA's own CDI spec (nvidia-ctk cdi generate), not verified here.
set -euo pipefail
IMAGE=${IMAGE:-nvcr.io/nvidia/pytorch:24.05-py3}
exec podman run --rm --network host --ipc host --ulimit memlock=-1 \
  --device nvidia.com/gpu=all \
  --device ibwire.dev/hca=healthy \
  -v "$(command -v ibwire)":/usr/local/bin/ibwire:ro \
  -e MASTER_ADDR="${MASTER_ADDR:?}" -e MASTER_PORT="${MASTER_PORT:-29500}" \
  -e NNODES="${NNODES:?}" -e NODE_RANK="${NODE_RANK:?}" \
  -v "$PWD":/work -w /work "$IMAGE" \
  ibwire launch -- train.py "$@"
