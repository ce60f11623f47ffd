//! RDMA devices and ports from `/sys/class/infiniband*`, the same values verbs reports to NCCL.
//!
//! What is read depends on `Detail` (see there). The costly parts of a real node are tables and
//! SR-IOV: a ConnectX InfiniBand port has 128 P_Key entries and a RoCE port 255 GIDs, and a node
//! may carry hundreds of virtual functions. Decisions need one P_Key (index 0, the one NCCL's QPs
//! use), no GID on InfiniBand, one usable GID on RoCE, and nothing about a virtual function whose
//! physical function is itself an RDMA device (it is excluded in favour of the PF). Matching
//! uverbs/umad nodes to devices is done from symlink targets, which costs no file opens.

use super::model::{Gid, LinkLayer, RdmaDevice, RdmaPort};
use super::pci;
use super::sysroot::{Detail, SysRoot};
use crate::text::{natural_cmp, parse_hex};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Entries of an InfiniBand GID table read by `probe --all` (mlx5 has 8; alias GUIDs aside,
/// only index 0 is populated).
const IB_GID_SCAN: usize = 16;
/// Ports probed by `lstat` on the hook's path (a device has 1 or 2; the IB spec allows 254).
const MAX_PORTS: u32 = 254;
/// Bound on a GID scan (mlx5 RoCE tables have 255 entries).
const MAX_GIDS: u32 = 1024;

struct Located {
    name: String,
    dir: PathBuf,
    pci_dir: Option<PathBuf>,
    physfn: Option<String>,
}

/// `dev_nodes`: the names in /dev/infiniband.
pub fn read(sys: &SysRoot, dev_nodes: &[String]) -> Vec<RdmaDevice> {
    let class = Path::new("sys/class/infiniband");
    let detail = sys.detail();
    let full = sys.full();
    let dev_nodes: FxHashSet<&str> = dev_nodes.iter().map(String::as_str).collect();
    let names = sys.list(class);
    let class_dir = sys.resolve(class).unwrap_or_else(|| class.to_path_buf());
    let located = locate(sys, class, &class_dir, &names);
    let rdma_pfs: BTreeSet<String> = located
        .iter()
        .filter(|l| l.physfn.is_none())
        .filter_map(|l| l.pci_dir.as_ref()?.file_name().map(|f| f.to_string_lossy().into_owned()))
        .collect();
    let owners = Owners::new(&located);
    let verbs = owners.children(sys, "sys/class/infiniband_verbs", &["uverbs"]);
    let mads = if sys.wants_mad() {
        owners.children(sys, "sys/class/infiniband_mad", &["umad", "issm"])
    } else {
        BTreeMap::new()
    };
    let devices = crate::parallel::par_map(&located, |l| {
        let name = &l.name;
        let dir = &l.dir;
        // A VF whose PF is an RDMA device is excluded in favour of the PF (plan::hca) before
        // its ports matter: the hook reads nothing of it, `probe` its links (`--all` reads all),
        // so an SR-IOV node costs a few files per function, not sixty.
        let vf_of_rdma_pf = l.physfn.as_ref().is_some_and(|pf| rdma_pfs.contains(pf));
        let skip_ports = vf_of_rdma_pf && detail != Detail::All;
        let attrs = full && !skip_ports;
        let pci = l.pci_dir.as_deref().and_then(|d| pci::read_function_with(sys, d, Some(l.physfn.clone()), attrs));
        let netdevs = match (&l.pci_dir, attrs) {
            (Some(d), true) => sys.list(&d.join("net")),
            _ => Vec::new(), // from /sys/class/net's links (probe::link_by_function)
        };
        let (uverbs, uverbs_dev, uverbs_node_present) = uverbs_of(sys, verbs.get(name), attrs, &dev_nodes);
        let virtual_function = l.physfn.is_some();
        let ports = if skip_ports { Vec::new() } else { read_ports(sys, dir, name, detail) };
        Some(RdmaDevice {
            is_bond: name.contains("_bond"),
            name: name.clone(),
            pci,
            node_type: attrs.then(|| sys.read(&dir.join("node_type"))).flatten(),
            node_guid: attrs.then(|| sys.read(&dir.join("node_guid"))).flatten(),
            sys_image_guid: attrs.then(|| sys.read(&dir.join("sys_image_guid"))).flatten(),
            fw_ver: attrs.then(|| sys.read(&dir.join("fw_ver"))).flatten(),
            board_id: attrs.then(|| sys.read(&dir.join("board_id"))).flatten(),
            hca_type: attrs.then(|| sys.read(&dir.join("hca_type"))).flatten(),
            ports,
            uverbs,
            uverbs_dev,
            uverbs_node_present,
            mad: mads.get(name).cloned().unwrap_or_default(),
            bond_members: Vec::new(),
            virtual_function,
            netdevs,
            attributes_unread: full && skip_ports,
        })
    });
    devices.into_iter().flatten().collect()
}

/// Pass 1, symlinks only: where each device sits and whether it is a virtual function.
fn locate(sys: &SysRoot, class: &Path, class_dir: &Path, names: &[String]) -> Vec<Located> {
    names
        .iter()
        .filter_map(|name| {
            let Some(dir) = sys.resolve_in(class_dir, name) else {
                sys.note(format!("{} is a dangling link; device skipped", sys.show(&class.join(name))));
                return None;
            };
            // One readlink per function saved on SR-IOV nodes (see pci::device_dir).
            let pci_dir = pci::device_dir(sys, &dir, "infiniband");
            let physfn = pci_dir.as_ref().and_then(|d| sys.physfn(d));
            Some(Located { name: name.clone(), dir, pci_dir, physfn })
        })
        .collect()
}

/// The device's uverbs node: its name, its `dev` numbers (read with the attributes) and whether
/// /dev/infiniband holds it.
fn uverbs_of(
    sys: &SysRoot,
    verbs: Option<&Vec<String>>,
    attrs: bool,
    dev_nodes: &FxHashSet<&str>,
) -> (Option<String>, Option<String>, bool) {
    let uverbs = verbs.and_then(|v| v.first().cloned());
    let dev = match (&uverbs, attrs) {
        (Some(u), true) => sys.read(&Path::new("sys/class/infiniband_verbs").join(u).join("dev")),
        _ => None,
    };
    let present = uverbs.as_ref().map(|u| dev_nodes.contains(u.as_str())).unwrap_or(false);
    (uverbs, dev, present)
}

/// A device's ports: the hook's probe counts up from 1 (no directory listing), the others list
/// them. (A VF excluded in favour of its PF is not read at all: plan::hca excludes it first.)
fn read_ports(sys: &SysRoot, dir: &Path, name: &str, detail: Detail) -> Vec<RdmaPort> {
    let mut ports = Vec::new();
    if detail == Detail::Hook {
        for num in 1..=MAX_PORTS {
            let pd = dir.join("ports").join(num.to_string());
            if !sys.exists(&pd) {
                break;
            }
            ports.push(read_port(sys, &pd, num));
        }
    } else {
        for p in sys.list(&dir.join("ports")) {
            match p.parse::<u32>() {
                Ok(num) => ports.push(read_port(sys, &dir.join("ports").join(&p), num)),
                Err(_) => sys.note(format!("{}: unexpected port entry {:?}", name, p)),
            }
        }
    }
    ports
}

/// Which RDMA device a uverbs/umad class entry belongs to. The kernel creates those devices as
/// children of the RDMA device's parent (the PCI function): `…/0000:1a:00.0/infiniband/mlx5_0`
/// and `…/0000:1a:00.0/infiniband_verbs/uverbs0`. A parent with exactly one RDMA device decides
/// by location alone; otherwise (several devices on one parent, software devices, trees of
/// plain directories) the entry's `ibdev` file does.
struct Owners {
    by_parent: FxHashMap<PathBuf, Vec<String>>,
}

impl Owners {
    fn new(located: &[Located]) -> Owners {
        let mut by_parent: FxHashMap<PathBuf, Vec<String>> = FxHashMap::default();
        for l in located {
            if let Some(p) = l.dir.parent().and_then(Path::parent) {
                by_parent.entry(p.to_path_buf()).or_default().push(l.name.clone());
            }
        }
        Owners { by_parent }
    }

    /// ibdev name → its entries of `class` whose names start with one of `prefixes`.
    fn children(&self, sys: &SysRoot, class: &str, prefixes: &[&str]) -> BTreeMap<String, Vec<String>> {
        let class = PathBuf::from(class);
        let class_dir = sys.resolve(&class).unwrap_or_else(|| class.clone());
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for u in sys.list_unordered(&class) {
            if !prefixes.iter().any(|p| u.starts_with(p)) {
                continue;
            }
            let by_place = sys
                .link_dir(&class_dir, &u, 2)
                .and_then(|p| self.by_parent.get(&p))
                .filter(|v| v.len() == 1)
                .map(|v| v[0].clone());
            if let Some(ibdev) = by_place.or_else(|| sys.read(&class.join(&u).join("ibdev"))) {
                m.entry(ibdev).or_default().push(u);
            }
        }
        for v in m.values_mut() {
            v.sort_unstable_by(|a, b| natural_cmp(a, b));
        }
        m
    }
}

/// `4: ACTIVE` → (4, "ACTIVE").
pub fn parse_state(s: &str) -> Option<(u8, String)> {
    let (n, name) = s.split_once(':')?;
    Some((n.trim().parse().ok()?, name.trim().to_string()))
}

/// `400 Gb/sec (4X NDR)` → 400.0; `2.5 Gb/sec (1X SDR)` → 2.5.
pub fn parse_rate(s: &str) -> Option<f64> {
    let first = s.split_whitespace().next()?;
    let v: f64 = first.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

fn read_port(sys: &SysRoot, dir: &Path, num: u32) -> RdmaPort {
    let detail = sys.detail();
    let hook = detail == Detail::Hook;
    let state = sys.parse(&dir.join("state"), "`N: NAME`", parse_state);
    // A port reaches ACTIVE only over a physical link that is up (the logical state machine
    // leaves DOWN only on LinkUp), so the hook reads phys_state only to explain a port that is
    // not ACTIVE.
    let phys = if hook && state.as_ref().map(|s| s.0) == Some(4) {
        None
    } else {
        sys.parse(&dir.join("phys_state"), "`N: NAME`", parse_state)
    };
    let link_layer = sys.read(&dir.join("link_layer")).map(|s| match s.as_str() {
        "InfiniBand" => LinkLayer::InfiniBand,
        "Ethernet" => LinkLayer::Ethernet,
        _ => LinkLayer::Unknown,
    });
    let is_ib = link_layer == Some(LinkLayer::InfiniBand);
    let rate = if hook { None } else { sys.read(&dir.join("rate")) };
    let rate_gbps = rate.as_deref().and_then(parse_rate);
    if rate.is_some() && rate_gbps.is_none() {
        sys.note(format!("{}: unreadable rate {:?}", sys.show(&dir.join("rate")), rate));
    }
    let ib_facts = is_ib || !hook;
    let lid = if ib_facts { sys.parse(&dir.join("lid"), "a hex LID", parse_hex) } else { None };
    let sm_lid = if ib_facts { sys.parse(&dir.join("sm_lid"), "a hex SM LID", parse_hex) } else { None };
    let pkey0 = if ib_facts { read_pkey(sys, &dir.join("pkeys/0")) } else { None };
    // The whole table only when asked for: the subnet manager fills it with holes (OpenSM keeps
    // a partition's index when others are removed), so no early stop is correct, and reading 128
    // entries per port is most of what a real node costs. Decisions need index 0 alone.
    let mut pkeys = Vec::new();
    if detail == Detail::All {
        for k in sys.list(&dir.join("pkeys")) {
            if let Some(v) = read_pkey(sys, &dir.join("pkeys").join(&k)) {
                if v & 0x7fff != 0 {
                    pkeys.push(v);
                }
            }
        }
    }
    RdmaPort {
        port: num,
        state: state.as_ref().map(|s| s.0),
        state_name: state.map(|s| s.1),
        phys_state: phys.as_ref().map(|s| s.0),
        phys_state_name: phys.map(|s| s.1),
        link_layer,
        rate,
        rate_gbps,
        lid,
        sm_lid,
        pkey0,
        pkeys,
        gids: read_gids(sys, dir, is_ib),
    }
}

fn read_pkey(sys: &SysRoot, path: &Path) -> Option<u16> {
    sys.parse(path, "a hex P_Key", |s| parse_hex(s).filter(|v| *v <= 0xffff)).map(|v| v as u16)
}

fn is_zero_gid(g: &str) -> bool {
    g.chars().all(|c| c == '0' || c == ':')
}

fn read_gids(sys: &SysRoot, dir: &Path, is_ib: bool) -> Vec<Gid> {
    let detail = sys.detail();
    let gid_at = |i: u32| sys.read(&dir.join("gids").join(i.to_string()));
    let attr =
        |what: &str, i: u32| sys.read(&dir.join("gid_attrs").join(what).join(i.to_string())).filter(|v| !v.is_empty());
    if is_ib {
        // NCCL addresses InfiniBand peers by LID; the port GID (index 0) is shown, not used.
        return match detail {
            Detail::Hook => Vec::new(),
            Detail::Standard => gid_at(0)
                .filter(|g| !is_zero_gid(g))
                .map(|gid| vec![Gid { index: 0, gid, gid_type: None, netdev: None }])
                .unwrap_or_default(),
            Detail::All => {
                let mut idx: Vec<u32> = sys.list(&dir.join("gids")).iter().filter_map(|g| g.parse().ok()).collect();
                idx.sort_unstable();
                idx.truncate(IB_GID_SCAN);
                idx.into_iter()
                    .filter_map(|i| {
                        gid_at(i).filter(|g| !is_zero_gid(g)).map(|gid| Gid {
                            index: i,
                            gid,
                            gid_type: None,
                            netdev: None,
                        })
                    })
                    .collect()
            }
        };
    }
    let mut gids = Vec::new();
    if detail == Detail::Hook {
        // The decision needs one RoCE v2 GID with an IPv4 address: scan in index order (holes
        // from removed addresses are skipped, not taken for the end) and stop at the first.
        // A port without one costs the whole table, once, and is excluded.
        for i in 0..MAX_GIDS {
            let Some(gid) = gid_at(i) else { break };
            if is_zero_gid(&gid) {
                continue;
            }
            let mut g = Gid { index: i, gid, gid_type: attr("types", i), netdev: None };
            let usable = g.gid_type.as_deref() == Some("RoCE v2") && g.ipv4_mapped().is_some() && !g.is_link_local();
            if usable {
                g.netdev = attr("ndevs", i);
                gids.push(g);
                break;
            }
            gids.push(g);
        }
        return gids;
    }
    let mut idx: Vec<u32> = sys.list(&dir.join("gids")).iter().filter_map(|g| g.parse().ok()).collect();
    idx.sort_unstable();
    for i in idx {
        let Some(gid) = gid_at(i) else { continue };
        if is_zero_gid(&gid) {
            continue;
        }
        gids.push(Gid { index: i, gid, gid_type: attr("types", i), netdev: attr("ndevs", i) });
    }
    gids
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn states_and_rates() {
        assert_eq!(parse_state("4: ACTIVE"), Some((4, "ACTIVE".into())));
        assert_eq!(parse_state("5: LinkUp"), Some((5, "LinkUp".into())));
        assert_eq!(parse_state("garbage"), None);
        assert_eq!(parse_rate("400 Gb/sec (4X NDR)"), Some(400.0));
        assert_eq!(parse_rate("2.5 Gb/sec (1X SDR)"), Some(2.5));
        assert_eq!(parse_rate("NaN Gb/sec"), None);
    }
}
