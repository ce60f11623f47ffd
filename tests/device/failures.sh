#!/usr/bin/env bash
# Run on the `device` machine (one GPU): collect NCCL's real wording for failures ibwire's
# verify must name. Each case is a two-"node" job on one GPU (tests/device/failures.py gives
# every rank its own NCCL_HOSTID). Logs land in $OUT/failures.tgz. Every step has a time limit.
set -u
OUT=${OUT:-device-out}; W=$(mktemp -d); D=$W/failures; mkdir -p "$D"
export NCCL_NVLS_ENABLE=0 PYTHONWARNINGS=ignore NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV,BOOTSTRAP PG_TIMEOUT=40
py=tests/device/failures.py
run() { # name, then env assignments (NPROC=1: one rank)
  local name=$1; shift
  { echo "# case: $name; env: $*${TR_ARGS:+; torchrun $TR_ARGS}"; timeout ${TMO_SIG:+-s $TMO_SIG} ${TMO:-75} env "$@" torchrun ${TR_ARGS:-} --nproc-per-node=${NPROC:-2} --master-port=${PORT:-$((29500 + RANDOM % 1000))} "$py"; echo "# rc=$?"; } > "$D/$name.log" 2>&1
}
python3 -c 'import torch;print(torch.__version__, torch.cuda.nccl.version())' > "$D/versions.txt" 2>&1
# Two torchrun agents, one rank each, as two nodes' launchers (static rendezvous on localhost);
# the second agent is told it belongs to a job of $2 nodes. Their output interleaves in one file.
agents() { # name, nnodes of the second agent, env assignments
  local name=$1 nn=$2; shift 2; local port=$((29500 + RANDOM % 1000))
  { echo "# case: $name; two torchrun agents (--nnodes 2 and $nn); env: $*"
    timeout ${TMO:-75} env "$@" torchrun --nnodes=2 --node-rank=0 --nproc-per-node=1 --master-addr=127.0.0.1 --master-port=$port "$py" & ap=$!
    timeout ${TMO:-75} env "$@" torchrun --nnodes="$nn" --node-rank=1 --nproc-per-node=1 --master-addr=127.0.0.1 --master-port=$port "$py"; echo "# rc=$?"
    wait $ap; echo "# rc(agent 0)=$?"; } > "$D/$name.log" 2>&1
}
ls -la /dev/infiniband /sys/class/infiniband >> "$D/versions.txt" 2>&1
ldconfig -p | grep -i ibverbs >> "$D/versions.txt" 2>&1
# RAS's text protocol (../shared/fixtures/nccl-ras/README.md): VERBOSE STATUS from 127.0.0.1:28028.
ras() { # seconds to wait, output file
  sleep "$1"; timeout 20 python3 - "$2" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", 28028), timeout=10)
out = []
def say(l):
    out.append("> " + l); s.sendall((l + "\n").encode())
    if l != "VERBOSE STATUS":
        out.append("< " + s.recv(4096).decode().strip())
for l in ["CLIENT PROTOCOL 2", "TIMEOUT 5", "VERBOSE STATUS"]:
    say(l)
buf = b""
while True:
    try:
        d = s.recv(65536)
    except socket.timeout:
        break
    if not d:
        break
    buf += d
open(sys.argv[1], "w").write("\n".join(out) + "\n" + buf.decode(errors="replace"))
PY
}
all="socket-2node ifname-missing net-ib-forced ib-hca-prefix remote-died ibverbs-lib-missing net-plugin-missing"
for c in ${CASES:-$all}; do case $c in
  socket-2node) run socket-2node IBWIRE_CASE=ok ;;
  ifname-missing) run ifname-missing IBWIRE_CASE=ok NCCL_SOCKET_IFNAME==nonexist0 ;;
  net-ib-forced) run net-ib-forced IBWIRE_CASE=ok NCCL_NET=IB ;;
  ib-hca-prefix) run ib-hca-prefix IBWIRE_CASE=ok NCCL_IB_HCA=mlx5 ;;
  remote-died) run remote-died IBWIRE_CASE=die ;;
  ibverbs-lib-missing) run ibverbs-lib-missing IBWIRE_CASE=ok NCCL_IBVERBS_LIB=/nonexistent/libibverbs.so.1 ;;
  net-plugin-missing) run net-plugin-missing IBWIRE_CASE=ok NCCL_NET_PLUGIN=nonexistent-plugin NCCL_NET=nonexistent ;;
  # Cases added for issue 38 (logs verify's rules were not written from):
  ib-disabled) run ib-disabled IBWIRE_CASE=ok NCCL_IB_DISABLE=1 ;;
  bootstrap-lo) run bootstrap-lo IBWIRE_CASE=ok NCCL_SOCKET_IFNAME=lo ;;
  net-socket-forced) run net-socket-forced IBWIRE_CASE=ok NCCL_NET=Socket ;;
  debug-warn) run debug-warn IBWIRE_CASE=ok NCCL_DEBUG=WARN ;;
  debug-warn-died) run debug-warn-died IBWIRE_CASE=die NCCL_DEBUG=WARN ;;
  plugin-not-a-plugin) run plugin-not-a-plugin IBWIRE_CASE=ok NCCL_NET_PLUGIN=$(python3 -c 'import ctypes.util,sys;print(ctypes.util.find_library("z") or "libz.so.1")') ;;
  duplicate-gpu) run duplicate-gpu IBWIRE_CASE=dup ;;
  timestamps-subsys-all) run timestamps-subsys-all IBWIRE_CASE=ok NCCL_DEBUG_SUBSYS=ALL NCCL_DEBUG_TIMESTAMP_FORMAT='[%F %T] ' ;;
  hang-watchdog)
    ras 25 "$D/hang-watchdog.ras.txt" & rp=$!
    run hang-watchdog IBWIRE_CASE=hang IBWIRE_HANG_S=60 PG_TIMEOUT=40 NCCL_DEBUG_SUBSYS=INIT,NET,RAS
    wait $rp ;;
  # Cases added for issue 38, set 2 (2026-12-03):
  subsys-net) run subsys-net IBWIRE_CASE=ok NCCL_DEBUG_SUBSYS=NET ;;
  comm-id-bad) run comm-id-bad IBWIRE_CASE=ok NCCL_COMM_ID=192.0.2.1:5999 ;;
  buffsize-huge) run buffsize-huge IBWIRE_CASE=ok NCCL_BUFFSIZE=137438953472 ;;
  ifname-exclude-all) run ifname-exclude-all IBWIRE_CASE=ok NCCL_SOCKET_IFNAME=^lo,e,d,b,i,v,w,t,p,s,l ;;
  preinit) run preinit IBWIRE_CASE=preinit PG_TIMEOUT=20 ;;
  nsocks-bad) run nsocks-bad IBWIRE_CASE=ok NCCL_NSOCKS_PERTHREAD=64 NCCL_SOCKET_NTHREADS=16 ;;
  debug-version) run debug-version IBWIRE_CASE=ok NCCL_DEBUG=VERSION ;;
  socket-family-v6) run socket-family-v6 IBWIRE_CASE=ok NCCL_SOCKET_FAMILY=AF_INET6 ;;
  single-rank) NPROC=1 run single-rank IBWIRE_CASE=ok ;;
  single-rank-cumem-off) NPROC=1 run single-rank-cumem-off IBWIRE_CASE=ok NCCL_CUMEM_ENABLE=0 NCCL_DEBUG_SUBSYS=ALL ;;
  debug-file)
    mkdir -p "$D/debug-file.d"
    run debug-file IBWIRE_CASE=ok NCCL_DEBUG_FILE="$D/debug-file.d/nccl.%h.%p.log" ;;
  # Cases added for issue 38, set 3 (2026-12-06):
  fillmem) run fillmem IBWIRE_CASE=fillmem ;;
  killmid) run killmid IBWIRE_CASE=killmid ;;
  segv) run segv IBWIRE_CASE=segv ;;
  blocking-wait-hang) run blocking-wait-hang IBWIRE_CASE=hang IBWIRE_HANG_S=60 PG_TIMEOUT=30 TORCH_NCCL_BLOCKING_WAIT=1 ;;
  subsys-tuning) run subsys-tuning IBWIRE_CASE=ok NCCL_DEBUG_SUBSYS=TUNING,GRAPH ;;
  algo-bogus) run algo-bogus IBWIRE_CASE=ok NCCL_ALGO=bogus ;;
  nthreads-odd) run nthreads-odd IBWIRE_CASE=ok NCCL_NTHREADS=100 ;;
  debug-file-unwritable) run debug-file-unwritable IBWIRE_CASE=ok NCCL_DEBUG_FILE=/nonexistent/dir/nccl.%h.%p.log ;;
  # Cases added for issue 38, set 4 (2026-12-06):
  restart-then-ok) TR_ARGS=--max-restarts=1 run restart-then-ok IBWIRE_CASE=failfirst ;;
  restart-fail-twice) TR_ARGS=--max-restarts=1 run restart-fail-twice IBWIRE_CASE=failalways ;;
  torch-oom) run torch-oom IBWIRE_CASE=torchoom ;;
  desync-skip) run desync-skip IBWIRE_CASE=skip PG_TIMEOUT=20 TORCH_NCCL_DESYNC_DEBUG=1 ;;
  # Cases added for issue 38, set 5 (2026-12-06):
  three-nodes) NPROC=3 run three-nodes IBWIRE_CASE=ok ;;
  hang-noabort) run hang-noabort IBWIRE_CASE=hang IBWIRE_HANG_S=200 PG_TIMEOUT=300 TORCH_NCCL_ASYNC_ERROR_HANDLING=0 ;;
  no-gpu-visible) NPROC=1 run no-gpu-visible IBWIRE_CASE=ok CUDA_VISIBLE_DEVICES= ;;
  topo-file-missing) NPROC=1 run topo-file-missing IBWIRE_CASE=ok NCCL_TOPO_FILE=/nonexistent/topo.xml ;;
  topo-dump-unwritable) NPROC=1 run topo-dump-unwritable IBWIRE_CASE=ok NCCL_TOPO_DUMP_FILE=/nonexistent/dir/topo.xml ;;
  collective-mismatch) run collective-mismatch IBWIRE_CASE=mismatch PG_TIMEOUT=20 TORCH_DISTRIBUTED_DEBUG=DETAIL ;;
  size-mismatch) run size-mismatch IBWIRE_CASE=sizemismatch PG_TIMEOUT=20 ;;
  proto-mismatch) run proto-mismatch IBWIRE_CASE=ok PG_TIMEOUT=20 NCCL_PROTO=Simple IBWIRE_RANK1_ENV=NCCL_PROTO=LL ;;
  net-ib-but-disabled) run net-ib-but-disabled IBWIRE_CASE=ok NCCL_NET=IB NCCL_IB_DISABLE=1 ;;
  debug-trace) NPROC=1 run debug-trace IBWIRE_CASE=ok NCCL_DEBUG=TRACE ;;
  sendrecv) run sendrecv IBWIRE_CASE=sendrecv ;;
  # Cases added for issue 38, set 6 (2026-12-06):
  ordinal) run ordinal IBWIRE_CASE=ordinal ;;
  killinit) run killinit IBWIRE_CASE=killinit PG_TIMEOUT=20 ;;
  single-net-ib) NPROC=1 run single-net-ib IBWIRE_CASE=ok NCCL_NET=IB ;;
  single-hca-bond) NPROC=1 run single-hca-bond IBWIRE_CASE=ok NCCL_IB_HCA=mlx5_bond_0 ;;
  single-ifname-missing) NPROC=1 run single-ifname-missing IBWIRE_CASE=ok NCCL_SOCKET_IFNAME==nonexist0 ;;
  single-plugin-none) NPROC=1 run single-plugin-none IBWIRE_CASE=ok NCCL_NET_PLUGIN=none ;;
  single-nonblocking) NPROC=1 run single-nonblocking IBWIRE_CASE=ok TORCH_NCCL_USE_COMM_NONBLOCKING=1 ;;
  # Cases added for issue 38, set 7 (2026-12-06):
  ras-port-taken)
    # another program holds RAS's client port (localhost:28028) without SO_REUSEPORT
    timeout 60 python3 -c 'import socket,time;s=socket.socket();s.bind(("127.0.0.1",28028));s.listen();time.sleep(50)' & hp=$!
    sleep 2; NPROC=1 run ras-port-taken IBWIRE_CASE=ok; kill $hp 2>/dev/null; wait $hp 2>/dev/null ;;
  single-newgroup) NPROC=1 run single-newgroup IBWIRE_CASE=newgroup ;;
  single-pyerr) NPROC=1 run single-pyerr IBWIRE_CASE=pyerr ;;
  topo-file-garbage)
    printf '<system version="1">\n<cpu numaid="0" affinity="ff"\n<pci busid=' > "$W/bad-topo.xml"
    NPROC=1 run topo-file-garbage IBWIRE_CASE=ok NCCL_TOPO_FILE="$W/bad-topo.xml" ;;
  single-ras-off-all) NPROC=1 run single-ras-off-all IBWIRE_CASE=ok NCCL_RAS_ENABLE=0 NCCL_DEBUG_SUBSYS=ALL ;;
  devassert) run devassert IBWIRE_CASE=devassert ;;
  # Slurm's scancel/time limit as torchrun sees it: SIGTERM to the agent in a hung job.
  sigterm-agent) TMO=25 TMO_SIG=TERM run sigterm-agent IBWIRE_CASE=hang IBWIRE_HANG_S=120 PG_TIMEOUT=100 ;;
  # Another job already holds the rendezvous port.
  port-in-use)
    timeout 40 python3 -c 'import socket,time;s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);s.bind(("0.0.0.0",29911));s.listen();time.sleep(35)' &
    sleep 1; PORT=29911 TMO=30 run port-in-use IBWIRE_CASE=ok; wait ;;
  # The rendezvous endpoint cannot be reached (a wrong MASTER_ADDR): no NCCL line at all.
  rdzv-unreachable) TMO=40 TR_ARGS="--nnodes=2 --rdzv-backend=c10d --rdzv-endpoint=192.0.2.1:29400 --rdzv-conf=join_timeout=20" run rdzv-unreachable IBWIRE_CASE=ok ;;
  rank1-ipv6) run rank1-ipv6 IBWIRE_CASE=ok PG_TIMEOUT=20 IBWIRE_RANK1_ENV=NCCL_SOCKET_FAMILY=AF_INET6 ;;
  rank1-buffsize) run rank1-buffsize IBWIRE_CASE=ok PG_TIMEOUT=20 IBWIRE_RANK1_ENV=NCCL_BUFFSIZE=65536 ;;
  # PyTorch's flight recorder dumps on the watchdog's timeout.
  dump-on-timeout) run dump-on-timeout IBWIRE_CASE=skip PG_TIMEOUT=20 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DEBUG_INFO_TEMP_FILE=$W/nccl_trace_rank_ ;;
  # INIT left out of the subsystems: no Init COMPLETE line in a healthy job.
  subsys-no-init) run subsys-no-init IBWIRE_CASE=ok NCCL_DEBUG_SUBSYS=^INIT ;;
  subsys-coll) run subsys-coll IBWIRE_CASE=ok NCCL_DEBUG_SUBSYS=COLL,NET ;;
  nonblocking-die) run nonblocking-die IBWIRE_CASE=die TORCH_NCCL_USE_COMM_NONBLOCKING=1 ;;
  four-nodes-killmid) NPROC=4 run four-nodes-killmid IBWIRE_CASE=killmid ;;
  nan-check) run nan-check IBWIRE_CASE=nan TORCH_NCCL_NAN_CHECK=1 ;;
  late-node) run late-node IBWIRE_CASE=late IBWIRE_LATE_S=50 PG_TIMEOUT=20 ;;
  subsys-env-only) run subsys-env-only IBWIRE_CASE=ok NCCL_DEBUG_SUBSYS=ENV ;;
  # torchrun's --tee: every line behind `[default<rank>]:`
  tee-prefix) TR_ARGS="--tee 3" run tee-prefix IBWIRE_CASE=ok ;;
  # torchrun's --local-ranks-filter: rank 0's output only
  ranks-filter) TR_ARGS="--local-ranks-filter 0" run ranks-filter IBWIRE_CASE=ok ;;
  rank1-ifname-lo) run rank1-ifname-lo IBWIRE_CASE=ok PG_TIMEOUT=20 IBWIRE_RANK1_ENV=NCCL_SOCKET_IFNAME=lo ;;
  ranks-filter-die) TR_ARGS="--local-ranks-filter 0" run ranks-filter-die IBWIRE_CASE=die ;;
  gloo-only) run gloo-only IBWIRE_CASE=gloo ;;
  progress-cr) run progress-cr IBWIRE_CASE=progress ;;
  cpp-log-info) run cpp-log-info IBWIRE_CASE=ok TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL ;;
  single-progress) NPROC=1 run single-progress IBWIRE_CASE=progress ;;
  # Cases added for issue 38, set 11 (2026-12-06):
  freeze) run freeze IBWIRE_CASE=freeze PG_TIMEOUT=20 ;;
  single-tuner-missing) NPROC=1 run single-tuner-missing IBWIRE_CASE=ok NCCL_TUNER_PLUGIN=nonexistent-tuner ;;
  single-profiler-missing) NPROC=1 run single-profiler-missing IBWIRE_CASE=ok NCCL_PROFILER_PLUGIN=nonexistent-profiler ;;
  conf-file-ifname)
    echo "NCCL_SOCKET_IFNAME=nonexist0" > "$W/nccl.conf"
    run conf-file-ifname IBWIRE_CASE=ok NCCL_CONF_FILE="$W/nccl.conf" ;;
  single-env-garbage) NPROC=1 run single-env-garbage IBWIRE_CASE=ok NCCL_BUFFSIZE=abc NCCL_NTHREADS=-5 NCCL_IB_TIMEOUT=zz ;;
  single-graph) NPROC=1 run single-graph IBWIRE_CASE=graph ;;
  single-ctas-bad) NPROC=1 run single-ctas-bad IBWIRE_CASE=ok NCCL_MIN_CTAS=32 NCCL_MAX_CTAS=2 ;;
  async-skip-cleanup) run async-skip-cleanup IBWIRE_CASE=hang IBWIRE_HANG_S=60 PG_TIMEOUT=20 TORCH_NCCL_ASYNC_ERROR_HANDLING=3 ;;
  # the second agent believes in a 3-node job; with the static rendezvous the job still ran as
  # two nodes (device set 11: both ranks nranks 2, rc 0)
  nranks-mismatch) TMO=60 agents nranks-mismatch 3 IBWIRE_CASE=ok PG_TIMEOUT=25 ;;
  two-agents-die) agents two-agents-die 2 IBWIRE_CASE=die ;;
  nofile-low) ( ulimit -n 160; run nofile-low IBWIRE_CASE=ok NCCL_NSOCKS_PERTHREAD=8 NCCL_SOCKET_NTHREADS=8 ) ;;
  # Cases added for issue 38, set 12 (2026-12-06): PyTorch's store between the ranks
  uid-late) run uid-late IBWIRE_CASE=uidlate IBWIRE_LATE_S=45 PG_TIMEOUT=15 ;;
  uid-gone) run uid-gone IBWIRE_CASE=uidgone PG_TIMEOUT=20 ;;
  # Cases added for issue 38, set 13 (2026-12-06): a forced multi-node NVLink on a node without
  # it, the store's own rank dying, and healthy single-node runs with PyTorch's harmless noise
  mnnvl-forced) run mnnvl-forced IBWIRE_CASE=ok NCCL_MNNVL_ENABLE=1 PG_TIMEOUT=25 ;;
  rank0-died) run rank0-died IBWIRE_CASE=die0 PG_TIMEOUT=25 ;;
  single-nodestroy) NPROC=1 run single-nodestroy IBWIRE_CASE=nodestroy PYTHONWARNINGS=default ;;
  single-barrier) NPROC=1 run single-barrier IBWIRE_CASE=barrier PYTHONWARNINGS=default ;;
  single-deprecated-env) NPROC=1 run single-deprecated-env IBWIRE_CASE=ok PYTHONWARNINGS=default NCCL_ASYNC_ERROR_HANDLING=1 NCCL_BLOCKING_WAIT=1 ;;
  single-eager-split) NPROC=1 run single-eager-split IBWIRE_CASE=eager PYTHONWARNINGS=default ;;
  # Cases added for issue 38, set 14 (2026-12-06): an IPv6-only bootstrap on a node without it,
  # NVLS forced where there is none, a peer that aborts its communicator, harmless settings
  socket-family-v6) run socket-family-v6 IBWIRE_CASE=ok NCCL_SOCKET_FAMILY=AF_INET6 PG_TIMEOUT=25 ;;
  nvls-forced) run nvls-forced IBWIRE_CASE=ok NCCL_NVLS_ENABLE=1 NCCL_ALGO=NVLS PG_TIMEOUT=25 ;;
  abort-pg) run abort-pg IBWIRE_CASE=abortpg PG_TIMEOUT=20 ;;
  single-fifo-bogus) NPROC=1 run single-fifo-bogus IBWIRE_CASE=ok NCCL_WORK_FIFO_BYTES=3 ;;
  single-ll128) NPROC=1 run single-ll128 IBWIRE_CASE=ok NCCL_PROTO=LL128 NCCL_DEBUG_SUBSYS=INIT,NET,ENV,TUNING ;;
  single-channels-conflict) NPROC=1 run single-channels-conflict IBWIRE_CASE=ok NCCL_MIN_NCHANNELS=64 NCCL_MAX_NCHANNELS=1 ;;
  ib-settings-no-ib) run ib-settings-no-ib IBWIRE_CASE=ok NCCL_IB_SL=99 NCCL_IB_TC=999 NCCL_IB_GID_INDEX=7 NCCL_IB_HCA==mlx5_0:1 ;;
  # Cases added for issue 38, set 15 (2026-12-07): settings that starve or forbid the transport,
  # CollNet asked for without a plugin, and a healthy job of eight one-rank "nodes"
  buffsize-tiny) run buffsize-tiny IBWIRE_CASE=ok NCCL_BUFFSIZE=1024 PG_TIMEOUT=25 ;;
  nchannels-zero) run nchannels-zero IBWIRE_CASE=ok NCCL_MAX_NCHANNELS=0 PG_TIMEOUT=25 ;;
  socket-family-unix) run socket-family-unix IBWIRE_CASE=ok NCCL_SOCKET_FAMILY=AF_UNIX PG_TIMEOUT=25 ;;
  proto-none) run proto-none IBWIRE_CASE=ok 'NCCL_PROTO=^LL,LL128,Simple' PG_TIMEOUT=25 ;;
  collnet-forced) run collnet-forced IBWIRE_CASE=ok NCCL_COLLNET_ENABLE=1 PG_TIMEOUT=25 ;;
  eight-nodes) NPROC=8 run eight-nodes IBWIRE_CASE=ok ;;
  env-plugin-missing) NPROC=1 run env-plugin-missing IBWIRE_CASE=ok NCCL_ENV_PLUGIN=nonexistent-env ;;
  net-gdr-sys) run net-gdr-sys IBWIRE_CASE=ok NCCL_NET_GDR_LEVEL=SYS NCCL_NET_GDR_READ=1 NCCL_CROSS_NIC=2 ;;
  eight-nodes-die) NPROC=8 run eight-nodes-die IBWIRE_CASE=die PG_TIMEOUT=25 ;;
  # a net plugin that is there but does not load: libnccl-net.so first on the library path, a
  # copy of libz whose DT_NEEDED libc.so.6 is renamed libq.so.6 (the dependency the loader
  # cannot find, as a plugin built on another node's libraries meets)
  plugin-dep-missing)
    P=$W/plugin-dep; mkdir -p "$P"
    python3 - "$P/libnccl-net.so" <<'PY'
import ctypes.util, sys
src = ctypes.util.find_library("z") or "libz.so.1"
for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib/aarch64-linux-gnu"):
    try:
        b = open(f"{d}/{src}", "rb").read(); break
    except OSError:
        b = None
assert b and b"libc.so.6\0" in b, src
open(sys.argv[1], "wb").write(b.replace(b"libc.so.6\0", b"libq.so.6\0"))
PY
    run plugin-dep-missing IBWIRE_CASE=ok LD_LIBRARY_PATH="$P:${LD_LIBRARY_PATH:-}" ;;
  # Cases added for issue 38, set 20 (2026-12-07): torchrun's own report with NCCL quiet, hangs
  # and skips seen through the COLL subsystem alone, all-to-all, ranks at different levels
  agents-report-warn) agents agents-report-warn 2 IBWIRE_CASE=ok NCCL_DEBUG=WARN ;;
  agents-report-die) agents agents-report-die 2 IBWIRE_CASE=die PG_TIMEOUT=25 ;;
  skip-coll) run skip-coll IBWIRE_CASE=skip PG_TIMEOUT=20 NCCL_DEBUG_SUBSYS=COLL ;;
  hang-coll) run hang-coll IBWIRE_CASE=hang IBWIRE_HANG_S=45 PG_TIMEOUT=20 NCCL_DEBUG_SUBSYS=COLL ;;
  alltoall) run alltoall IBWIRE_CASE=alltoall ;;
  rank1-warn) run rank1-warn IBWIRE_CASE=ok IBWIRE_RANK1_ENV=NCCL_DEBUG=WARN ;;
  # Cases added for issue 38, set 21 (2026-12-07): a rank that aborts, a rank stopped by SIGTERM
  abort) run abort IBWIRE_CASE=abort PG_TIMEOUT=25 ;;
  termself) run termself IBWIRE_CASE=termself PG_TIMEOUT=25 ;;
  # torch.multiprocessing.spawn (not torchrun): process 1 raises after its all-reduce
  spawn-fail)
    { echo "# case: spawn-fail; torch.multiprocessing.spawn of tests/device/spawn_fail.py"
      timeout 90 python3 tests/device/spawn_fail.py; echo "# rc=$?"; } > "$D/spawn-fail.log" 2>&1 ;;
esac; done
mkdir -p "$OUT"; tar -C "$W" -czf "$OUT/failures.tgz" failures; rm -rf "$W"
ls -la "$OUT"
