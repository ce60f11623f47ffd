# Sourced by system tests: two "nodes" as network namespaces joined by veths, named like a GPU
# node: eno8303 (10.77.0.N, management, reaches the other node), ibp26s0 (10.77.1.N, also
# connected), enp1s0f1 (10.77.2.N, a dead end). node1/node2 resolve through /etc/netns/*/hosts.
NS_PREFIX=${NS_PREFIX:-ibw}
netns_up() {
  netns_down 2>/dev/null || true
  for n in 1 2; do ip netns add $NS_PREFIX-n$n; ip -n $NS_PREFIX-n$n link set lo up; done
  ip -n $NS_PREFIX-n1 link add eno8303 type veth peer name eno8303 netns $NS_PREFIX-n2
  ip -n $NS_PREFIX-n1 link add ibp26s0 type veth peer name ibp26s0 netns $NS_PREFIX-n2
  ip netns add $NS_PREFIX-void
  for n in 1 2; do
    ip -n $NS_PREFIX-n$n link add enp1s0f1 type veth peer name void$n netns $NS_PREFIX-void
    ip -n $NS_PREFIX-n$n addr add 10.77.0.$n/24 dev eno8303
    ip -n $NS_PREFIX-n$n addr add 10.77.1.$n/24 dev ibp26s0
    ip -n $NS_PREFIX-n$n addr add 10.77.2.$n/24 dev enp1s0f1
    for i in eno8303 ibp26s0 enp1s0f1; do ip -n $NS_PREFIX-n$n link set $i up; done
    mkdir -p /etc/netns/$NS_PREFIX-n$n
    printf '127.0.0.1 localhost\n10.77.0.1 node1\n10.77.0.2 node2\n' > /etc/netns/$NS_PREFIX-n$n/hosts
  done
  # The kernel reports operstate "up" a moment after `link set up` (linkwatch): wait for it,
  # or a preflight that checks the interface would rightly refuse.
  for n in 1 2; do
    for _ in $(seq 50); do
      [ "$(ip netns exec $NS_PREFIX-n$n cat /sys/class/net/eno8303/operstate)" = up ] && break; sleep 0.1
    done
  done
}
netns_down() {
  for ns in $NS_PREFIX-n1 $NS_PREFIX-n2 $NS_PREFIX-void; do ip netns del $ns 2>/dev/null || true; done
  rm -rf /etc/netns/$NS_PREFIX-n1 /etc/netns/$NS_PREFIX-n2; rmdir /etc/netns 2>/dev/null || true
}
# in_ns N HOSTNAME CMD... : run in node N's namespace with its own hostname
in_ns() {
  local n=$1 h=$2; shift 2
  ip netns exec $NS_PREFIX-n$n unshare --uts sh -c 'hostname "$0"; exec "$@"' "$h" "$@"
}
