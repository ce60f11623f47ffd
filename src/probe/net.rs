//! Network interfaces from `/sys/class/net`, addresses and routes.
//!
//! Live, addresses come from one rtnetlink address dump (netlink.rs). From a captured tree they
//! come from the tree's `proc/net/fib_trie` (local IPv4 addresses) matched to `proc/net/route`
//! (which interface owns which subnet) and `proc/net/if_inet6`. Routes always come from `proc/net/{route,ipv6_route}`.

use super::model::{IfKind, IfType, NetIf, Route};
use super::pci;
use super::sysroot::{Detail, SysRoot};
use crate::text::{parse_hex, parse_num};
use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

const IFF_UP: u32 = 0x1;

pub fn read(sys: &SysRoot) -> (Vec<NetIf>, Vec<Route>) {
    let class = PathBuf::from("sys/class/net");
    let vlans = vlan_parents(sys);
    let routes = read_routes(sys);
    let addrs = if sys.is_live() { live_addrs(sys) } else { tree_addrs(sys, &routes) };
    let hook = sys.detail() == Detail::Hook;
    let mut ifs = Vec::new();
    let class_dir = sys.resolve(&class).unwrap_or_else(|| class.clone());
    for name in sys.list(&class) {
        let link = class.join(&name);
        // A software interface without an address (a container's veth, a bridge port) cannot
        // be the bootstrap interface and carries no RDMA device: on the hook's path its link
        // target is all that is read. Its master and lowers come from the other side.
        // `probe` without `--all` does the same for container veths (28 of the story node's 45
        // interfaces; its text output lists them as a count), marked as not read.
        let standard = sys.detail() == Detail::Standard;
        let mut dir = None;
        if (hook || standard) && !addrs.contains_key(&name) && !vlans.contains_key(&name) {
            match software_if(sys, &class_dir, &link, &name, hook) {
                Software::Unread(i) => {
                    ifs.push(*i);
                    continue;
                }
                Software::Dir(d) => dir = Some(d),
                Software::Neither => {}
            }
        }
        let Some(dir) = dir.unwrap_or_else(|| sys.resolve_in(&class_dir, &name)) else {
            sys.note(format!("{} is a dangling link; interface skipped", sys.show(&link)));
            continue;
        };
        // bonding_masters and similar files live in /sys/class/net too; interfaces are
        // directories under devices/, which the hook's path takes for granted.
        let taken_for_dir = hook && dir.starts_with("sys/devices");
        if !taken_for_dir && !sys.is_dir(&dir) {
            continue;
        }
        // `probe` without `--all`: an interface without an address on an SR-IOV VF whose PF is
        // an RDMA device (one per function on an SR-IOV node) is recorded by name and function.
        if sys.detail() == Detail::Standard && !addrs.contains_key(&name) && !vlans.contains_key(&name) {
            if let Some(i) = vf_if(sys, &name, &dir) {
                ifs.push(i);
                continue;
            }
        }
        // The bootstrap decision can only pick an interface with an address: on the hook's path
        // the others (a node's dozens of container veths) cost a few lstat calls, no open.
        let state = !hook || addrs.contains_key(&name);
        let mut i = read_if(sys, &name, &dir, vlans.get(&name), state);
        if let Some(a) = addrs.get(&i.name) {
            i.addrs = a.clone();
        }
        ifs.push(i);
    }
    if hook {
        lowers_from_links(&mut ifs, &vlans);
    }
    (ifs, routes)
}

/// Without directory listings, lower devices come from the other side of each link: a
/// slave's `master`, a VLAN's parent in /proc/net/vlan/config.
fn lowers_from_links(ifs: &mut [NetIf], vlans: &BTreeMap<String, String>) {
    let uppers: Vec<(String, String)> = ifs
        .iter()
        .filter_map(|i| i.master.clone().map(|m| (m, i.name.clone())))
        .chain(vlans.iter().map(|(v, p)| (v.clone(), p.clone())))
        .collect();
    for (upper, lower) in uppers {
        if let Some(u) = ifs.iter_mut().find(|i| i.name == upper) {
            if !u.lowers.contains(&lower) {
                u.lowers.push(lower);
            }
        }
    }
    for i in ifs.iter_mut() {
        i.lowers.sort();
    }
}

/// What a software interface without an address needs to be read.
enum Software {
    /// Recorded by name only (the hook; `probe` without `--all` for a container veth).
    Unread(Box<NetIf>),
    /// Its directory, by the link already read (none: the link leads nowhere).
    Dir(Option<PathBuf>),
    Neither,
}

/// A software interface without an address (a container's veth, a bridge port) cannot be the
/// bootstrap interface and carries no RDMA device: on the hook's path its link target is all
/// that is read. Its master and lowers come from the other side. `probe` without `--all` does
/// the same for container veths (28 of the story node's 45 interfaces; its text output lists
/// them as a count), marked as not read.
fn software_if(sys: &SysRoot, class_dir: &Path, link: &Path, name: &str, hook: bool) -> Software {
    let Some(t) = sys.read_link(link) else { return Software::Neither };
    if t.to_string_lossy().contains("/devices/virtual/net/") {
        let kind = classify(name, IfType::Other, false, None, false, false);
        if hook {
            return Software::Unread(Box::new(NetIf::unread(name, kind)));
        }
        if kind == IfKind::Veth {
            let mut i = NetIf::unread(name, kind);
            i.attributes_unread = true;
            return Software::Unread(Box::new(i));
        }
    }
    Software::Dir(sys.follow(class_dir, name, &t))
}

/// An interface on an SR-IOV virtual function whose physical function has an RDMA device,
/// read by links only (a `device`, a `physfn` readlink and one lstat; no file opened).
fn vf_if(sys: &SysRoot, name: &str, dir: &Path) -> Option<NetIf> {
    let f = pci::device_dir(sys, dir, "net")?;
    sys.physfn(&f)?;
    let pf = sys.resolve_in(&f, "physfn")?;
    if !sys.exists(&pf.join("infiniband")) {
        return None;
    }
    let mut i = NetIf::unread(name, classify(name, IfType::Other, true, None, false, false));
    i.pci = pci::read_function_with(sys, &f, None, false);
    i.attributes_unread = true;
    Some(i)
}

/// VLAN name → parent interface, from /proc/net/vlan/config.
fn vlan_parents(sys: &SysRoot) -> BTreeMap<String, String> {
    sys.read(Path::new("proc/net/vlan/config"))
        .map(|t| {
            t.lines()
                .skip(2)
                .filter_map(|l| {
                    let mut f = l.split('|').map(str::trim);
                    let name = f.next().filter(|n| !n.is_empty())?;
                    let parent = f.nth(1).unwrap_or("");
                    Some((name.to_string(), parent.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn read_if(sys: &SysRoot, name: &str, dir: &Path, vlan_parent: Option<&String>, state: bool) -> NetIf {
    let full = sys.full();
    let if_type = if state { if_type(sys, dir) } else { IfType::Other };
    // One listing answers bonding/, bridge/, device, master and lower_* at once; the hook asks
    // lstat for the four it needs instead of listing ~30 entries of every interface.
    let entries = if full { sys.list(dir) } else { Vec::new() };
    let has = |n: &str| if full { entries.iter().any(|e| e == n) } else { sys.exists(&dir.join(n)) };
    let pci = pci::device_dir(sys, dir, "net").and_then(|d| pci::read_function(sys, &d, None));
    let devtype = if vlan_parent.is_some() { Some("vlan") } else { None };
    // Bonds and bridges are software devices (no parent): an interface on a PCI function is
    // neither, so the hook does not ask.
    let soft = pci.is_none();
    let kind = classify(name, if_type, pci.is_some(), devtype, soft && has("bonding"), soft && has("bridge"));
    // Without the listing, the readlink is the existence check too (ENOENT: no master).
    let master = if !full || has("master") {
        sys.read_link(&dir.join("master")).and_then(|t| t.file_name().map(|f| f.to_string_lossy().into_owned()))
    } else {
        None
    };
    let lowers = entries.iter().filter_map(|e| e.strip_prefix("lower_").map(str::to_string)).collect();
    let rdma_device = if full {
        pci.as_ref()
            .and_then(|_| sys.resolve_in(dir, "device"))
            .and_then(|d| sys.list(&d.join("infiniband")).into_iter().next())
    } else {
        None // filled from the RDMA devices (probe::link_by_function)
    };
    NetIf {
        name: name.to_string(),
        ifindex: if full { sys.parse(&dir.join("ifindex"), "an interface index", |s| s.parse().ok()) } else { None },
        if_type,
        kind,
        operstate: if state { sys.read(&dir.join("operstate")) } else { None },
        admin_up: state
            .then(|| sys.parse(&dir.join("flags"), "hex interface flags", parse_hex))
            .flatten()
            .map(|f| f & IFF_UP != 0),
        carrier: state.then(|| carrier(sys, dir)).flatten(),
        mtu: if full { sys.parse(&dir.join("mtu"), "an MTU", |s| s.parse().ok()) } else { None },
        // speed is -1 (or EINVAL) when unknown; that is not garbage.
        // Virtual interfaces report a made-up speed (or none); only hardware has one.
        speed_mbps: if pci.is_some() && full {
            sys.read(&dir.join("speed")).and_then(|s| parse_num(&s)).filter(|v| *v > 0).map(|v| v as u64)
        } else {
            None
        },
        master,
        lowers,
        pci,
        rdma_device,
        addrs: Vec::new(),
        attributes_unread: false,
    }
}

/// The interface's ARPHRD type.
fn if_type(sys: &SysRoot, dir: &Path) -> IfType {
    match sys.parse(&dir.join("type"), "an ARPHRD number", |s| s.parse::<u32>().ok()) {
        Some(1) => IfType::Ethernet,
        Some(32) => IfType::Infiniband,
        Some(772) => IfType::Loopback,
        _ => IfType::Other,
    }
}

fn carrier(sys: &SysRoot, dir: &Path) -> Option<bool> {
    sys.parse(&dir.join("carrier"), "0 or 1", |s| match s {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    })
}

/// Kind of an interface. Sysfs says bond/bridge/vlan outright; container and overlay networks
/// are recognised by their conventional names, which is what NCCL's own heuristics use too.
pub fn classify(name: &str, t: IfType, has_pci: bool, devtype: Option<&str>, bonding: bool, bridge: bool) -> IfKind {
    if t == IfType::Loopback {
        return IfKind::Loopback;
    }
    if bonding || devtype == Some("bond") {
        return IfKind::Bond;
    }
    if devtype == Some("vlan") {
        return IfKind::Vlan;
    }
    const CONTAINER: [&str; 12] =
        ["docker", "cni", "flannel", "cali", "br-", "virbr", "vxlan", "weave", "tailscale", "wg", "kube", "podman"];
    if CONTAINER.iter().any(|p| name.starts_with(p)) {
        return IfKind::Container;
    }
    if bridge || devtype == Some("bridge") {
        return IfKind::Bridge;
    }
    if name.starts_with("veth") {
        return IfKind::Veth;
    }
    if has_pci {
        return IfKind::Physical;
    }
    // A VLAN without DEVTYPE in a minimal capture still carries the `parent.vid` shape.
    if name.contains('.') && name.rsplit('.').next().map(|v| v.parse::<u16>().is_ok()).unwrap_or(false) {
        return IfKind::Vlan;
    }
    IfKind::Virtual
}

/// VLAN interfaces from `/proc/net/vlan/config` (one file instead of a uevent per interface).
fn read_routes(sys: &SysRoot) -> Vec<Route> {
    let mut out = Vec::new();
    if let Some(t) = sys.read(Path::new("proc/net/route")) {
        out.extend(parse_route_v4(&t, &mut |m| sys.note(m)));
    }
    if let Some(t) = sys.read(Path::new("proc/net/ipv6_route")) {
        out.extend(parse_route_v6(&t));
    }
    out
}

/// `/proc/net/route`: little-endian hex addresses; only routes that are up (flag 0x1).
pub fn parse_route_v4(text: &str, note: &mut dyn FnMut(String)) -> Vec<Route> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 {
            if !line.trim().is_empty() {
                note(format!("/proc/net/route line {}: too few fields", n + 1));
            }
            continue;
        }
        let (Some(dest), Some(gw), Some(flags), Some(mask)) =
            (le_ip(f[1]), le_ip(f[2]), u32::from_str_radix(f[3], 16).ok(), le_ip(f[7]))
        else {
            note(format!("/proc/net/route line {}: unreadable fields", n + 1));
            continue;
        };
        if flags & 0x1 == 0 {
            continue;
        }
        let prefix = u32::from(mask).count_ones() as u8;
        let Ok(net) = Ipv4Net::new(dest, prefix) else {
            continue;
        };
        out.push(Route {
            dest: IpNet::V4(net.trunc()),
            gateway: (flags & 0x2 != 0 && !gw.is_unspecified()).then_some(IpAddr::V4(gw)),
            iface: f[0].to_string(),
            metric: f[6].parse().unwrap_or(0),
        });
    }
    out
}

fn le_ip(h: &str) -> Option<Ipv4Addr> {
    let v = u32::from_str_radix(h, 16).ok()?;
    Some(Ipv4Addr::from(v.swap_bytes()))
}

fn hex_v6(h: &str) -> Option<Ipv6Addr> {
    if h.len() != 32 {
        return None;
    }
    u128::from_str_radix(h, 16).ok().map(Ipv6Addr::from)
}

/// `/proc/net/ipv6_route`: dest plen src plen nexthop metric refcnt use flags iface.
pub fn parse_route_v6(text: &str) -> Vec<Route> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 {
            continue;
        }
        let (Some(dest), Ok(plen), Some(nh), Ok(flags)) =
            (hex_v6(f[0]), u8::from_str_radix(f[1], 16), hex_v6(f[4]), u32::from_str_radix(f[8], 16))
        else {
            continue;
        };
        if flags & 0x1 == 0 || f[9] == "lo" || dest.is_multicast() {
            continue;
        }
        // RTF_LOCAL host routes (the node's own addresses) are not paths to anywhere.
        if flags & 0x8000_0000 != 0 {
            continue;
        }
        let Ok(net) = Ipv6Net::new(dest, plen) else {
            continue;
        };
        out.push(Route {
            dest: IpNet::V6(net.trunc()),
            gateway: (!nh.is_unspecified()).then_some(IpAddr::V6(nh)),
            iface: f[9].to_string(),
            metric: u32::from_str_radix(f[5], 16).unwrap_or(0),
        });
    }
    out
}

fn live_addrs(sys: &SysRoot) -> BTreeMap<String, Vec<IpNet>> {
    match super::netlink::addresses() {
        Ok(m) => m,
        Err(e) => {
            sys.note(format!("the address dump (rtnetlink) failed: {e}; no addresses read"));
            BTreeMap::new()
        }
    }
}

fn tree_addrs(sys: &SysRoot, routes: &[Route]) -> BTreeMap<String, Vec<IpNet>> {
    let mut m: BTreeMap<String, Vec<IpNet>> = BTreeMap::new();
    // Connected IPv4 routes by (prefix length, network): an address's owner is found with at
    // most 32 look-ups instead of a scan of every route (a node with 10 000 routes and as many
    // addresses made that quadratic).
    let mut connected: std::collections::HashMap<(u8, u32), &Route> = std::collections::HashMap::new();
    for r in routes.iter().filter(|r| r.gateway.is_none() && r.dest.prefix_len() > 0) {
        if let IpNet::V4(n) = r.dest {
            connected.insert((n.prefix_len(), u32::from(n.network())), r); // the last of equals wins, as before
        }
    }
    if let Some(t) = sys.read(Path::new("proc/net/fib_trie")) {
        for ip in parse_fib_trie_locals(&t) {
            if ip.is_loopback() {
                m.entry("lo".into()).or_default().push(IpNet::V4(Ipv4Net::new(ip, 8).unwrap()));
                continue;
            }
            // The owning interface is the one with the longest directly-connected route.
            let owner = (1..=32u8).rev().find_map(|len| {
                let net = u32::from(ip) & (u32::MAX << (32 - len as u32));
                connected.get(&(len, net)).copied()
            });
            match owner {
                Some(r) => m
                    .entry(r.iface.clone())
                    .or_default()
                    .push(IpNet::V4(Ipv4Net::new(ip, r.dest.prefix_len()).unwrap())),
                None => sys.note(format!("address {ip} in fib_trie has no connected route; owner unknown")),
            }
        }
    }
    if let Some(t) = sys.read(Path::new("proc/net/if_inet6")) {
        for line in t.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 {
                continue;
            }
            let (Some(ip), Ok(plen)) = (hex_v6(f[0]), u8::from_str_radix(f[2], 16)) else {
                continue;
            };
            if let Ok(n) = Ipv6Net::new(ip, plen) {
                m.entry(f[5].to_string()).or_default().push(IpNet::V6(n));
            }
        }
    }
    for v in m.values_mut() {
        v.sort();
        v.dedup();
    }
    m
}

/// The node's own IPv4 addresses: fib_trie entries followed by `/32 host LOCAL`.
pub fn parse_fib_trie_locals(text: &str) -> Vec<Ipv4Addr> {
    let mut out = Vec::new();
    let mut last: Option<Ipv4Addr> = None;
    for line in text.lines() {
        let t = line.trim_start_matches([' ', '|', '+', '-']).trim();
        if let Ok(ip) = t.parse::<Ipv4Addr>() {
            last = Some(ip);
        } else if t.starts_with("/32 host LOCAL") {
            if let Some(ip) = last {
                if !out.contains(&ip) {
                    out.push(ip);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fib_trie_locals() {
        let t = "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 0.0.0.0\n        /0 universe UNICAST\n     +-- 198.21.151.0/24 2 0 2\n        |-- 198.21.151.0\n           /24 link UNICAST\n        |-- 198.21.151.17\n           /32 host LOCAL\nLocal:\n        |-- 198.21.151.17\n           /32 host LOCAL\n        |-- 127.0.0.1\n           /32 host LOCAL\n";
        assert_eq!(
            parse_fib_trie_locals(t),
            vec!["198.21.151.17".parse::<Ipv4Addr>().unwrap(), "127.0.0.1".parse().unwrap()]
        );
    }

    #[test]
    fn route_v4() {
        let t = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
eno8303\t00000000\t0197A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n\
eno8303\t0097A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
garbage\n";
        let mut notes = Vec::new();
        let r = parse_route_v4(t, &mut |m| notes.push(m));
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].dest.to_string(), "0.0.0.0/0");
        assert_eq!(r[0].gateway, Some("192.168.151.1".parse().unwrap()));
        assert_eq!(r[1].dest.to_string(), "192.168.151.0/24");
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn kinds() {
        assert_eq!(classify("bond0.2102", IfType::Infiniband, false, None, false, false), IfKind::Vlan);
        assert_eq!(classify("docker0", IfType::Ethernet, false, Some("bridge"), false, true), IfKind::Container);
        assert_eq!(classify("eno8303", IfType::Ethernet, true, None, false, false), IfKind::Physical);
        assert_eq!(classify("bond0", IfType::Infiniband, false, None, true, false), IfKind::Bond);
    }
}
