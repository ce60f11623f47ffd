//! RDMA devices and ports from `/sys/class/infiniband*`, the same values verbs reports to NCCL.

use super::model::{Gid, LinkLayer, RdmaDevice, RdmaPort};
use super::pci;
use super::sysroot::{parse_hex, SysRoot};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// IB ports rarely use GID entries past the port GUID (alias GUIDs aside); RoCE tables are
/// sparse and all of them are read.
const IB_GID_SCAN: usize = 16;

pub fn read(sys: &SysRoot) -> Vec<RdmaDevice> {
    let class = Path::new("sys/class/infiniband");
    let verbs = verbs_nodes(sys);
    let full = sys.full();
    let mads = if full { mad_nodes(sys) } else { BTreeMap::new() };
    let dev_nodes = sys.list(Path::new("dev/infiniband"));
    let names = sys.list(class);
    let devices = super::sysroot::par_map(&names, |name| {
        let link = class.join(name);
        let Some(dir) = sys.resolve(&link) else {
            sys.note(format!("{} is a dangling link; device skipped", sys.show(&link)));
            return None;
        };
        let pci_dir = sys.resolve(&dir.join("device"));
        let pci = pci_dir.as_deref().and_then(|d| pci::read_function(sys, d));
        let netdevs = pci_dir.map(|d| sys.list(&d.join("net"))).unwrap_or_default();
        let (uverbs, uverbs_dev) = match verbs.get(name) {
            Some((u, d)) => (Some(u.clone()), d.clone()),
            None => (None, None),
        };
        let uverbs_node_present = uverbs.as_ref().map(|u| dev_nodes.contains(u)).unwrap_or(false);
        let virtual_function = pci.as_ref().map(|p| p.physfn.is_some()).unwrap_or(false);
        let mut ports = Vec::new();
        for p in sys.list(&dir.join("ports")) {
            match p.parse::<u32>() {
                Ok(num) => ports.push(read_port(sys, &dir.join("ports").join(&p), num)),
                Err(_) => sys.note(format!("{}: unexpected port entry {:?}", name, p)),
            }
        }
        Some(RdmaDevice {
            is_bond: name.contains("_bond"),
            name: name.clone(),
            pci,
            node_type: full.then(|| sys.read(&dir.join("node_type"))).flatten(),
            node_guid: full.then(|| sys.read(&dir.join("node_guid"))).flatten(),
            sys_image_guid: full.then(|| sys.read(&dir.join("sys_image_guid"))).flatten(),
            fw_ver: full.then(|| sys.read(&dir.join("fw_ver"))).flatten(),
            board_id: full.then(|| sys.read(&dir.join("board_id"))).flatten(),
            hca_type: full.then(|| sys.read(&dir.join("hca_type"))).flatten(),
            ports,
            uverbs,
            uverbs_dev,
            uverbs_node_present,
            mad: mads.get(name).cloned().unwrap_or_default(),
            bond_members: Vec::new(),
            virtual_function,
            netdevs,
        })
    });
    devices.into_iter().flatten().collect()
}

/// ibdev name → (uverbsN, "major:minor").
fn verbs_nodes(sys: &SysRoot) -> BTreeMap<String, (String, Option<String>)> {
    let class = PathBuf::from("sys/class/infiniband_verbs");
    let mut m = BTreeMap::new();
    for u in sys.list(&class) {
        if !u.starts_with("uverbs") {
            continue;
        }
        if let Some(ibdev) = sys.read(&class.join(&u).join("ibdev")) {
            let dev = sys.read(&class.join(&u).join("dev"));
            m.insert(ibdev, (u, dev));
        }
    }
    m
}

fn mad_nodes(sys: &SysRoot) -> BTreeMap<String, Vec<String>> {
    let class = PathBuf::from("sys/class/infiniband_mad");
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for u in sys.list(&class) {
        if !(u.starts_with("umad") || u.starts_with("issm")) {
            continue;
        }
        if let Some(ibdev) = sys.read(&class.join(&u).join("ibdev")) {
            m.entry(ibdev).or_default().push(u);
        }
    }
    m
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
    let state = sys.parse(&dir.join("state"), "`N: NAME`", parse_state);
    let phys = sys.parse(&dir.join("phys_state"), "`N: NAME`", parse_state);
    let link_layer = sys.read(&dir.join("link_layer")).map(|s| match s.as_str() {
        "InfiniBand" => LinkLayer::InfiniBand,
        "Ethernet" => LinkLayer::Ethernet,
        _ => LinkLayer::Unknown,
    });
    let rate = sys.read(&dir.join("rate"));
    let rate_gbps = rate.as_deref().and_then(parse_rate);
    if rate.is_some() && rate_gbps.is_none() {
        sys.note(format!("{}: unreadable rate {:?}", sys.show(&dir.join("rate")), rate));
    }
    let mut pkeys = Vec::new();
    for k in sys.list(&dir.join("pkeys")) {
        if let Some(v) = sys.parse(&dir.join("pkeys").join(&k), "a hex P_Key", parse_hex) {
            if v & 0x7fff != 0 && v <= 0xffff {
                pkeys.push(v as u16);
            }
        }
    }
    let is_ib = link_layer == Some(LinkLayer::InfiniBand);
    let mut gids = Vec::new();
    let mut idx: Vec<u32> = sys.list(&dir.join("gids")).iter().filter_map(|g| g.parse().ok()).collect();
    idx.sort_unstable();
    if is_ib {
        idx.truncate(IB_GID_SCAN);
    }
    for i in idx {
        let Some(g) = sys.read(&dir.join("gids").join(i.to_string())) else {
            continue;
        };
        if g.chars().all(|c| c == '0' || c == ':') {
            continue;
        }
        let (gid_type, netdev) = if is_ib {
            (None, None)
        } else {
            (
                sys.read(&dir.join("gid_attrs/types").join(i.to_string())),
                sys.read(&dir.join("gid_attrs/ndevs").join(i.to_string())),
            )
        };
        gids.push(Gid { index: i, gid: g, gid_type, netdev });
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
        lid: sys.parse(&dir.join("lid"), "a hex LID", parse_hex),
        sm_lid: sys.parse(&dir.join("sm_lid"), "a hex SM LID", parse_hex),
        pkeys,
        gids,
    }
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
