# sourced by bench/run.sh
# 1 024 snapshots of the story node (8 GPUs, 9 RDMA devices, 45 netdevs), one with a port down.
mkdir -p "$W/fleet"
"$B" probe --root "$W/story" --json > "$W/one.json"
python3 - "$W/one.json" "$W/fleet" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i in range(1, 1025):
    d["hostname"] = f"gpu-{i:04d}"
    json.dump(d, open(f"{sys.argv[2]}/gpu-{i:04d}.json", "w"))
PY
row "fleet, 1 024 snapshots" "$B fleet $W/fleet"
/usr/bin/time -f "%M" -o "$W/mem" "$B" fleet "$W/fleet" > /dev/null 2>&1 || true
echo "| fleet, 1 024 snapshots: peak RSS | $(( $(cat "$W/mem") / 1024 )) MiB | | | | |"
