#!/usr/bin/env bash
# System test (root): a real Slurm 22.05 cluster from Debian packages — slurmctld and two slurmd
# "nodes" in network namespaces, munge, fake GPU GRES — runs examples/train-baremetal.sbatch:
# `srun ibwire launch -- examples/allreduce.py` on 2 nodes, real torchrun (gloo), to completion.
# slurm.conf's TaskProlog is `ibwire taskprolog`, each node reading its own fixture tree (node1
# the story node, node2 the same with mlx5_6 down): bare `srun env` tasks get each node's
# decided NCCL settings, keep a value the job set, and still run with a broken config.
# HealthCheckProgram=ibwire-health (the link) drains node2 while its mlx5_6 is down, with
# ibwire's reason, resumes it once healthy, and leaves an admin's drain of node1 alone.
# Recipe and pitfalls: shared/spec/ci-recipes.md §1. Bounded by sbatch --time and timeouts.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
B=${IBWIRE:?}; G=${GEN_TREE:?}; VENV=$(tests/system/setup-torch.sh)
for c in slurmctld slurmd sbatch munged mungekey; do command -v $c >/dev/null || { echo "FAIL: $c missing (apt-get install slurmctld slurmd slurm-client munge)"; exit 1; }; done
. tests/system/netns-lib.sh
W=$(mktemp -d /tmp/ibwire-slurm-XXXX)
cleanup() {
  for d in slurmd.node1 slurmd.node2 slurmctld munged; do [ -f "$W/$d.pid" ] && kill "$(cat "$W/$d.pid")" 2>/dev/null || true; done
  sleep 0.5; netns_down; rm -rf "$W"
}
trap cleanup EXIT
netns_up
mkdir -p "$W"/{munge,msock,log,state,spool/node1,spool/node2,gpu,jobs,etc}
chmod 700 "$W/munge"; chmod 711 "$W"; chmod 755 "$W/msock"   # munged: the socket's directories searchable by all
# Our own munged on a socket in $W (slurm.conf's AuthInfo names it): a munged, lock file or
# /run/munge left by the package or an earlier run (CI saw a munge-owned lock there) is never
# touched or relied on.
MS=$W/msock/munge.socket
mungekey -c -k "$W/munge/munge.key" 2>/dev/null || mungekey -c -f -k "$W/munge/munge.key"
munged -F --key-file="$W/munge/munge.key" --socket="$MS" --pid-file="$W/munge/munged.pid" \
  --seed-file="$W/munge/seed" > "$W/log/munged.log" 2>&1 < /dev/null &
echo $! > "$W/munged.pid"
for _ in $(seq 50); do munge -S "$MS" -n 2>/dev/null | unmunge -S "$MS" >/dev/null 2>&1 && break; sleep 0.1; done
munge -S "$MS" -n 2>/dev/null | unmunge -S "$MS" >/dev/null 2>&1 || { echo "FAIL: munged did not start"; cat "$W/log/munged.log"; exit 1; }
for i in 0 1 2 3 4 5 6 7; do mknod "$W/gpu/nvidia$i" c 195 $i; done
"$G" story "$W/trees/node1"; "$G" story "$W/trees/node2"
for n in 1 2; do echo node$n > "$W/trees/node$n/proc/sys/kernel/hostname"; done   # as each node names itself
echo "1: DOWN" > "$(readlink -f "$W/trees/node2/sys/class/infiniband/mlx5_6")/ports/1/state"
mkdir -p "$W/bin"
printf '#!/bin/sh\nexec %s taskprolog --root %s/trees/"$(hostname)"\n' "$B" "$W" > "$W/bin/taskprolog"
chmod 755 "$W/bin/taskprolog"
printf 'hca: [unclosed\n' > "$W/broken.yaml"
cat > "$W/etc/slurm.conf" <<CONF
ClusterName=ci
SlurmctldHost=node1(10.77.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MS
CredType=cred/munge
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool/%n
SlurmctldPidFile=$W/slurmctld.pidfile
SlurmdPidFile=$W/slurmd.%n.pidfile
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
TaskProlog=$W/bin/taskprolog
GresTypes=gpu
NodeName=node[1-2] CPUs=2 RealMemory=1000 Gres=gpu:8 State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
printf 'AutoDetect=off\nNodeName=node[1-2] Name=gpu File=%s/gpu/nvidia[0-7]\n' "$W" > "$W/etc/gres.conf"
export SLURM_CONF=$W/etc/slurm.conf
in_node() {   # NS HOSTNAME LOGNAME CMD...
  local ns=$1 h=$2 log=$3; shift 3
  ip netns exec "$ns" unshare --uts sh -c 'mount -t tmpfs cgroup_root /sys/fs/cgroup &&
    mkdir /sys/fs/cgroup/systemd && mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd &&
    hostname "$0" && exec "$@"' "$h" "$@" > "$W/log/$log.out" 2>&1 < /dev/null &
  echo $! > "$W/$log.pid"
}
in_node ibw-n1 node1 slurmctld slurmctld -D -f "$SLURM_CONF"; sleep 1
in_node ibw-n1 node1 slurmd.node1 slurmd -D -N node1 -f "$SLURM_CONF"
in_node ibw-n2 node2 slurmd.node2 slurmd -D -N node2 -f "$SLURM_CONF"
for _ in $(seq 120); do
  [ "$(ip netns exec ibw-n1 sinfo -h -o %t 2>/dev/null)" = idle ] && break; sleep 0.5
done
[ "$(ip netns exec ibw-n1 sinfo -h -o %t 2>/dev/null)" = idle ] || { echo "FAIL: nodes not idle"; ip netns exec ibw-n1 sinfo 2>&1; tail -n 20 "$W"/log/*; exit 1; }
ln -s "$B" "$W/bin/ibwire"
jid=$(ip netns exec ibw-n1 env PATH="$W/bin:$VENV/bin:$PATH" PYTHONWARNINGS=ignore PG_TIMEOUT=60 \
  IBWIRE_LAUNCH_ARGS=--explain \
  `# --gpus-per-node=1 overrides the example's 8: the fake GPUs run one gloo rank a node` \
  sbatch --parsable --time=3 --gpus-per-node=1 --chdir="$REPO" -o "$W/jobs/train-%j.out" examples/train-baremetal.sbatch)
for _ in $(seq 400); do
  ip netns exec ibw-n1 squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 0.5
done
state=$(ip netns exec ibw-n1 scontrol show job "$jid" | grep -o 'JobState=[A-Z]*' || true)
out="$W/jobs/train-$jid.out"
[ "$state" = JobState=COMPLETED ] || { echo "FAIL: job $jid $state"; cat "$out"; tail -20 "$W"/log/slurmd.node*.log; exit 1; }
[ "$(grep -c 'allreduce_sum=3.0 expected=3.0' "$out")" = 2 ] || { echo "FAIL: output"; cat "$out"; exit 1; }
[ "$(grep -c '^GLOO_SOCKET_IFNAME=eno8303\( (yours, kept)\)\?$' "$out")" = 2 ] || { echo "FAIL: interface"; cat "$out"; exit 1; }
echo "ok: sbatch examples/train-baremetal.sbatch (job $jid) COMPLETED on node[1-2]; both ranks allreduce_sum=3.0 over eno8303"
# The README's quick start as written, on nodes with HCAs (each node's launch reads its fixture
# tree): `srun ibwire launch -- train.py` (real torchrun; the script replays NCCL 2.28.9's real
# log, its transport as NCCL prints IB: tests/system/nccl-standin.py), then `ibwire verify
# --from-log slurm-<id>.out` in the submit directory.
mkdir -p "$W/bin2" "$W/submit"
printf '#!/bin/sh
IBWIRE_ROOT=%s/trees/"$(hostname)" exec %s "$@"\n' "$W" "$B" > "$W/bin2/ibwire"
chmod 755 "$W/bin2/ibwire"
quick() {   # IB RUN: sbatch the example from $W/submit, wait, print the job id
  ip netns exec ibw-n1 sh -c 'cd "$0/submit" && exec env "$@"' "$W" PATH="$W/bin2:$VENV/bin:$PATH" \
    PYTHONWARNINGS=ignore STANDIN_IB="$1" STANDIN_RUN="$2" STANDIN_HCAS="$HCA8" \
    SCRIPT="$REPO/tests/system/nccl-standin.py" \
    sbatch --parsable --time=3 --gpus-per-node=1 "$REPO/examples/train-baremetal.sbatch" > "$W/jid"
  local j; j=$(cat "$W/jid")
  for _ in $(seq 400); do ip netns exec ibw-n1 squeue -h -j "$j" 2>/dev/null | grep -q . || break; sleep 0.5; done
  echo "$j"
}
HCA8=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1
jid=$(quick 1 1)
out="$W/submit/slurm-$jid.out"
state=$(ip netns exec ibw-n1 scontrol show job "$jid" | grep -o 'JobState=[A-Z]*' || true)
[ "$state" = JobState=COMPLETED ] || { echo "FAIL: quick start job $jid $state"; cat "$out"; exit 1; }
for n in 1 2; do
  grep -q "ibwire launch: node$n: verdict on this node's 1 NCCL log(s): OK: IB with GPUDirect RDMA" "$out" \
    || { echo "FAIL: no verdict from node$n"; cat "$out"; exit 1; }
  ls "$W/submit/ibwire-nccl-$jid."*/nccl.node$n.*.log > /dev/null || { echo "FAIL: node$n's NCCL log not kept"; ls -R "$W/submit"; exit 1; }
done
grep -q "^ibwire launch: NCCL's log: $W/submit/ibwire-nccl-$jid" "$out" || { echo "FAIL: the kept log is not named"; cat "$out"; exit 1; }
v=$(cd "$W/submit" && "$B" verify --from-log "slurm-$jid.out") || { echo "FAIL: verify --from-log slurm-$jid.out: exit $?"; echo "$v"; exit 1; }
echo "$v" | head -1 | grep -q '^OK: IB with GPUDirect RDMA' || { echo "FAIL: verdict"; echo "$v"; exit 1; }
echo "$v" | grep -q 'nodes: 2' || { echo "FAIL: the job's two nodes"; echo "$v"; exit 1; }
echo "ok: quick start (job $jid): launch's verdict on each node, the log kept, verify --from-log slurm-$jid.out: $(echo "$v" | head -1)"
# A job whose NCCL falls back to sockets: launch stops it at init, and verify says why.
jid=$(quick "" 60)
out="$W/submit/slurm-$jid.out"
state=$(ip netns exec ibw-n1 scontrol show job "$jid" | grep -o 'JobState=[A-Z]*' || true)
[ "$state" = JobState=FAILED ] || { echo "FAIL: socket job $jid $state"; cat "$out"; exit 1; }
grep -q "NCCL chose Socket where InfiniBand/RoCE was expected" "$out" || { echo "FAIL: no stop message"; cat "$out"; exit 1; }
set +e; v=$(cd "$W/submit" && "$B" verify --from-log "slurm-$jid.out"); rc=$?; set -e
[ "$rc" = 1 ] || { echo "FAIL: verify of the socket job: exit $rc"; echo "$v"; exit 1; }
echo "$v" | head -1 | grep -q '^NOT OK: NOT ON RDMA: NCCL used Socket between nodes' || { echo "FAIL: socket verdict"; echo "$v"; exit 1; }
echo "ok: socket fallback (job $jid) stopped by launch at init; verify --from-log: $(echo "$v" | head -1)"
# TaskProlog: a bare task on each node gets that node's decisions, ...
srun_env() { ip netns exec ibw-n1 timeout 60 srun -N2 --ntasks-per-node=1 -l "$@" env 2> "$W/srun.err" | sort; }
HCA8='=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1'
HCA7='=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_7:1,mlx5_8:1,mlx5_9:1'
e=$(srun_env)
echo "$e" | grep -qx "0: NCCL_IB_HCA=$HCA8" || { echo "FAIL: TaskProlog on node1"; echo "$e" | grep -E 'NCCL|GLOO'; cat "$W/srun.err"; exit 1; }
echo "$e" | grep -qx "1: NCCL_IB_HCA=$HCA7" || { echo "FAIL: TaskProlog on node2 (mlx5_6 down)"; echo "$e" | grep -E 'NCCL|GLOO'; exit 1; }
[ "$(echo "$e" | grep -c '^[01]: NCCL_SOCKET_IFNAME==eno8303$')" = 2 ] || { echo "FAIL: NCCL_SOCKET_IFNAME"; echo "$e" | grep NCCL; exit 1; }
[ "$(echo "$e" | grep -c '^[01]: NCCL_NET=IB$')" = 2 ] || { echo "FAIL: NCCL_NET pin for a 2-node job"; echo "$e" | grep NCCL; exit 1; }
# ... keeps what the job set itself ...
e=$(srun_env --export=ALL,NCCL_SOCKET_IFNAME=custom0)
[ "$(echo "$e" | grep -c '^[01]: NCCL_SOCKET_IFNAME=custom0$')" = 2 ] || { echo "FAIL: the job's NCCL_SOCKET_IFNAME was overridden"; echo "$e" | grep NCCL; exit 1; }
# ... and a broken config costs the settings, not the task.
e=$(srun_env --export=ALL,IBWIRE_CONFIG=$W/broken.yaml)
[ "$(echo "$e" | grep -c '^[01]: SLURM_NODEID=')" = 2 ] || { echo "FAIL: tasks did not run with a broken config"; cat "$W/srun.err"; exit 1; }
echo "$e" | grep -q 'NCCL_IB_HCA' && { echo "FAIL: settings exported despite a broken config"; exit 1; }
echo "ok: TaskProlog: node1 8 rails, node2 7 (mlx5_6 down), NCCL_NET=IB, the job's NCCL_SOCKET_IFNAME kept, a broken config leaves tasks running"
# HealthCheckProgram=ibwire-health (the link: `ibwire health --drain`), each node reading its
# own tree: node2 (mlx5_6 down) is drained with ibwire's reason, node1 (healthy, drained by an
# admin) keeps the admin's drain; node2 is resumed once its tree is healthy again.
ln -s "$B" "$W/bin/ibwire-health"
# slurmd runs it with an environment of its own: this cluster's slurm.conf is not at the
# default path, so the wrapper names it for scontrol (a real node's is where scontrol looks).
printf '#!/bin/sh\nenv > %s/log/health-env."$(hostname)"\nSLURM_CONF=%s IBWIRE_ROOT=%s/trees/"$(hostname)" exec %s/bin/ibwire-health\n' "$W" "$SLURM_CONF" "$W" "$W" > "$W/bin/health"
chmod 755 "$W/bin/health"
node_line() { ip netns exec ibw-n1 scontrol show node "$1" --oneliner 2>/dev/null; }
ip netns exec ibw-n1 scontrol update NodeName=node1 State=DRAIN Reason="admin: bad dimm"
printf 'HealthCheckProgram=%s/bin/health\nHealthCheckInterval=2\nHealthCheckNodeState=ANY\n' "$W" >> "$SLURM_CONF"
ip netns exec ibw-n1 scontrol reconfigure
for _ in $(seq 120); do node_line node2 | grep -q 'Reason=ibwire: ' && break; sleep 0.5; done
n2=$(node_line node2)
echo "$n2" | grep -q 'State=[A-Z]*+DRAIN' && echo "$n2" | grep -q 'Reason=ibwire: mlx5_6 port 1: port state DOWN' \
  || { echo "FAIL: node2 not drained by ibwire health: $n2"; ls "$W/log"; cat "$W"/log/health-env.* 2>/dev/null | head; tail -5 "$W"/log/slurmd.node2.log; exit 1; }
reason=$(echo "$n2" | sed -n 's/.*Reason=\(.*\) \[.*/\1/p' | cut -c1-80)
sleep 5   # a few more health checks on node1, which is healthy and drained by the admin
n1=$(node_line node1)
echo "$n1" | grep -q 'State=[A-Z]*+DRAIN' && echo "$n1" | grep -q 'Reason=admin: bad dimm' || { echo "FAIL: the admin's drain of node1 was touched: $n1"; exit 1; }
echo "4: ACTIVE" > "$(readlink -f "$W/trees/node2/sys/class/infiniband/mlx5_6")/ports/1/state"
for _ in $(seq 120); do node_line node2 | grep -q '+DRAIN' || break; sleep 0.5; done
n2=$(node_line node2)
echo "$n2" | grep -q '+DRAIN' && { echo "FAIL: node2 not resumed once healthy: $n2"; exit 1; }
node_line node1 | grep -q 'Reason=admin: bad dimm' || { echo "FAIL: node1's admin drain changed"; node_line node1; exit 1; }
ip netns exec ibw-n1 scontrol update NodeName=node1 State=RESUME
env_note=$(grep -h '^SLURMD_NODENAME=' "$W"/log/health-env.* 2>/dev/null | sort -u | tr '\n' ' ')
echo "ok: HealthCheckProgram=ibwire-health drained node2 (Reason=$reason), resumed it when healthy, left the admin's drain of node1; slurmd's environment: ${env_note:-no SLURMD_NODENAME}"
