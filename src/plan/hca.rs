//! Which HCA ports NCCL may use: NCCL_IB_HCA.
//!
//! NCCL keeps every ACTIVE port of either link layer and checks nothing else (spec
//! nccl-rules.md §2.1–2.2). These rules add what it does not check — above all a unicast LID on
//! InfiniBand ports — and drop devices that are not part of the data fabric. Every exclusion
//! carries the evidence in words a user can check with `ibstat` or sysfs.

use super::topo::{classify, PathType};
use super::{nccl_list_safe, Exclusion, ExclusionKind, Finding, Severity};
use crate::probe::{LinkLayer, Node, RdmaDevice, RdmaPort};
use std::collections::{BTreeMap, BTreeSet};

/// NCCL's MAX_IB_DEVS.
pub const MAX_ENTRIES: usize = 32;

pub struct Policy<'a> {
    pub include: &'a [String],
    pub exclude: &'a [String],
    /// The bootstrap interface: an HCA carrying it is management, not data, when others exist.
    pub bootstrap_if: Option<&'a str>,
}

#[derive(Debug, Clone, Default)]
pub struct Decision {
    pub selected: Vec<(String, u32)>,
    pub excluded: Vec<Exclusion>,
    pub fabric: Option<LinkLayer>,
    /// `=mlx5_0:1,mlx5_3:1,…`, or None when nothing qualifies.
    pub value: Option<String>,
    /// One sentence: why this set.
    pub reason: String,
    pub findings: Vec<Finding>,
}

/// Why a port cannot carry NCCL traffic, or None if it is healthy on its own.
pub fn port_fault(node: &Node, d: &RdmaDevice, p: &RdmaPort) -> Option<(ExclusionKind, String)> {
    use ExclusionKind as K;
    match (p.state, p.state_name.as_deref()) {
        (Some(4), _) => {}
        (Some(n), name) => {
            return Some((K::PortNotActive, format!("port state {} ({}), not ACTIVE", name.unwrap_or("?"), n)))
        }
        (None, _) => return Some((K::PortStateUnknown, "port state unknown (unreadable)".into())),
    }
    match (p.phys_state, p.phys_state_name.as_deref()) {
        (Some(5), _) => {}
        (Some(n), name) => {
            return Some((K::PhysNotLinkUp, format!("physical state {} ({}), not LinkUp", name.unwrap_or("?"), n)))
        }
        // ACTIVE is reached only over a physical link that is up, so an unknown physical state
        // (the hook does not read it for ACTIVE ports) says nothing more.
        (None, _) => {}
    }
    match p.link_layer {
        Some(LinkLayer::InfiniBand) => match (p.lid, p.sm_lid) {
            (Some(0), _) => Some((
                K::LidZero,
                "InfiniBand link layer with LID 0x0; NCCL would fail ibv_modify_qp (EINVAL) on every peer that connects to it"
                    .into(),
            )),
            (Some(l), _) if l == 0xffff || l >= 0xc000 => {
                Some((K::LidNotUnicast, format!("InfiniBand link layer with LID 0x{l:x}, not a unicast LID; peers cannot address it")))
            }
            (None, _) => Some((K::LidUnreadable, "InfiniBand port whose LID is unreadable".into())),
            (_, Some(0)) => {
                Some((K::NoSubnetManager, "InfiniBand port with SM LID 0x0: no subnet manager has configured it".into()))
            }
            (_, None) => Some((K::SmLidUnreadable, "InfiniBand port whose SM LID is unreadable".into())),
            _ => None,
        },
        Some(LinkLayer::Ethernet) => {
            let usable = p.gids.iter().any(|g| {
                g.gid_type.as_deref() == Some("RoCE v2")
                    && !g.is_link_local()
                    && g.ipv4_mapped().is_some()
                    && g.netdev.as_deref().and_then(|n| node.iface(n)).map(|i| i.is_running()).unwrap_or(false)
            });
            if usable {
                None
            } else {
                let nd = d.netdevs.first().map(|n| format!(" (netdev {n})")).unwrap_or_default();
                Some((
                    K::RoceNoAddress,
                    format!("RoCE port without a usable address: no RoCE v2 GID with an IPv4 address on an up interface{nd}"),
                ))
            }
        }
        _ => Some((K::LinkLayerUnknown, "link layer unknown".into())),
    }
}

/// The words of `port_fault`, for readers that report rather than decide.
pub fn port_problem(node: &Node, d: &RdmaDevice, p: &RdmaPort) -> Option<String> {
    port_fault(node, d, p).map(|(_, why)| why)
}

/// Which devices stand in for others: an SR-IOV virtual function's physical function (when
/// it is an RDMA device here), a bond's member functions. `select` and `health::rails` ask it.
pub struct Structure<'a> {
    pf_of: BTreeMap<&'a str, &'a str>,
    bond_of: BTreeMap<&'a str, &'a str>,
}

impl<'a> Structure<'a> {
    pub fn of(node: &'a Node) -> Structure<'a> {
        let pf_of =
            node.rdma.iter().filter_map(|d| d.pci.as_ref().map(|p| (p.bdf.as_str(), d.name.as_str()))).collect();
        let bond_of = node
            .rdma
            .iter()
            .filter(|d| d.is_bond)
            .flat_map(|d| d.bond_members.iter().map(move |m| (m.as_str(), d.name.as_str())))
            .collect();
        Structure { pf_of, bond_of }
    }

    /// The RDMA device that is `d`'s physical function, when `d` is a VF of one here (a VF
    /// passed into a VM without its PF is an HCA of its own).
    pub fn pf(&self, d: &RdmaDevice) -> Option<&'a str> {
        d.pci.as_ref().and_then(|x| x.physfn.as_deref()).and_then(|b| self.pf_of.get(b)).copied()
    }

    /// The bond device whose member function `d` is.
    pub fn bond(&self, d: &RdmaDevice) -> Option<&'a str> {
        (!d.is_bond).then(|| d.pci.as_ref().and_then(|x| self.bond_of.get(x.bdf.as_str()))).flatten().copied()
    }
}

/// `dev` or `dev:port` in a configured list.
pub fn listed(list: &[String], dev: &str, port: u32) -> bool {
    list.iter().any(|e| match e.split_once(':') {
        Some((n, p)) => n == dev && p.parse::<u32>().ok() == Some(port),
        None => e == dev,
    })
}

/// Netdevs that carry the bootstrap interface: it, and everything below it (VLAN → bond → slaves).
fn bootstrap_chain(node: &Node, iface: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![iface.to_string()];
    while let Some(n) = todo.pop() {
        if !out.insert(n.clone()) {
            continue;
        }
        if let Some(i) = node.iface(&n) {
            todo.extend(i.lowers.iter().cloned());
        }
    }
    out
}

fn netdevs_of(d: &RdmaDevice) -> BTreeSet<String> {
    let mut s: BTreeSet<String> = d.netdevs.iter().cloned().collect();
    for p in &d.ports {
        s.extend(p.gids.iter().filter_map(|g| g.netdev.clone()));
    }
    s
}

pub fn select(node: &Node, policy: &Policy) -> Decision {
    let mut dec = Decision::default();
    let structure = Structure::of(node);

    let mut cands = port_candidates(node, policy, &structure, &mut dec);
    cands = without_bootstrap_carrier(node, policy, cands, &mut dec);
    cands = one_partition(cands, &mut dec);
    cands = one_fabric(node, cands, &mut dec);
    dec.fabric = cands.first().and_then(|(_, p)| p.link_layer);

    for (i, (d, p)) in cands.iter().enumerate() {
        if i >= MAX_ENTRIES {
            dec.excluded.push(Exclusion {
                device: d.name.clone(),
                port: Some(p.port),
                kind: ExclusionKind::TooMany,
                reason: format!("NCCL accepts at most {MAX_ENTRIES} devices"),
            });
        } else {
            dec.selected.push((d.name.clone(), p.port));
        }
    }
    dec.reason = reason(node, &dec);
    dec.value = (!dec.selected.is_empty())
        .then(|| format!("={}", dec.selected.iter().map(|(d, p)| format!("{d}:{p}")).collect::<Vec<_>>().join(",")));
    dec
}

/// Every port the rules keep, in node order; the excluded ones, with their reasons, in `dec`.
fn port_candidates<'a>(node: &'a Node, policy: &Policy, structure: &Structure, dec: &mut Decision) -> Cands<'a> {
    let mut cands: Cands = Vec::new();
    for d in &node.rdma {
        let pf = structure.pf(d);
        let vf_reason = |pf: &str| format!("SR-IOV virtual function of {pf}; the physical function is used");
        if d.ports.is_empty() {
            // The hook does not read the ports of a VF whose PF is an RDMA device: the device
            // is excluded as a whole.
            if let Some(pf) = pf {
                dec.excluded.push(Exclusion {
                    device: d.name.clone(),
                    port: None,
                    kind: ExclusionKind::VirtualFunction,
                    reason: vf_reason(pf),
                });
            }
            continue;
        }
        for p in &d.ports {
            use ExclusionKind as K;
            let reason = if !policy.include.is_empty() && !listed(policy.include, &d.name, p.port) {
                Some((K::NotIncluded, "not in the configured hca.include list".to_string()))
            } else if listed(policy.exclude, &d.name, p.port) {
                Some((K::ConfigExcluded, "listed in the configured hca.exclude".to_string()))
            } else if !nccl_list_safe(&d.name) {
                Some((K::UnsafeName, "device name cannot be written in NCCL_IB_HCA syntax".to_string()))
            } else if let Some(pf) = pf {
                // Before the port checks, as on the hook's path, which has none to check.
                Some((K::VirtualFunction, vf_reason(pf)))
            } else if let Some(r) = port_fault(node, d, p) {
                Some(r)
            } else {
                structure.bond(d).map(|bond| (K::BondMember, format!("member of the bond device {bond}")))
            };
            match reason {
                Some((kind, reason)) => {
                    dec.excluded.push(Exclusion { device: d.name.clone(), port: Some(p.port), kind, reason })
                }
                None => cands.push((d, p)),
            }
        }
    }
    cands
}

/// Why the selection is what it is, for `--explain` and the hook's debug line.
fn reason(node: &Node, dec: &Decision) -> String {
    if dec.selected.is_empty() {
        return if node.rdma.is_empty() {
            "no RDMA devices".into()
        } else {
            format!("all {} RDMA ports excluded", dec.excluded.len())
        };
    }
    format!(
        "{} healthy {} port{} (ACTIVE, LinkUp, {}); exact names so that no prefix pulls in other devices{}",
        dec.selected.len(),
        dec.fabric.unwrap_or(LinkLayer::Unknown),
        if dec.selected.len() == 1 { "" } else { "s" },
        if dec.fabric == Some(LinkLayer::Ethernet) {
            "RoCE v2 IPv4 GID on an up netdev"
        } else {
            "unicast LID, SM present"
        },
        if dec.excluded.is_empty() { String::new() } else { format!("; {} port(s) excluded", dec.excluded.len()) }
    )
}

type Cands<'a> = Vec<(&'a RdmaDevice, &'a RdmaPort)>;

/// A device carrying the bootstrap/management network is not data fabric when others exist.
fn without_bootstrap_carrier<'a>(node: &Node, policy: &Policy, mut cands: Cands<'a>, dec: &mut Decision) -> Cands<'a> {
    if let Some(b) = policy.bootstrap_if {
        let chain = bootstrap_chain(node, b);
        let (mgmt, data): (Vec<_>, Vec<_>) =
            cands.iter().partition(|(d, _)| netdevs_of(d).iter().any(|n| chain.contains(n)));
        if !mgmt.is_empty() && !data.is_empty() {
            for (d, p) in &mgmt {
                dec.excluded.push(Exclusion {
                    device: d.name.clone(),
                    port: Some(p.port),
                    kind: ExclusionKind::BootstrapCarrier,
                    reason: format!(
                        "carries the bootstrap/management network ({b}) while {} dedicated data ports exist",
                        data.len()
                    ),
                });
            }
            cands = data;
        }
    }
    cands
}

/// Partitions: NCCL's queue pairs use the P_Key at index 0 of each port's table (net_ib sets
/// pkey_index from NCCL_IB_PKEY, default 0), and two QPs talk only within one partition (the
/// low 15 bits). A port whose index-0 partition differs from the rest cannot reach them; what
/// else its table holds does not matter to NCCL.
fn one_partition<'a>(mut cands: Cands<'a>, dec: &mut Decision) -> Cands<'a> {
    let part = |p: &RdmaPort| p.pkey0.map(|k| k & 0x7fff);
    let mut by_part: BTreeMap<u16, usize> = BTreeMap::new();
    for (_, p) in cands.iter().filter(|(_, p)| p.link_layer == Some(LinkLayer::InfiniBand)) {
        if let Some(k) = part(p) {
            *by_part.entry(k).or_default() += 1;
        }
    }
    if by_part.len() > 1 {
        let mut counts: Vec<(u16, usize)> = by_part.into_iter().collect();
        counts.sort_by_key(|c| std::cmp::Reverse(c.1));
        if counts[0].1 > counts[1].1 {
            let majority = counts[0].0;
            let mut keep = Vec::new();
            for (d, p) in cands {
                match (p.link_layer, p.pkey0) {
                    (Some(LinkLayer::InfiniBand), Some(k)) if k & 0x7fff != majority => {
                        dec.excluded.push(Exclusion {
                            device: d.name.clone(),
                            port: Some(p.port),
                            kind: ExclusionKind::OtherPartition,
                            reason: format!(
                                "P_Key 0x{k:04x} at index 0 (the one NCCL uses) is in another partition than the fabric's 0x{majority:04x}"
                            ),
                        });
                    }
                    _ => keep.push((d, p)),
                }
            }
            cands = keep;
        } else {
            dec.findings.push(Finding::new(
                Severity::Warning,
                "NCCL_IB_HCA",
                "HCA ports disagree on the partition of their P_Key at index 0 (the one NCCL uses) and no partition is in the majority; all were kept",
            ));
        }
    }
    cands
}

/// One fabric only: NCCL cannot merge or connect across link layers.
fn one_fabric<'a>(node: &Node, mut cands: Cands<'a>, dec: &mut Decision) -> Cands<'a> {
    let layers: BTreeSet<LinkLayer> = cands.iter().filter_map(|(_, p)| p.link_layer).collect();
    if layers.len() > 1 {
        let affine =
            |ll: LinkLayer| cands.iter().filter(|(d, p)| p.link_layer == Some(ll) && gpu_affine(node, d)).count();
        let count = |ll: LinkLayer| cands.iter().filter(|(_, p)| p.link_layer == Some(ll)).count();
        let (ib, eth) = (LinkLayer::InfiniBand, LinkLayer::Ethernet);
        let key = |ll| (affine(ll), count(ll), ll == ib);
        let chosen = if key(ib) >= key(eth) { ib } else { eth };
        let why = format!(
            "{} GPU-affine (PIX/PXB) {} ports vs {} {}",
            affine(chosen),
            chosen,
            affine(if chosen == ib { eth } else { ib }),
            if chosen == ib { eth } else { ib }
        );
        let mut keep = Vec::new();
        for (d, p) in cands {
            if p.link_layer == Some(chosen) {
                keep.push((d, p));
            } else {
                dec.excluded.push(Exclusion {
                    device: d.name.clone(),
                    port: Some(p.port),
                    kind: ExclusionKind::OtherFabric,
                    reason: format!(
                        "{} link layer; this job uses the {} fabric ({}); NCCL cannot mix link layers",
                        p.link_layer.unwrap_or(LinkLayer::Unknown),
                        chosen,
                        why
                    ),
                });
            }
        }
        cands = keep;
    }
    cands
}

/// Is this device at PIX/PXB distance from some GPU (GPUDirect RDMA under NCCL's defaults)?
pub fn gpu_affine(node: &Node, d: &RdmaDevice) -> bool {
    let Some(dp) = &d.pci else { return false };
    node.gpus.iter().any(|g| classify(&g.pci, dp) <= PathType::PXB)
}
