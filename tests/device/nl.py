#!/usr/bin/env python3
"""The few iproute2 steps tests/device/netns.sh needs, over rtnetlink, for machines without `ip`
(the device machine of 2026-12-07 had neither iproute2 nor a network to install it).

  nl.py netns-new [HOSTNAME]      start a process in new network, mount (its own /sys, as `ip netns
                                  exec` gives) and UTS namespaces (HOSTNAME: the namespace's host
                                  name, as another node has its own); print its pid
  nl.py [-n PID] veth A B PEERPID make veth A (here) with its peer B in PEERPID's namespace
  nl.py [-n PID] addr IF A.B.C.D/LEN | IF V6ADDR/LEN
                                  (an IPv6 address without duplicate address detection: usable
                                  at once, not tentative)
  nl.py [-n PID] up|down|del IF
  nl.py [-n PID] show             interfaces with their state and IPv4 addresses
  nl.py [-n PID] route unreachable|prohibit|blackhole A.B.C.D/LEN
                                  a route of that type (connect gets EHOSTUNREACH, EACCES, EINVAL)
  nl.py [-n PID] unroute TYPE A.B.C.D/LEN
                                  remove it (a route of these types outlives the link)
  nl.py [-n PID] neigh IF A.B.C.D LLADDR
                                  a permanent neighbour entry (a wrong LLADDR drops the frames
                                  silently, as a firewall's DROP does)
  nl.py [-n PID] unneigh IF A.B.C.D
                                  remove that entry
  nl.py exec PID CMD [ARG...]     run CMD in PID's network, mount and UTS namespaces

-n PID: do it in PID's network namespace. Errors: one line on stderr, exit 1.
"""
import ctypes
import fcntl
import os
import signal
import socket
import struct
import sys

CLONE_NEWNET, CLONE_NEWUTS, CLONE_NEWNS = 0x40000000, 0x04000000, 0x00020000
MS_REC, MS_PRIVATE = 0x4000, 0x40000
RTM_NEWLINK, RTM_DELLINK, RTM_NEWADDR, RTM_NEWROUTE, RTM_DELROUTE, RTM_NEWNEIGH, RTM_DELNEIGH = 16, 17, 20, 24, 25, 28, 29
RTA_DST, NDA_DST, NDA_LLADDR, NUD_PERMANENT = 1, 1, 2, 0x80
RT_TABLE_MAIN, RTPROT_STATIC = 254, 4
RTN = {"blackhole": 6, "unreachable": 7, "prohibit": 8}
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
NLMSG_ERROR = 2
IFLA_IFNAME, IFLA_LINKINFO, IFLA_NET_NS_PID = 3, 18, 19
IFLA_INFO_KIND, IFLA_INFO_DATA, VETH_INFO_PEER = 1, 2, 1
IFA_ADDRESS, IFA_LOCAL, IFA_F_NODAD = 1, 2, 0x02
IFF_UP = 1
libc = ctypes.CDLL(None, use_errno=True)


def die(msg):
    print(f"nl.py: {msg}", file=sys.stderr)
    sys.exit(1)


def check(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        die(f"{what}: {os.strerror(e)}")


def enter(pid, kinds=(("net", CLONE_NEWNET),)):
    for ns, flag in kinds:
        fd = os.open(f"/proc/{pid}/ns/{ns}", os.O_RDONLY)
        check(libc.setns(fd, flag), f"setns into {pid}'s {ns} namespace")
        os.close(fd)


def attr(t, data):
    n = 4 + len(data)
    return struct.pack("HH", n, t) + data + b"\0" * (-n % 4)


def ifinfo(index=0, flags=0, change=0):
    return struct.pack("BxHiII", socket.AF_UNSPEC, 0, index, flags, change)


def name(s):
    return attr(IFLA_IFNAME, s.encode() + b"\0")


def request(typ, flags, body, what):
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as s:
            s.settimeout(5)
            s.bind((0, 0))
            s.send(struct.pack("IHHII", 16 + len(body), typ, NLM_F_REQUEST | NLM_F_ACK | flags, 1, 0) + body)
            r = s.recv(65536)
    except OSError as e:  # socket.timeout is one
        die(f"{what}: {e.strerror or 'no answer from the kernel in 5 s'}")
    if struct.unpack("H", r[4:6])[0] == NLMSG_ERROR:
        err = struct.unpack("i", r[16:20])[0]
        if err:
            die(f"{what}: {os.strerror(-err)}")


def index(ifname):
    try:
        return socket.if_nametoindex(ifname)
    except OSError:
        die(f"no interface {ifname!r} here")


def ipv4(ifname):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            r = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", ifname.encode()[:15]))  # SIOCGIFADDR
            return socket.inet_ntoa(r[20:24])
        except OSError:
            return "-"


def flags(ifname):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        r = fcntl.ioctl(s.fileno(), 0x8913, struct.pack("256s", ifname.encode()[:15]))  # SIOCGIFFLAGS
        return struct.unpack("H", r[16:18])[0]


def netns_new(hostname):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        ok = libc.unshare(CLONE_NEWNET | CLONE_NEWNS | (CLONE_NEWUTS if hostname else 0)) == 0
        if ok and hostname:
            ok = libc.sethostname(hostname.encode(), len(hostname)) == 0
        # as `ip netns exec` does: a sysfs of this namespace's own, so /sys/class/net lists its
        # interfaces (NCCL reads their speed there), in a mount namespace of its own
        if ok:
            ok = libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0
            ok = ok and libc.umount2(b"/sys", 2) == 0  # MNT_DETACH
            ok = ok and libc.mount(b"sysfs", b"/sys", b"sysfs", 0, None) == 0
        os.write(w, b"1" if ok else b"0")
        if not ok:
            os._exit(1)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
        while True:
            signal.pause()
    if os.read(r, 1) != b"1":
        die("unshare(CLONE_NEWNET|CLONE_NEWNS|CLONE_NEWUTS), sethostname or the namespace's sysfs failed (not root?)")
    print(pid)


def main(a):
    if not a:
        die("no command (see its docstring)")
    if a[0] == "netns-new":
        return netns_new(a[1] if len(a) > 1 else "")
    if a[0] == "exec":
        if len(a) < 3:
            die("exec PID CMD [ARG...]")
        uts = os.readlink(f"/proc/{a[1]}/ns/uts") != os.readlink("/proc/self/ns/uts")
        enter(a[1], (("net", CLONE_NEWNET), ("mnt", CLONE_NEWNS)) + ((("uts", CLONE_NEWUTS),) if uts else ()))
        try:
            os.execvp(a[2], a[2:])
        except OSError as e:
            die(f"{a[2]}: {e.strerror}")
    if a[0] == "-n":
        if len(a) < 3:
            die("-n PID COMMAND ...")
        enter(a[1])
        a = a[2:]
    cmd, args = a[0], a[1:]
    if cmd == "veth" and len(args) == 3:
        peer = ifinfo() + name(args[1]) + attr(IFLA_NET_NS_PID, struct.pack("I", int(args[2])))
        info = attr(IFLA_INFO_KIND, b"veth") + attr(IFLA_INFO_DATA, attr(VETH_INFO_PEER, peer))
        request(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, ifinfo() + name(args[0]) + attr(IFLA_LINKINFO, info),
                f"veth {args[0]}/{args[1]}")
    elif cmd == "addr" and len(args) == 2:
        ip, _, plen = args[1].partition("/")
        fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
        try:
            a = socket.inet_pton(fam, ip)
        except OSError:
            die(f"not an address: {ip!r}")
        body = struct.pack("BBBBI", fam, int(plen or (128 if fam == socket.AF_INET6 else 32)),
                           IFA_F_NODAD if fam == socket.AF_INET6 else 0, 0, index(args[0]))
        request(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, body + attr(IFA_LOCAL, a) + attr(IFA_ADDRESS, a),
                f"address {args[1]} on {args[0]}")
    elif cmd in ("up", "down") and len(args) == 1:
        request(RTM_NEWLINK, 0, ifinfo(index(args[0]), IFF_UP if cmd == "up" else 0, IFF_UP), f"{cmd} {args[0]}")
    elif cmd == "del" and len(args) == 1:
        request(RTM_DELLINK, 0, ifinfo(index(args[0])), f"delete {args[0]}")
    elif cmd in ("route", "unroute") and len(args) == 2 and args[0] in RTN:
        ip, _, plen = args[1].partition("/")
        body = struct.pack("BBBBBBBBI", socket.AF_INET, int(plen or 32), 0, 0, RT_TABLE_MAIN, RTPROT_STATIC, 0,
                           RTN[args[0]], 0)
        typ, fl = (RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL) if cmd == "route" else (RTM_DELROUTE, 0)
        request(typ, fl, body + attr(RTA_DST, socket.inet_aton(ip)), f"{cmd} {args[0]} {args[1]}")
    elif cmd == "neigh" and len(args) == 3:
        mac = bytes(int(x, 16) for x in args[2].split(":"))
        body = struct.pack("BxxxiHBB", socket.AF_INET, index(args[0]), NUD_PERMANENT, 0, 0)
        request(RTM_NEWNEIGH, NLM_F_CREATE | 0x100, body + attr(NDA_DST, socket.inet_aton(args[1])) + attr(NDA_LLADDR, mac),
                f"neighbour {args[1]} on {args[0]}")  # 0x100: NLM_F_REPLACE
    elif cmd == "unneigh" and len(args) == 2:
        body = struct.pack("BxxxiHBB", socket.AF_INET, index(args[0]), 0, 0, 0)
        request(RTM_DELNEIGH, 0, body + attr(NDA_DST, socket.inet_aton(args[1])), f"remove neighbour {args[1]} on {args[0]}")
    elif cmd == "show" and not args:
        for _, n in socket.if_nameindex():
            print(f"{n:<16} {'UP' if flags(n) & IFF_UP else 'DOWN':<5} {ipv4(n)}")
    else:
        die(f"unknown or incomplete command: {' '.join(a)}")


if __name__ == "__main__":
    main(sys.argv[1:])
