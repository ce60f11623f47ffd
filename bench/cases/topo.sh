# sourced by bench/run.sh
row "topo, 8 GPU / 12 RDMA" "$B topo --root $W/n12 --no-nvidia-smi"
row "topo --json, 8 GPU / 12 NIC" "$B topo --root $W/n12 --no-nvidia-smi --json"
