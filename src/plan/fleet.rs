//! `fleet`: the facts that must agree across the nodes of a job, compared. A collective runs at
//! the speed of its slowest rail on its worst node, and some differences break it outright (a
//! partition or subnet that differs, a different GPU count): none of that shows on one node
//! alone. Each node's facts are decided with the same rules as `env` (healthy HCAs, bootstrap
//! interface), grouped by value, and every node outside the majority is named with the effect.

use super::{Intent, Plan, Severity};
use crate::probe::{LinkLayer, Node};
use serde::Serialize;
use std::collections::BTreeMap;

/// One compared fact of one node; None when the snapshot does not say (an older schema, a
/// probe without the driver loaded).
pub type Value = Option<String>;

struct Attr {
    key: &'static str,
    label: &'static str,
    severity: Severity,
    /// What the difference does, said after "X has A, the other N nodes B: ".
    effect: &'static str,
}

const ATTRS: &[Attr] = &[
    Attr { key: "gpu_count", label: "GPUs", severity: Severity::Error, effect: "torchrun starts a different number of ranks there, and a job sized for the majority fails or leaves GPUs idle" },
    Attr { key: "gpu_model", label: "GPU model", severity: Severity::Warning, effect: "the slowest model sets the pace of every collective" },
    Attr { key: "nvidia_driver", label: "NVIDIA driver", severity: Severity::Warning, effect: "mixed driver (and CUDA driver API) versions; align them before chasing anything else" },
    Attr { key: "healthy_hcas", label: "healthy HCA ports", severity: Severity::Error, effect: "NCCL runs fewer rails (or crosses PCIe) there, and every ring through that node runs at its pace, without a word since NCCL 2.30 (NCCL_IGNORE_NET_MISMATCH=1 by default); with =0 init fails outright (\"Detected mixed local Net device counts across ranks\")" },
    Attr { key: "nccl_ib_hca", label: "NCCL_IB_HCA (by GPU affinity)", severity: Severity::Warning, effect: "rails are not the same devices on every node: rail-aligned fabrics route across spines" },
    Attr { key: "link_layer", label: "link layer", severity: Severity::Error, effect: "InfiniBand and RoCE ports cannot connect to each other: NCCL's connections between them fail" },
    Attr { key: "rate", label: "port rates", severity: Severity::Error, effect: "a downtrained port caps every ring through it" },
    Attr { key: "roce_mtu", label: "RoCE interface MTU", severity: Severity::Warning, effect: "a RoCE port's active MTU follows its interface's MTU, and both ends use the smaller: jumbo frames lost on every connection to that node" },
    Attr { key: "pcie", label: "PCIe links below their width", severity: Severity::Warning, effect: "a narrowed GPU or HCA link caps what that rail can carry" },
    Attr { key: "partition", label: "P_Key at index 0", severity: Severity::Error, effect: "NCCL's queue pairs use index 0: ports in different partitions cannot talk, and connections fail or hang" },
    Attr { key: "subnet_prefix", label: "IB subnet prefix", severity: Severity::Error, effect: "ports on different subnets cannot reach each other without a router" },
    Attr { key: "hca_firmware", label: "HCA firmware", severity: Severity::Warning, effect: "mixed firmware: align it (known fixes and defaults differ between versions)" },
    Attr { key: "peermem", label: "GPUDirect peer memory", severity: Severity::Warning, effect: "no GPUDirect RDMA there: its traffic is staged through host memory" },
    Attr { key: "dmabuf", label: "DMA-BUF possible (kernel, NVIDIA module)", severity: Severity::Warning, effect: "where nvidia_peermem is absent, GPUDirect RDMA then depends on the node: align kernels and NVIDIA module kinds" },
    Attr { key: "acs", label: "ACS redirect on GPU↔HCA paths", severity: Severity::Error, effect: "peer-to-peer between GPU and HCA goes through the root complex there (slow), or fails with an IOMMU (IB completion error 4)" },
    Attr { key: "iommu", label: "IOMMU", severity: Severity::Warning, effect: "a translating IOMMU changes how GPUDirect RDMA traffic flows: align the kernel command line (iommu=pt)" },
    Attr { key: "memlock", label: "memlock limit", severity: Severity::Warning, effect: "a low limit makes RDMA memory registration fail under load" },
    Attr { key: "bootstrap", label: "bootstrap interface (subnet)", severity: Severity::Error, effect: "NCCL's bootstrap must reach rank 0 from every node: a node without the interface cannot join" },
];

/// The compared facts of one node, plus the detail that explains an outlier (what was excluded).
#[derive(Debug, Clone)]
pub struct NodeFacts {
    pub host: String,
    pub values: BTreeMap<&'static str, Value>,
    pub excluded: Vec<String>,
    /// Per-port detail for port facts (`mlx5_3:1 200 Gb/sec (2X NDR)`), named in a difference.
    pub ports: BTreeMap<&'static str, Vec<String>>,
}

fn joined(mut v: Vec<String>) -> Option<String> {
    v.sort();
    v.dedup();
    (!v.is_empty()).then(|| v.join(", "))
}

/// The distinct values of a fact over a node's ports, joined; unknown (None) as soon as one port
/// does not record it, so an older snapshot is not taken for a difference; `empty` for no port.
fn over_ports(values: Vec<Option<String>>, empty: &str) -> Value {
    if values.iter().any(Option::is_none) {
        return None;
    }
    Some(joined(values.into_iter().flatten().collect()).unwrap_or_else(|| empty.to_string()))
}

pub fn facts(host: &str, node: &Node, plan: &Plan) -> NodeFacts {
    let mut v: BTreeMap<&'static str, Value> = BTreeMap::new();
    let ports: Vec<(&crate::probe::RdmaDevice, &crate::probe::RdmaPort)> = plan
        .hcas
        .iter()
        .filter_map(|(d, p)| {
            let dev = node.rdma_device(d)?;
            Some((dev, dev.ports.iter().find(|x| x.port == *p)?))
        })
        .collect();
    v.insert("gpu_count", Some(node.gpus.len().to_string()));
    v.insert("gpu_model", joined(node.gpus.iter().map(|g| g.model.clone()).collect()).or(Some("no GPU".into())));
    v.insert("nvidia_driver", node.host.nvidia_driver.clone().or_else(|| node.gpus.is_empty().then(|| "none".into())));
    v.insert("healthy_hcas", Some(plan.hcas.len().to_string()));
    v.insert("nccl_ib_hca", Some(plan.get("NCCL_IB_HCA").map(|s| s.value.clone()).unwrap_or_else(|| "none".into())));
    let port_detail = port_facts(node, &ports, &mut v);
    v.insert("pcie", pcie_fact(node, &ports));
    ib_facts(&ports, &mut v);
    host_facts(node, plan, &mut v);
    let excluded = plan
        .excluded
        .iter()
        .map(|e| format!("{}{}: {}", e.device, e.port.map(|p| format!(" port {p}")).unwrap_or_default(), e.reason))
        .collect();
    NodeFacts { host: host.to_string(), values: v, excluded, ports: port_detail }
}

type Facts = BTreeMap<&'static str, Value>;
type Ports<'a> = [(&'a crate::probe::RdmaDevice, &'a crate::probe::RdmaPort)];

/// The ports' link layer, rate and (RoCE) MTU: the value over all ports, and each port's.
fn port_facts(node: &Node, ports: &Ports, v: &mut Facts) -> BTreeMap<&'static str, Vec<String>> {
    v.insert(
        "link_layer",
        Some(
            joined(ports.iter().filter_map(|(_, p)| p.link_layer.map(|l| l.to_string())).collect())
                .unwrap_or_else(|| "none".into()),
        ),
    );
    let rates: Vec<Option<String>> = ports.iter().map(|(_, p)| p.rate.clone()).collect();
    let mut port_detail: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    port_detail.insert(
        "rate",
        ports.iter().map(|(d, p)| format!("{}:{} {}", d.name, p.port, p.rate.as_deref().unwrap_or("?"))).collect(),
    );
    // Distinct rates, not counts: a missing port is the healthy-ports fact's business.
    v.insert("rate", over_ports(rates, "none"));
    // InfiniBand's active MTU is negotiated by the fabric and not in sysfs; a RoCE port's follows
    // its interface's MTU, which is.
    let roce: Vec<Option<String>> = ports
        .iter()
        .filter(|(_, p)| p.link_layer == Some(LinkLayer::Ethernet))
        .map(|(d, _)| d.netdevs.first().and_then(|n| node.iface(n)).and_then(|i| i.mtu).map(|m| m.to_string()))
        .collect();
    port_detail.insert(
        "roce_mtu",
        ports
            .iter()
            .filter(|(_, p)| p.link_layer == Some(LinkLayer::Ethernet))
            .map(|(d, p)| {
                let mtu = d.netdevs.first().and_then(|n| node.iface(n)).and_then(|i| i.mtu);
                format!("{}:{} MTU {}", d.name, p.port, mtu.map(|m| m.to_string()).unwrap_or_else(|| "?".into()))
            })
            .collect(),
    );
    v.insert("roce_mtu", over_ports(roce, "no RoCE port"));
    port_detail
}

/// PCIe links narrower than the device can do, of the HCAs and GPUs (unknown where one is not read).
fn pcie_fact(node: &Node, ports: &Ports) -> Value {
    let mut narrow: Vec<String> = Vec::new();
    let mut known = true;
    for (name, pci) in ports
        .iter()
        .map(|(d, _)| (d.name.clone(), d.pci.as_ref()))
        .chain(node.gpus.iter().enumerate().map(|(i, g)| (format!("GPU{i}"), Some(&g.pci))))
    {
        match pci.map(|p| (p.link.current_width, p.link.narrower())) {
            Some((Some(_), Some((c, m)))) => narrow.push(format!("{name} x{c} of x{m}")),
            Some((Some(_), None)) => {}
            _ => known = false,
        }
    }
    if known {
        Some(joined(narrow).unwrap_or_else(|| "none".into()))
    } else {
        None
    }
}

/// InfiniBand ports' partition and subnet prefix, and the HCAs' firmware.
fn ib_facts(ports: &Ports, v: &mut Facts) {
    let ib: Vec<&crate::probe::RdmaPort> =
        ports.iter().map(|(_, p)| *p).filter(|p| p.link_layer == Some(LinkLayer::InfiniBand)).collect();
    let parts: Vec<Option<String>> = ib.iter().map(|p| p.pkey0.map(|k| format!("0x{:04x}", k & 0x7fff))).collect();
    v.insert("partition", over_ports(parts, "none"));
    let prefixes: Vec<Option<String>> = ib
        .iter()
        .map(|p| p.gids.iter().find(|g| g.index == 0).map(|g| g.gid.split(':').take(4).collect::<Vec<_>>().join(":")))
        .collect();
    v.insert("subnet_prefix", over_ports(prefixes, "none"));
    let fw: Vec<Option<String>> = ports.iter().map(|(d, _)| d.fw_ver.clone()).collect();
    v.insert("hca_firmware", over_ports(fw, "none"));
}

/// The host's GPUDirect, ACS, IOMMU, memlock and bootstrap facts.
fn host_facts(node: &Node, plan: &Plan, v: &mut Facts) {
    v.insert(
        "peermem",
        Some(node.host.peermem.clone().map(|m| format!("loaded ({m})")).unwrap_or_else(|| "not loaded".into())),
    );
    v.insert(
        "dmabuf",
        match super::gpudirect::dmabuf(&node.host) {
            super::gpudirect::DmaBuf::Possible => Some("possible".into()),
            super::gpudirect::DmaBuf::Missing(why) => Some(format!("no: {why}")),
            super::gpudirect::DmaBuf::Unknown(_) => None,
        },
    );
    let a = super::gpudirect::acs(node, plan);
    v.insert(
        "acs",
        if !a.redirecting.is_empty() {
            Some(format!("on at {}", a.redirecting.iter().map(|r| r.bridge.as_str()).collect::<Vec<_>>().join(", ")))
        } else if !a.unknown.is_empty() {
            None
        } else if a.pairs == 0 {
            // No bridge was looked at: nothing to call "off".
            Some("no GPU and HCA below one switch".into())
        } else {
            Some("off".into())
        },
    );
    v.insert("iommu", super::gpudirect::iommu(&node.host).map(String::from));
    v.insert(
        "memlock",
        match (node.host.memlock_unlimited, node.host.memlock_bytes) {
            (Some(true), _) => Some("unlimited".into()),
            (_, Some(b)) => Some(format!("{} KiB", b / 1024)),
            _ => None,
        },
    );
    v.insert(
        "bootstrap",
        Some(match plan.bootstrap_if.as_ref().and_then(|i| node.iface(i)) {
            Some(i) => {
                let net = i.routable_addr(true).or_else(|| i.routable_addr(false)).map(|a| a.trunc().to_string());
                format!("{} ({})", i.name, net.unwrap_or_else(|| "no address".into()))
            }
            None => "none".into(),
        }),
    );
}

/// Decide one node the way `env` would, then take its facts.
pub fn node_facts(host: &str, node: &Node, intent: &Intent) -> NodeFacts {
    facts(host, node, &super::decide(node, intent))
}

#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub value: String,
    /// Hostlist-compressed (`gpu-[001-016,018-064]`).
    pub nodes: String,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub attribute: &'static str,
    pub label: &'static str,
    pub severity: Severity,
    /// The majority first.
    pub groups: Vec<Group>,
    /// One sentence per outlier group: who, what, the effect, the fix where one is known.
    pub messages: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub nodes: usize,
    pub agree: Vec<&'static str>,
    pub differences: Vec<Difference>,
    /// Attributes some snapshots do not record, with those nodes.
    pub unknown: Vec<(String, String)>,
}

/// How healthy a value of a health fact is, higher better; the same for every value of any
/// other fact (the majority decides there).
fn health(key: &str, val: &str) -> i64 {
    // `400 Gb/sec (4X NDR)`: the leading number
    let gbit = |x: &str| x.split_whitespace().next().and_then(|n| n.parse::<f64>().ok());
    match key {
        "healthy_hcas" => val.parse().unwrap_or(0),
        "pcie" => i64::from(val == "none"),
        // the side whose slowest port is fastest
        "rate" => val.split(", ").filter_map(gbit).fold(f64::INFINITY, f64::min).min(1e9) as i64,
        _ => 0,
    }
}

pub fn compare(all: &[NodeFacts]) -> Report {
    let mut report = Report { nodes: all.len(), agree: Vec::new(), differences: Vec::new(), unknown: Vec::new() };
    let differs = |key: &str| {
        let mut vals = all.iter().filter_map(|n| n.values.get(key).cloned().flatten());
        let first = vals.next();
        vals.any(|v| Some(v) != first)
    };
    for a in ATTRS {
        // A rail that is missing changes NCCL_IB_HCA too: said once, by the healthy-ports fact.
        if a.key == "nccl_ib_hca" && differs("healthy_hcas") {
            continue;
        }
        let mut by: BTreeMap<&str, Vec<&NodeFacts>> = BTreeMap::new();
        let mut unknown: Vec<String> = Vec::new();
        for n in all {
            match n.values.get(a.key).and_then(|v| v.as_deref()) {
                Some(val) => by.entry(val).or_default().push(n),
                None => unknown.push(n.host.clone()),
            }
        }
        if !unknown.is_empty() {
            report.unknown.push((a.label.to_string(), crate::slurm::compress_hostlist(&unknown)));
        }
        // Unknown everywhere is not agreement: it is in `unknown`, not counted as agreeing.
        if by.is_empty() {
            continue;
        }
        if by.len() <= 1 {
            report.agree.push(a.label);
            continue;
        }
        report.differences.push(difference(a, by));
    }
    report
}

/// One attribute on which the nodes differ: its groups, worst (or the minority) named against
/// the majority.
fn difference<'a>(a: &Attr, by: BTreeMap<&'a str, Vec<&'a NodeFacts>>) -> Difference {
    let mut groups: Vec<(&str, Vec<&NodeFacts>)> = by.into_iter().collect();
    // A health fact names the node whose own facts are worse (fewer healthy ports, a slower
    // port, a narrowed link), whatever the majority: in a job of two, the majority rule
    // blamed the healthy node half the time. Other facts: the majority first; ties keep the
    // value order.
    groups.sort_by_key(|g| (std::cmp::Reverse(health(a.key, g.0)), std::cmp::Reverse(g.1.len())));
    let hosts =
        |g: &[&NodeFacts]| crate::slurm::compress_hostlist(&g.iter().map(|n| n.host.clone()).collect::<Vec<_>>());
    let (maj_val, maj) = (&groups[0].0, &groups[0].1);
    let mut messages = Vec::new();
    for (val, g) in &groups[1..] {
        let verb = if g.len() == 1 { "has" } else { "have" };
        let mut m = format!(
            "{} {verb} {} {val}, the other {} node{} {maj_val}: {}",
            hosts(g),
            a.label,
            maj.len(),
            if maj.len() == 1 { "" } else { "s" },
            a.effect
        );
        m.push_str(&odd_ports(a, maj, g));
        m.push_str(&exclusion_fix(a, maj, g));
        messages.push(m);
    }
    Difference {
        attribute: a.key,
        label: a.label,
        severity: a.severity,
        groups: groups.iter().map(|(v, g)| Group { value: v.to_string(), nodes: hosts(g), count: g.len() }).collect(),
        messages,
    }
}

/// A port fact: the HCA and port that differ from the majority's, on each node of `g`.
fn odd_ports(a: &Attr, maj: &[&NodeFacts], g: &[&NodeFacts]) -> String {
    if let Some(usual) = maj.first().and_then(|n| n.ports.get(a.key)) {
        let usual_vals: std::collections::BTreeSet<&str> =
            usual.iter().filter_map(|x| x.split_once(' ').map(|(_, v)| v)).collect();
        let odd: Vec<String> = g
            .iter()
            .flat_map(|n| {
                n.ports.get(a.key).into_iter().flatten().filter_map(|x| {
                    let (_, v) = x.split_once(' ')?;
                    (!usual_vals.contains(v)).then(|| format!("{} {x}", n.host))
                })
            })
            .take(8)
            .collect();
        if !odd.is_empty() {
            return format!("; ports: {}", odd.join(", "));
        }
    }
    String::new()
}

/// What the rules excluded on `g` and not on the majority: the fix for a rail short.
fn exclusion_fix(a: &Attr, maj: &[&NodeFacts], g: &[&NodeFacts]) -> String {
    if a.key == "healthy_hcas" || a.key == "nccl_ib_hca" {
        let usual: std::collections::BTreeSet<&String> = maj.iter().flat_map(|n| n.excluded.iter()).collect();
        let extra: Vec<&String> = g[0].excluded.iter().filter(|e| !usual.contains(e)).take(3).collect();
        if !extra.is_empty() {
            return format!(
                "; fix on {}: {}",
                g[0].host,
                extra.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")
            );
        }
    }
    String::new()
}
