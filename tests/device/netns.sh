#!/usr/bin/env bash
# Run as root on the `device` machine (one GPU): two "nodes" in two network namespaces joined by a
# veth pair, one torchrun agent in each (tests/device/failures.py gives every rank its own
# NCCL_HOSTID), so NCCL's bootstrap and NET/Socket cross a real link that can be cut, firewalled
# or left without a route — the network failures a job over nodes meets, which two ranks in one
# namespace cannot show. Logs land in $OUT/netns/. Every step has a time limit; the namespace,
# the link and the rules are removed at the end.
# Status (2026-12-07): the wiring was checked as root on a CPU VM with PY= a gloo all-reduce
# (ns-healthy, ns-lo-rank1, ns-firewall: the store and the all-reduce crossed the veth, rc 0 —
# gloo's own connections run the other way, so only NCCL's show the failures). The device
# machines have no iproute2 and no iptables: without `ip` the namespace, the link and its
# addresses are made over rtnetlink by tests/device/nl.py (python3 only), and ns-firewall is
# skipped where there is no iptables. Ran on the device (H100, NCCL 2.28.9, torch 2.11) on
# 2026-12-07: device set 16 (four cases), and again after nl.py gave the namespace its own /sys
# (ns-healthy's `Could not get speed from /sys/class/net/vethb/speed` is gone; lo has none).
# ns-fw-reject, ns-v6-linklocal and ns-fw-drop ran there on 2026-12-07 (device set 18): both
# firewall cases hang in init with no NCCL line after `Init START` until the time limit; the
# link-local case fails at once (`connect to fe80::…%6<…> failed : Network is unreachable`: the
# scope is rank 0's interface index, which means nothing on the other host).
# ns-ports-exhausted, ns-ifname-down and the cases of the next session (ns-v6-global, ns-same-ip,
# ns-other-subnet, ns-mid-drop) ran there on 2026-12-07 (device set 19, H100, 435 s): a shared
# address gives 35 refused connects (each node reaches itself), a foreign subnet `Network is
# unreachable` at once, no free port `Cannot assign requested address`, an interface down
# `Bootstrap : no socket interface found`, a silent data network nothing until the watchdog.
set -u
# (logs are written straight under $OUT/netns: a run cut by its time limit keeps what it made)
OUT=${OUT:-device-out}; D=$OUT/netns; mkdir -p "$D"
export NCCL_NVLS_ENABLE=0 PYTHONWARNINGS=ignore NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV,BOOTSTRAP PG_TIMEOUT=40
py=${PY:-$PWD/tests/device/failures.py} # PY: another script, e.g. a gloo all-reduce to check the wiring on a CPU
NS=ibwnsb A=vetha B=vethb IPA=10.77.0.1 IPB=10.77.0.2 HB=ibwire-node1 # HB: the second node's host name
# a second link between the nodes (C here, E in $NS): a data network apart from the store's, for
# the cases that block it while torchrun's rendezvous still passes
C=vethc E=vethd IPC=10.78.0.1 IPE=10.78.0.2 BADMAC=02:00:00:00:00:01
# links made by one case each: F/G (one address on both nodes), H/I (two subnets on one link)
F=vethf G=vethg H=vethh I=vethi
{ for c in ip iptables nft tc; do printf '%s: %s\n' "$c" "$(command -v $c || echo missing)"; done
  python3 -c 'import torch;print(torch.__version__, torch.cuda.nccl.version())'; } > "$D/caps.txt" 2>&1
HERE=$(cd "$(dirname "$0")" && pwd)
nl() { python3 "$HERE/nl.py" "$@"; }
if [ "${NETLINK:-}" != py ] && command -v ip >/dev/null; then # NETLINK=py: nl.py even where ip is
  echo "netns: iproute2" >> "$D/caps.txt"
  # the second node's own host name, where util-linux's unshare is there to give it one
  inns() { if command -v unshare >/dev/null; then ip netns exec $NS unshare --uts sh -c 'hostname $0 && exec "$@"' $HB "$@"; else ip netns exec $NS "$@"; fi; }
  link() { ip link set $A "$1"; }
  setup() {
    ip netns add $NS && ip link add $A type veth peer name $B && ip link set $B netns $NS &&
      ip addr add $IPA/24 dev $A && ip link set $A up &&
      inns ip addr add $IPB/24 dev $B && inns ip link set $B up && inns ip link set lo up &&
      ip link add $C type veth peer name $E && ip link set $E netns $NS && ip addr add $IPC/24 dev $C &&
      ip link set $C up && inns ip addr add $IPE/24 dev $E && inns ip link set $E up
  }
  unreach() { ip route "${2:-add}" unreachable "$1"/32; } # this side's connections to $1: EHOSTUNREACH
  dropto() { ip neigh replace "$2" lladdr $BADMAC dev "$1" nud permanent; } # frames to $2 go nowhere
  nodad() { case $1 in *:*) echo nodad ;; esac; }
  addr() { ip addr add "$2" dev "$1" $(nodad "$2"); }
  inaddr() { inns ip addr add "$2" dev "$1" $(nodad "$2"); }
  vpair() { # X (here) Y (in $NS) X's address, Y's address
    ip link add "$1" type veth peer name "$2" && ip link set "$2" netns $NS && addr "$1" "$3" && ip link set "$1" up &&
      inaddr "$2" "$4" && inns ip link set "$2" up
  }
  undrop() { ip neigh del "$2" dev "$1"; }
  show() { ip -br addr; inns ip -br addr; }
  teardown() { ip netns del $NS 2>/dev/null; for l in $A $C $F $H; do ip link del $l 2>/dev/null; done; unreach $IPE del 2>/dev/null; true; }
else
  # no iproute2 (the device machines): a process holds the namespace, nl.py speaks rtnetlink
  echo "netns: no ip command: tests/device/nl.py over rtnetlink" >> "$D/caps.txt"
  NSPID=
  inns() { nl exec $NSPID "$@"; }
  link() { nl "$1" $A; }
  setup() {
    NSPID=$(nl netns-new $HB) && nl veth $A $B $NSPID && nl addr $A $IPA/24 && nl up $A &&
      nl -n $NSPID addr $B $IPB/24 && nl -n $NSPID up $B && nl -n $NSPID up lo &&
      nl veth $C $E $NSPID && nl addr $C $IPC/24 && nl up $C && nl -n $NSPID addr $E $IPE/24 && nl -n $NSPID up $E
  }
  unreach() { if [ "${2:-add}" = del ]; then nl unroute unreachable "$1"/32; else nl route unreachable "$1"/32; fi; }
  dropto() { nl neigh "$1" "$2" $BADMAC; }
  addr() { nl addr "$1" "$2"; }
  inaddr() { nl -n $NSPID addr "$1" "$2"; }
  vpair() { nl veth "$1" "$2" $NSPID && nl addr "$1" "$3" && nl up "$1" && nl -n $NSPID addr "$2" "$4" && nl -n $NSPID up "$2"; }
  undrop() { nl unneigh "$1" "$2"; }
  show() { nl show; inns python3 "$HERE/nl.py" show; }
  teardown() { [ -n "$NSPID" ] && kill $NSPID 2>/dev/null; for l in $A $C $F $H; do nl del $l 2>/dev/null; done; unreach $IPE del 2>/dev/null; NSPID=; true; }
fi
command -v python3 >/dev/null || { echo "netns: no python3 here: no case can run" | tee -a "$D/caps.txt"; exit 2; }
teardown; setup >> "$D/caps.txt" 2>&1 || { echo "netns: could not make the namespace and the veth pair (see above)" | tee -a "$D/caps.txt"; teardown; exit 2; }
show >> "$D/caps.txt" 2>&1
# Agent 0 in the root namespace hosts torchrun's store at $IPA; agent 1 runs in $NS.
# A0/A1: env for each agent's side only; COMMON: both.
pair() { # name
  local name=$1 port=$((29500 + RANDOM % 1000))
  { echo "# case: $name; agent 0 (root namespace, host $(hostname), $A $IPA): ${A0:-}; agent 1 (namespace $NS, host $HB, $B $IPB): ${A1:-}; both: ${COMMON:-}"
    timeout ${TMO:-75} env ${COMMON:-} ${A0:-} torchrun --nnodes=2 --node-rank=0 --nproc-per-node=1 --master-addr=$IPA --master-port=$port "$py" & ap=$!
    inns timeout ${TMO:-75} env ${COMMON:-} ${A1:-} torchrun --nnodes=2 --node-rank=1 --nproc-per-node=1 --master-addr=$IPA --master-port=$port "$py"
    echo "# rc(agent 1)=$?"; wait $ap; echo "# rc(agent 0)=$?"; } > "$D/$name.log" 2>&1
}
all="ns-healthy ns-ifname-unreachable ns-lo-rank1 ns-link-down ns-firewall ns-fw-reject ns-v6-linklocal ns-v6-global ns-ports-exhausted ns-ifname-down ns-same-ip ns-other-subnet ns-mid-drop ns-fw-drop" # ns-fw-drop last: its neighbour entries stay until the teardown; ns-v6-global after ns-v6-linklocal (its addresses stay)
for c in ${CASES:-$all}; do case $c in
  # the bootstrap and the sockets over the veth link: a healthy job over two nodes on TCP
  ns-healthy) COMMON=IBWIRE_CASE=ok A0=NCCL_SOCKET_IFNAME=$A A1=NCCL_SOCKET_IFNAME=$B pair ns-healthy ;;
  # no NCCL_SOCKET_IFNAME: rank 0 picks eth0, whose address the other namespace has no route to
  ns-ifname-unreachable) COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0= A1= TMO=70 pair ns-ifname-unreachable ;;
  # rank 1 bootstraps on lo: it tells rank 0 to reach it at 127.0.0.1
  ns-lo-rank1) COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0=NCCL_SOCKET_IFNAME=$A A1=NCCL_SOCKET_IFNAME=lo TMO=70 pair ns-lo-rank1 ;;
  # the link goes down in the middle of a stream of all-reduces (and comes back after 30 s)
  ns-link-down)
    ( sleep 20; link down; echo "# $(date +%T) $A down"; sleep 30; link up; echo "# $(date +%T) $A up" ) > "$D/ns-link-down.events" 2>&1 & lp=$!
    COMMON="IBWIRE_CASE=loop IBWIRE_LOOP_S=45 PG_TIMEOUT=20" A0=NCCL_SOCKET_IFNAME=$A A1=NCCL_SOCKET_IFNAME=$B TMO=90 pair ns-link-down
    wait $lp; link up ;;
  # the second node's firewall lets the store's connection out but drops every new connection in
  ns-firewall)
    if command -v iptables >/dev/null && inns iptables -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT 2>>"$D/caps.txt" &&
       inns iptables -A INPUT -p tcp --syn -j DROP 2>>"$D/caps.txt"; then
      COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0=NCCL_SOCKET_IFNAME=$A A1=NCCL_SOCKET_IFNAME=$B TMO=90 pair ns-firewall
      inns iptables -F INPUT
    else echo "ns-firewall: no iptables in the namespace" >> "$D/caps.txt"; fi ;;
  # node 1's firewall rejects new connections on the data network (firewalld's REJECT answers
  # icmp-host-prohibited: the connecting side gets EHOSTUNREACH, as an unreachable route gives it);
  # the store's network is open, so the rendezvous passes and NCCL's own connections fail
  ns-fw-reject)
    if unreach $IPE 2>>"$D/caps.txt"; then
      COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0=NCCL_SOCKET_IFNAME=$C A1=NCCL_SOCKET_IFNAME=$E TMO=90 pair ns-fw-reject
      unreach $IPE del
    else echo "ns-fw-reject: could not add the route" >> "$D/caps.txt"; fi ;;
  # node 1 has almost no ephemeral ports left (its namespace's ip_local_port_range narrowed to
  # three ports, as a node whose ports are taken by other connections): the store's client takes
  # one, NCCL's listening and connecting sockets need more
  ns-ports-exhausted)
    old=$(inns cat /proc/sys/net/ipv4/ip_local_port_range 2>>"$D/caps.txt")
    if inns sh -c 'echo "40000 40002" > /proc/sys/net/ipv4/ip_local_port_range' 2>>"$D/caps.txt"; then
      COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0=NCCL_SOCKET_IFNAME=$C A1=NCCL_SOCKET_IFNAME=$E TMO=80 pair ns-ports-exhausted
      inns sh -c "echo '$old' > /proc/sys/net/ipv4/ip_local_port_range" 2>>"$D/caps.txt"
    else echo "ns-ports-exhausted: could not narrow the port range" >> "$D/caps.txt"; fi ;;
  # node 1's NCCL_SOCKET_IFNAME names an interface that is down there (its peer is up)
  ns-ifname-down)
    inns python3 "$HERE/nl.py" down $E 2>>"$D/caps.txt"
    COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0=NCCL_SOCKET_IFNAME=$C A1=NCCL_SOCKET_IFNAME=$E TMO=80 pair ns-ifname-down
    inns python3 "$HERE/nl.py" up $E 2>>"$D/caps.txt" ;;
  # a firewall between the nodes drops the data network's packets without an answer (DROP): frames
  # to the other node's address go to a MAC nobody has, both ways; the store's network passes
  ns-fw-drop)
    if dropto $C $IPE 2>>"$D/caps.txt" && inns python3 "$HERE/nl.py" neigh $E $IPC $BADMAC 2>>"$D/caps.txt"; then
      COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0=NCCL_SOCKET_IFNAME=$C A1=NCCL_SOCKET_IFNAME=$E TMO=100 pair ns-fw-drop
    else echo "ns-fw-drop: could not add the neighbour entries" >> "$D/caps.txt"; fi ;;
  # each node's data interface has the same address (containers on Docker's default bridge on
  # two hosts: both are 172.17.0.2): a node that connects to the other's address reaches itself
  ns-same-ip)
    if vpair $F $G 10.79.0.1/24 10.79.0.1/24 2>>"$D/caps.txt"; then
      COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0=NCCL_SOCKET_IFNAME=$F A1=NCCL_SOCKET_IFNAME=$G TMO=90 pair ns-same-ip
    else echo "ns-same-ip: could not make $F/$G" >> "$D/caps.txt"; fi ;;
  # the nodes' data interfaces share a link but not a subnet (one node's NIC in another VLAN's
  # address range): neither has a route to the other's address, connect gets ENETUNREACH
  ns-other-subnet)
    if vpair $H $I 10.80.0.1/24 10.81.0.2/24 2>>"$D/caps.txt"; then
      COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25" A0=NCCL_SOCKET_IFNAME=$H A1=NCCL_SOCKET_IFNAME=$I TMO=90 pair ns-other-subnet
    else echo "ns-other-subnet: could not make $H/$I" >> "$D/caps.txt"; fi ;;
  # the data network goes silent 20 s into a stream of all-reduces (a switch that drops
  # everything: frames to a MAC nobody has, both ways) while the store's network stays up
  ns-mid-drop)
    ( sleep 20; dropto $C $IPE; inns python3 "$HERE/nl.py" neigh $E $IPC $BADMAC; echo "# $(date +%T) data network dropped" ) > "$D/ns-mid-drop.events" 2>&1 & lp=$!
    COMMON="IBWIRE_CASE=loop IBWIRE_LOOP_S=60 PG_TIMEOUT=20" A0=NCCL_SOCKET_IFNAME=$C A1=NCCL_SOCKET_IFNAME=$E TMO=100 pair ns-mid-drop
    wait $lp; undrop $C $IPE 2>>"$D/caps.txt"; inns python3 "$HERE/nl.py" unneigh $E $IPC 2>>"$D/caps.txt" ;;
  # a healthy job over IPv6 with unique local (fd00::/8) addresses on the data network
  ns-v6-global)
    if addr $C fd00:78::1/64 2>>"$D/caps.txt" && inaddr $E fd00:78::2/64 2>>"$D/caps.txt"; then
      COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25 NCCL_SOCKET_FAMILY=AF_INET6" A0=NCCL_SOCKET_IFNAME=$C A1=NCCL_SOCKET_IFNAME=$E TMO=90 pair ns-v6-global
    else echo "ns-v6-global: could not add the addresses" >> "$D/caps.txt"; fi ;;
  # NCCL over IPv6 on an interface whose only IPv6 address is link-local (fe80::, scope: the
  # interface's index on its own host)
  ns-v6-linklocal)
    { cat /proc/sys/net/ipv6/conf/$C/disable_ipv6; inns cat /proc/sys/net/ipv6/conf/$E/disable_ipv6; } >> "$D/caps.txt" 2>&1
    COMMON="IBWIRE_CASE=ok PG_TIMEOUT=25 NCCL_SOCKET_FAMILY=AF_INET6" A0=NCCL_SOCKET_IFNAME=$C A1=NCCL_SOCKET_IFNAME=$E TMO=90 pair ns-v6-linklocal ;;
esac; done
teardown
ls -la "$D"
