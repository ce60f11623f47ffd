//! `health`: is this node fit to take a multi-node job? A check for Slurm's
//! `HealthCheckProgram` (or an NHC check) that knows what NCCL will take: the node's rails (the
//! HCA ports of the models NCCL selects), each ACTIVE with a usable address, none downtrained
//! below its peers, their `/dev/infiniband` nodes present; and, where the site states its
//! expected shape (`health:` in /etc/ibwire.yaml, or `ibwire health --learn` from a good node),
//! the count of healthy ports, link layer, rate and width, GPU count and model, a GPUDirect path
//! and the memlock limit. Pure: facts in, problems out; the command words and drains.
//!
//! A fact that could not be read is `unknown`, reported, never a problem: a health check must
//! not drain a node on its own blindness.

use super::{hca, Plan};
use crate::config::HealthConfig;
use crate::probe::{LinkLayer, Node, RdmaDevice, RdmaPort};

/// One thing wrong with the node, in words an admin acts on.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Problem {
    /// What it is about: `mlx5_6 port 1`, `GPUs`, `/dev/infiniband`, `GPUDirect RDMA`.
    pub subject: String,
    pub message: String,
    pub fix: String,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Report {
    pub problems: Vec<Problem>,
    /// What could not be checked, and why.
    pub unknown: Vec<String>,
    /// The rails checked, `mlx5_0:1`, and how many of them are healthy.
    pub rails: Vec<String>,
    pub healthy_rails: usize,
}

impl Report {
    pub fn healthy(&self) -> bool {
        self.problems.is_empty()
    }

    /// The one line a drain reason or an NHC `die` carries: the first problem, its fix, and how
    /// many more there are.
    pub fn line(&self) -> Option<String> {
        let p = self.problems.first()?;
        let more = match self.problems.len() - 1 {
            0 => String::new(),
            n => format!(" (+{n} more: ibwire health)"),
        };
        Some(format!("{}: {}; fix: {}{more}", p.subject, p.message, p.fix))
    }
}

/// `400 Gb/sec (4X NDR)` → `4X`.
pub fn width(rate: &str) -> Option<&str> {
    let inner = rate.split_once('(')?.1;
    inner.split(|c: char| c.is_whitespace() || c == ')').next().filter(|w| w.ends_with('X') && w.len() > 1)
}

fn width_lanes(w: &str) -> Option<u32> {
    w.strip_suffix('X')?.parse().ok()
}

/// A port's lanes, from its rate (`400 Gb/sec (4X NDR)`: 4).
fn lanes(p: &RdmaPort) -> Option<u32> {
    p.rate.as_deref().and_then(width).and_then(width_lanes)
}

/// The fastest rate (Gb/s) and the most lanes among `ports`: what a healthy rail runs at here.
fn best<'a>(ports: impl Iterator<Item = &'a RdmaPort> + Clone) -> (f64, Option<u32>) {
    (ports.clone().filter_map(|p| p.rate_gbps).fold(0.0_f64, f64::max), ports.filter_map(lanes).max())
}

/// The node's rails: each port of a device of a model (PCI vendor:device) whose port of that
/// number NCCL selected, less what `select` never takes whatever the port says (a bond device, a
/// bond's member, a VF whose PF is here) and what the configuration excludes. Where NCCL selected
/// nothing, every InfiniBand port of such a device (an InfiniBand HCA exists only to be on the
/// fabric; an Ethernet one may serve storage, and needs `health.hcas` to be judged).
pub fn rails<'a>(node: &'a Node, plan: &Plan, exclude: &[String]) -> Vec<(&'a RdmaDevice, &'a RdmaPort)> {
    let model = |d: &RdmaDevice| d.pci.as_ref().and_then(|p| Some((p.vendor?, p.device?)));
    // (model, port number): port 2 of a dual-port model is a rail only where NCCL took a port 2.
    let chosen: Vec<((u32, u32), u32)> =
        plan.hcas.iter().filter_map(|(d, p)| Some((model(node.rdma_device(d)?)?, *p))).collect();
    let structure = hca::Structure::of(node);
    let mut out = Vec::new();
    for d in node.rdma.iter().filter(|d| !d.is_bond && structure.pf(d).is_none() && structure.bond(d).is_none()) {
        for p in d.ports.iter().filter(|p| !hca::listed(exclude, &d.name, p.port)) {
            let rail = if chosen.is_empty() {
                p.link_layer == Some(LinkLayer::InfiniBand)
            } else {
                model(d).is_some_and(|m| chosen.contains(&(m, p.port)))
                    || plan.hcas.iter().any(|(n, q)| *n == d.name && *q == p.port)
            };
            if rail {
                out.push((d, p));
            }
        }
    }
    out
}

/// `health.link_layer`'s words and the probe's link layers, both ways.
fn layer(f: crate::config::Fabric) -> LinkLayer {
    match f {
        crate::config::Fabric::InfiniBand => LinkLayer::InfiniBand,
        crate::config::Fabric::Ethernet => LinkLayer::Ethernet,
    }
}

fn fabric(l: LinkLayer) -> Option<crate::config::Fabric> {
    match l {
        LinkLayer::InfiniBand => Some(crate::config::Fabric::InfiniBand),
        LinkLayer::Ethernet => Some(crate::config::Fabric::Ethernet),
        LinkLayer::Unknown => None,
    }
}

pub fn check(node: &Node, plan: &Plan, exclude: &[String], expect: &HealthConfig) -> Report {
    let mut r = Report::default();
    let rails = rails(node, plan, exclude);
    let mut healthy: Vec<(&RdmaDevice, &RdmaPort)> = Vec::new();
    let mut unread = 0;
    for (d, p) in &rails {
        r.rails.push(format!("{}:{}", d.name, p.port));
        if d.attributes_unread || p.state.is_none() {
            r.unknown.push(format!("{} port {}: its state could not be read", d.name, p.port));
            unread += 1;
            continue;
        }
        match hca::port_problem(node, d, p) {
            None => healthy.push((d, p)),
            Some(why) => r.problems.push(Problem {
                subject: format!("{} port {}", d.name, p.port),
                message: why,
                fix: port_fix(p),
            }),
        }
    }
    r.healthy_rails = healthy.len();
    // No rail at all is no evidence of health: a node whose HCA driver did not load looks so.
    if rails.is_empty() && expect.hcas.is_none() {
        r.unknown.push(
            "no HCA port NCCL would take here (none InfiniBand, none selected): whether this node should have some is set by health.hcas (ibwire health --learn on a good node)".into(),
        );
    }
    downtrained(&healthy, expect, &mut r);
    if let Some(want) = expect.hcas {
        // Ports whose state could not be read may be the missing ones: unknown, not a problem.
        if healthy.len() + unread < want as usize {
            r.problems.push(Problem {
                subject: "HCA ports".into(),
                message: format!("{} healthy, {want} expected (health.hcas)", healthy.len()),
                fix: "bring the missing rails up (ibstat), or set health.hcas to what this node should have".into(),
            });
        }
    }
    link_layers(&healthy, expect, &mut r);
    device_nodes(node, &healthy, &mut r);
    gpus(node, expect, &mut r);
    gpudirect(node, expect, !healthy.is_empty(), &mut r);
    memlock(node, expect, &mut r);
    r
}

/// health.memlock_unlimited: the locked-memory limit RDMA registration needs.
fn memlock(node: &Node, expect: &HealthConfig, r: &mut Report) {
    if expect.memlock_unlimited == Some(true) {
        match node.host.memlock_unlimited {
            Some(true) => {}
            Some(false) => r.problems.push(Problem {
                subject: "memlock".into(),
                message: format!(
                    "the locked-memory limit is {} bytes, unlimited expected: RDMA registration fails under load",
                    node.host.memlock_bytes.map(|b| b.to_string()).unwrap_or_else(|| "?".into())
                ),
                fix: "LimitMEMLOCK=infinity for slurmd (systemd), and PropagateResourceLimitsExcept=MEMLOCK".into(),
            }),
            None => r.unknown.push("the memlock limit could not be read".into()),
        }
    }
}

/// health.link_layer: every healthy rail on the expected link layer.
fn link_layers(healthy: &[(&RdmaDevice, &RdmaPort)], expect: &HealthConfig, r: &mut Report) {
    if let Some(want) = expect.link_layer.map(layer) {
        for (d, p) in healthy {
            if let Some(l) = p.link_layer.filter(|l| *l != want) {
                r.problems.push(Problem {
                    subject: format!("{} port {}", d.name, p.port),
                    message: format!("link layer {l}, {want} expected (health.link_layer)"),
                    fix: "set the port's link type back (mlxconfig LINK_TYPE_P1), or correct health.link_layer".into(),
                });
            }
        }
    }
}

fn port_fix(p: &RdmaPort) -> String {
    // IB port states: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE; physical: 1 Sleep, 2 Polling,
    // 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery.
    match (p.state, p.phys_state) {
        (Some(1), Some(2)) | (Some(1), Some(4)) | (Some(1), Some(6)) => {
            "no link: check the cable, transceiver and switch port (ibstat; mlxlink -d <dev>)".into()
        }
        (Some(1), Some(3)) => "the port is disabled: enable it (ibportstate, or on the switch)".into(),
        (Some(1), Some(1)) => "the port is asleep: check the switch side and the HCA's firmware".into(),
        (Some(2), _) | (Some(3), _) => {
            "no subnet manager has brought it to ACTIVE (sminfo; opensm or the UFM's logs)".into()
        }
        (Some(4), _) if p.link_layer == Some(LinkLayer::Ethernet) => {
            "give the port's interface an IPv4 address and bring it up (its RoCE v2 GID follows)".into()
        }
        (Some(4), _) => "the subnet manager has not given it a unicast LID (sminfo; check the SM's logs)".into(),
        _ => "check the port (ibstat) and the switch side".into(),
    }
}

/// A healthy rail slower or narrower than its peers (or than `health.rate_gbps`/`width`): it
/// caps every ring through this node.
fn downtrained(healthy: &[(&RdmaDevice, &RdmaPort)], expect: &HealthConfig, r: &mut Report) {
    let (best_rate, best_lanes) = best(healthy.iter().map(|(_, p)| *p));
    let want_rate = expect.rate_gbps.map(|g| g as f64).unwrap_or(best_rate);
    let want_lanes = expect.width.as_deref().and_then(width_lanes).or(best_lanes);
    for (d, p) in healthy {
        let lanes = lanes(p);
        let slow = p.rate_gbps.is_some_and(|g| g + 0.5 < want_rate);
        let narrow = matches!((lanes, want_lanes), (Some(l), Some(w)) if l < w);
        if slow || narrow {
            let peers = if expect.rate_gbps.is_some() || expect.width.is_some() {
                format!(
                    "{}{} expected (health)",
                    expect.rate_gbps.map(|g| format!("{g} Gb/sec ")).unwrap_or_default(),
                    expect.width.clone().unwrap_or_default()
                )
            } else {
                format!(
                    "its peers run {} Gb/sec{}",
                    best_rate,
                    best_lanes.map(|l| format!(" ({l}X)")).unwrap_or_default()
                )
            };
            r.problems.push(Problem {
                subject: format!("{} port {}", d.name, p.port),
                message: format!("downtrained: {}, {}", p.rate.as_deref().unwrap_or("?"), peers.trim()),
                fix: "reseat or replace the cable or transceiver (mlxlink -d <dev> shows the lanes)".into(),
            });
        }
    }
}

fn device_nodes(node: &Node, healthy: &[(&RdmaDevice, &RdmaPort)], r: &mut Report) {
    if healthy.is_empty() {
        return;
    }
    if node.host.dev_infiniband.is_empty() {
        r.problems.push(Problem {
            subject: "/dev/infiniband".into(),
            message: format!("absent, with {} healthy HCA port(s): no process can open an HCA", healthy.len()),
            fix: "modprobe ib_uverbs rdma_ucm (and rdma-core's udev rules), then check ls /dev/infiniband".into(),
        });
        return;
    }
    // each healthy rail's own /dev/infiniband/uverbsN, as the plan asks of its selected set
    let missing = super::missing_device_nodes(healthy.iter().map(|(d, _)| *d));
    if !missing.is_empty() {
        r.problems.push(Problem {
            subject: "/dev/infiniband".into(),
            message: format!("no device node for {}", missing.join(", ")),
            fix: "modprobe ib_uverbs (and rdma-core's udev rules make the nodes)".into(),
        });
    }
}

fn gpus(node: &Node, expect: &HealthConfig, r: &mut Report) {
    if let Some(want) = expect.gpus {
        if node.gpus.len() < want as usize {
            r.problems.push(Problem {
                subject: "GPUs".into(),
                message: format!("{} on the PCI bus, {want} expected (health.gpus)", node.gpus.len()),
                fix: "a GPU fell off the bus: check dmesg for Xid 79 and nvidia-smi; the node needs a reset or repair"
                    .into(),
            });
        }
    }
    if let Some(want) = &expect.gpu_model {
        let other: Vec<String> = node.gpus.iter().filter(|g| g.model != *want).map(|g| g.pci.bdf.clone()).collect();
        if !other.is_empty() {
            r.problems.push(Problem {
                subject: "GPUs".into(),
                message: format!("{} not {want} (health.gpu_model)", other.join(", ")),
                fix: "correct health.gpu_model, or move this node to its own health configuration".into(),
            });
        }
    }
}

fn gpudirect(node: &Node, expect: &HealthConfig, rdma: bool, r: &mut Report) {
    if expect.gpudirect != Some(true) || !rdma || node.gpus.is_empty() {
        return;
    }
    if node.host.peermem.is_some() {
        return;
    }
    match super::gpudirect::dmabuf(&node.host) {
        super::gpudirect::DmaBuf::Possible => {}
        super::gpudirect::DmaBuf::Missing(why) => r.problems.push(Problem {
            subject: "GPUDirect RDMA".into(),
            message: format!("no path: nvidia_peermem is not loaded and DMA-BUF is impossible ({why})"),
            fix: "modprobe nvidia_peermem, or the open NVIDIA kernel module on a kernel >= 5.12".into(),
        }),
        super::gpudirect::DmaBuf::Unknown(why) => {
            r.unknown.push(format!("GPUDirect RDMA: nvidia_peermem is not loaded, and DMA-BUF is unknown: {why}"))
        }
    }
}

/// The shape of a good node, for `health:` in /etc/ibwire.yaml (`ibwire health --learn`).
pub fn learn(node: &Node, plan: &Plan, exclude: &[String]) -> HealthConfig {
    let rails = rails(node, plan, exclude);
    let healthy: Vec<&RdmaPort> =
        rails.iter().filter(|(d, p)| hca::port_problem(node, d, p).is_none()).map(|(_, p)| *p).collect();
    let layers: std::collections::BTreeSet<LinkLayer> = healthy.iter().filter_map(|p| p.link_layer).collect();
    let (rate, lanes) = best(healthy.iter().copied());
    let models: std::collections::BTreeSet<&str> = node.gpus.iter().map(|g| g.model.as_str()).collect();
    HealthConfig {
        hcas: Some(healthy.len() as u32),
        link_layer: match (layers.len(), layers.iter().next()) {
            (1, Some(l)) => fabric(*l),
            _ => None,
        },
        rate_gbps: (rate > 0.0).then_some(rate as u32),
        width: lanes.map(|l| format!("{l}X")),
        gpus: Some(node.gpus.len() as u32),
        gpu_model: (models.len() == 1).then(|| models.iter().next().map(|m| m.to_string())).flatten(),
        gpudirect: Some(
            !node.gpus.is_empty()
                && !healthy.is_empty()
                && (node.host.peermem.is_some()
                    || super::gpudirect::dmabuf(&node.host) == super::gpudirect::DmaBuf::Possible),
        ),
        memlock_unlimited: node.host.memlock_unlimited,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Fabric, HealthConfig};
    use crate::plan::{decide, Intent};
    use std::fs;

    fn story() -> (tempfile::TempDir, Node) {
        let t = tempfile::tempdir().unwrap();
        ibwire_fixture::story(t.path());
        let n = crate::probe::probe(&crate::probe::ProbeOptions::at(t.path()));
        (t, n)
    }

    fn port_file(t: &tempfile::TempDir, dev: &str, file: &str, v: &str) {
        let d = fs::canonicalize(t.path().join("sys/class/infiniband").join(dev)).unwrap();
        fs::write(d.join("ports/1").join(file), v).unwrap();
    }

    fn checked(n: &Node, h: &HealthConfig) -> Report {
        check(n, &decide(n, &Intent::default()), &[], h)
    }

    #[test]
    fn the_story_node_is_healthy_and_its_bond_is_not_a_rail() {
        let (_t, n) = story();
        let r = checked(&n, &HealthConfig::default());
        assert!(r.healthy(), "{r:?}");
        assert_eq!(r.healthy_rails, 8);
        assert!(!r.rails.iter().any(|x| x.starts_with("mlx5_bond_0")), "{:?}", r.rails);
        // and against its own learned shape
        let learned = learn(&n, &decide(&n, &Intent::default()), &[]);
        assert_eq!(learned.hcas, Some(8));
        assert_eq!(learned.link_layer, Some(Fabric::InfiniBand));
        assert_eq!((learned.rate_gbps, learned.width.as_deref()), (Some(400), Some("4X")));
        assert_eq!(learned.gpus, Some(8));
        assert_eq!(learned.gpudirect, Some(true));
        assert!(checked(&n, &learned).healthy());
    }

    #[test]
    fn rails_are_what_select_would_take_bond_members_and_vfs_of_a_pf_here_are_not() {
        let (_t, mut n) = story();
        let down = |name: &str, bdf: &str, physfn: Option<&str>| {
            let mut d = n.rdma_device("mlx5_0").unwrap().clone();
            d.name = name.into();
            let pci = d.pci.as_mut().unwrap();
            pci.bdf = bdf.into();
            pci.physfn = physfn.map(str::to_string);
            d.ports[0].state = Some(1);
            d
        };
        let pf = n.rdma_device("mlx5_0").unwrap().pci.as_ref().unwrap().bdf.clone();
        let member = down("mlx5_1", "0000:49:00.1", None); // a function the bond holds
        let vf_here = down("mlx5_10", "0000:19:00.1", Some(&pf)); // its PF is mlx5_0
        let vf_alone = down("mlx5_11", "0000:77:00.1", Some("0000:76:00.0")); // passed in, no PF
        n.rdma.extend([member, vf_here, vf_alone]);
        let r = checked(&n, &HealthConfig::default());
        let subjects: Vec<&str> = r.problems.iter().map(|p| p.subject.as_str()).collect();
        assert_eq!(subjects, ["mlx5_11 port 1"], "{r:?}");
    }

    #[test]
    fn a_port_down_is_named_with_its_fix() {
        let (t, _) = story();
        port_file(&t, "mlx5_6", "state", "1: DOWN");
        port_file(&t, "mlx5_6", "phys_state", "2: Polling");
        let n = crate::probe::probe(&crate::probe::ProbeOptions::at(t.path()));
        let r = checked(&n, &HealthConfig::default());
        assert_eq!(r.problems.len(), 1, "{r:?}");
        assert_eq!(r.problems[0].subject, "mlx5_6 port 1");
        let line = r.line().unwrap();
        assert!(
            line.starts_with("mlx5_6 port 1: port state DOWN (1), not ACTIVE; fix: no link: check the cable"),
            "{line}"
        );
        // and the count the site expects
        let r = checked(&n, &HealthConfig { hcas: Some(8), ..Default::default() });
        assert!(r.problems.iter().any(|p| p.message == "7 healthy, 8 expected (health.hcas)"), "{r:?}");
        assert!(r.line().unwrap().ends_with("(+1 more: ibwire health)"));
    }

    #[test]
    fn a_downtrained_port_is_named_against_its_peers_or_the_site() {
        let (t, _) = story();
        port_file(&t, "mlx5_4", "rate", "200 Gb/sec (2X NDR)");
        let n = crate::probe::probe(&crate::probe::ProbeOptions::at(t.path()));
        let r = checked(&n, &HealthConfig::default());
        assert_eq!(r.problems.len(), 1, "{r:?}");
        assert_eq!(r.problems[0].subject, "mlx5_4 port 1");
        assert_eq!(r.problems[0].message, "downtrained: 200 Gb/sec (2X NDR), its peers run 400 Gb/sec (4X)");
        // every port at 200 2X: no peer is faster, but the site says 400 4X
        for d in ["mlx5_0", "mlx5_3", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"] {
            port_file(&t, d, "rate", "200 Gb/sec (2X NDR)");
        }
        let n = crate::probe::probe(&crate::probe::ProbeOptions::at(t.path()));
        assert!(checked(&n, &HealthConfig::default()).healthy());
        let site = HealthConfig { rate_gbps: Some(400), width: Some("4X".into()), ..Default::default() };
        let r = checked(&n, &site);
        assert_eq!(r.problems.len(), 8, "{r:?}");
        assert_eq!(r.problems[0].message, "downtrained: 200 Gb/sec (2X NDR), 400 Gb/sec 4X expected (health)");
    }

    #[test]
    fn a_missing_gpu_device_nodes_and_gpudirect_are_problems_where_expected() {
        let (_t, mut n) = story();
        n.gpus.pop();
        let want = HealthConfig {
            gpus: Some(8),
            gpu_model: Some("NVIDIA H200".into()),
            gpudirect: Some(true),
            ..Default::default()
        };
        let r = checked(&n, &want);
        assert_eq!(r.problems.len(), 1, "{r:?}");
        assert_eq!(r.problems[0].message, "7 on the PCI bus, 8 expected (health.gpus)");
        assert!(checked(&n, &HealthConfig::default()).healthy(), "no expectation, no GPU check");
        let (_t, mut n) = story();
        n.host.dev_infiniband.clear();
        let r = checked(&n, &HealthConfig::default());
        assert_eq!(r.problems[0].subject, "/dev/infiniband", "{r:?}");
        let (_t, mut n) = story();
        n.host.peermem = None;
        n.host.kernel = Some("5.4.0".into());
        let r = checked(&n, &want);
        assert_eq!(r.problems[0].subject, "GPUDirect RDMA", "{r:?}");
        assert!(r.problems[0].message.contains("kernel 5.4.0 is older than 5.12"), "{r:?}");
    }

    #[test]
    fn a_node_without_rails_is_not_called_healthy_on_no_evidence() {
        let (_t, mut n) = story();
        n.rdma.clear(); // the HCA driver did not load
        let r = checked(&n, &HealthConfig::default());
        assert!(r.problems.is_empty() && r.unknown.len() == 1, "{r:?}");
        assert!(r.unknown[0].contains("health.hcas"), "{r:?}");
        let r = checked(&n, &HealthConfig { hcas: Some(8), ..Default::default() });
        assert_eq!(r.problems[0].message, "0 healthy, 8 expected (health.hcas)", "{r:?}");
    }

    #[test]
    fn what_cannot_be_read_is_unknown_never_a_problem() {
        let (_t, mut n) = story();
        let d = n.rdma.iter_mut().find(|d| d.name == "mlx5_6").unwrap();
        d.ports[0].state = None;
        n.host.peermem = None;
        n.host.kernel = None;
        n.host.memlock_unlimited = None;
        let want =
            HealthConfig { hcas: Some(8), gpudirect: Some(true), memlock_unlimited: Some(true), ..Default::default() };
        let r = checked(&n, &want);
        assert!(r.healthy(), "{r:?}");
        assert_eq!(r.unknown.len(), 3, "{r:?}");
        assert!(r.unknown[0].starts_with("mlx5_6 port 1"), "{r:?}");
    }

    #[test]
    fn widths_are_read_from_the_rate() {
        assert_eq!(width("400 Gb/sec (4X NDR)"), Some("4X"));
        assert_eq!(width("200 Gb/sec (2X NDR)"), Some("2X"));
        assert_eq!(width("100 Gb/sec (4X EDR)"), Some("4X"));
        assert_eq!(width("25 Gb/sec (1X EDR)"), Some("1X"));
        assert_eq!(width("garbage"), None);
        assert_eq!(width("10 Gb/sec (X)"), None);
    }
}
