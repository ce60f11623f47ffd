//! Expected vs observed: what transport the node should give NCCL, what NCCL's log says it
//! used, how close the measured bus bandwidth is to the hardware's ceiling, and the probable
//! causes, ranked, from the evidence.
//!
//! Ceilings follow nccl-tests' busbw definition (busbw = algbw × 2(n−1)/n for all-reduce):
//! inside one node the bound is a GPU's NVLink bandwidth; across nodes a ring is bound by the
//! node's network bandwidth (healthy HCAs × link rate), and a hierarchical algorithm (tree,
//! NVLS) moves each byte over the network once, so its bound is that × 2(n−1)/n.

use super::Plan;
use crate::nccl::log::LogFacts;
use crate::probe::{LinkLayer, Node};
use serde::Serialize;

/// NVLink bandwidth per GPU and direction, GB/s, by model name.
pub fn nvlink_gbps(model: &str) -> Option<f64> {
    let m = model.to_ascii_uppercase();
    if m.contains("B200") || m.contains("B100") || m.contains("GB200") {
        Some(900.0)
    } else if m.contains("H100") || m.contains("H200") {
        Some(450.0)
    } else if m.contains("H800") {
        Some(200.0)
    } else if m.contains("A100") || m.contains("A800") {
        Some(300.0)
    } else {
        None
    }
}

/// NCCL's own model of one NVLink's usable bandwidth (GB/s) when it drives it with copies and
/// kernels, not NVLink SHARP: `SM80_NVLINK_BW`/`SM90_NVLINK_BW` = 20.0 in nccl src/graph/topo.h.
pub fn nccl_nvlink_per_link(model: &str) -> Option<f64> {
    let m = model.to_ascii_uppercase();
    (m.contains("H100") || m.contains("H200") || m.contains("H800") || m.contains("A100") || m.contains("A800"))
        .then_some(20.0)
}

pub fn ring_ceiling(hcas: usize, rate_gbit: f64) -> f64 {
    hcas as f64 * rate_gbit / 8.0
}

pub fn hierarchical_ceiling(ring: f64, nranks: usize) -> f64 {
    if nranks < 2 {
        return ring;
    }
    ring * 2.0 * (nranks as f64 - 1.0) / nranks as f64
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Measured {
    pub busbw_gbps: f64,
    pub nranks: usize,
    pub nodes: usize,
    /// GPU model named by the benchmark (nccl-tests' rank lines), for logs from another node.
    pub gpu_model: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    pub network: Option<String>,
    pub expected_network: String,
    pub gdr: Option<bool>,
    pub gdr_expected: bool,
    pub hcas: Vec<String>,
    pub bootstrap_if: Option<String>,
    pub busbw_gbps: Option<f64>,
    pub ring_ceiling_gbps: Option<f64>,
    pub hierarchical_ceiling_gbps: Option<f64>,
    pub nvlink_ceiling_gbps: Option<f64>,
    /// Without NVLS: NVLink links × NCCL's per-link model, the bound NCCL itself plans with.
    pub nccl_nvlink_model_gbps: Option<f64>,
    pub ratio: Option<f64>,
    pub ok: bool,
    pub verdict: String,
    pub causes: Vec<String>,
}

/// Overrides for the ceiling when the node is not the one the log came from.
#[derive(Debug, Clone, Default)]
pub struct CeilingInputs {
    pub hcas: Option<usize>,
    pub hca_gbit: Option<f64>,
    /// Nodes in the job, when the input does not show them all.
    pub nodes: Option<usize>,
}

/// The bound on busbw a hierarchical all-reduce can reach: the network term (each byte crosses
/// it once), and the intra-node term (reduce-scatter and all-gather over NVLink, 2(g−1)/g of
/// the data per GPU), whichever is lower.
pub fn hierarchical_bound(ring: f64, nranks: usize, gpus_per_node: usize, nvlink: Option<f64>) -> f64 {
    let net = hierarchical_ceiling(ring, nranks);
    match nvlink {
        Some(nv) if gpus_per_node > 1 && nranks > 1 => {
            let g = gpus_per_node as f64;
            let algbw = nv * g / (2.0 * (g - 1.0));
            net.min(algbw * 2.0 * (nranks as f64 - 1.0) / nranks as f64)
        }
        _ => net,
    }
}

pub fn judge(node: &Node, plan: &Plan, log: &LogFacts, measured: Option<&Measured>, ci: &CeilingInputs) -> Report {
    // Is the log from this node? Only then do its HCAs, interfaces and modules explain it.
    let same_node = node
        .hostname
        .as_ref()
        .map(|h| log.hosts.iter().any(|x| x == h || x.starts_with(&format!("{h}."))))
        .unwrap_or(false);
    let nodes: Option<usize> = ci
        .nodes
        .or(measured.map(|m| m.nodes))
        .filter(|n| *n > 0)
        .or_else(|| (!log.hosts.is_empty()).then_some(log.hosts.len()))
        .map(|n| if log.crossed_network() { n.max(2) } else { n })
        .or_else(|| log.crossed_network().then_some(2));
    let multi = nodes.map(|n| n > 1).unwrap_or(false);
    let healthy = !plan.hcas.is_empty();
    let expect_rdma = if same_node { healthy } else { true };
    let expected_network = if expect_rdma { "IB" } else { "Socket" }.to_string();
    let gdr_expected = expect_rdma
        && (!same_node
            || (node.host.peermem.is_some()
                && plan
                    .hcas
                    .iter()
                    .any(|(d, _)| node.rdma_device(d).map(|d| super::hca::gpu_affine(node, d)).unwrap_or(false))));
    let mut causes: Vec<String> = Vec::new();
    let mut problems: Vec<String> = Vec::new();

    // Ceilings.
    let rates: Vec<f64> = plan
        .hcas
        .iter()
        .filter_map(|(d, p)| node.rdma_device(d)?.ports.iter().find(|x| x.port == *p)?.rate_gbps)
        .collect();
    let used = if !log.ib_devices.is_empty() {
        log.ib_devices.len()
    } else if same_node {
        plan.hcas.len()
    } else {
        0
    };
    let n_hcas = ci.hcas.unwrap_or(used);
    let rate = ci.hca_gbit.or_else(|| if same_node { rates.iter().cloned().reduce(f64::min) } else { None });
    let nranks = measured.map(|m| m.nranks).filter(|n| *n > 0).or(log.nranks).unwrap_or(0);
    let gpn = match nodes {
        Some(n) if n > 0 && nranks >= n => nranks / n,
        _ => 1,
    };
    let nvl = measured
        .and_then(|m| m.gpu_model.as_deref())
        .and_then(nvlink_gbps)
        .or_else(|| node.gpus.first().and_then(|g| nvlink_gbps(&g.model)));
    let (ring, hier) = match (n_hcas, rate) {
        (h, Some(r)) if h > 0 && multi => {
            let ring = ring_ceiling(h, r);
            // Without the rank count the hierarchical bound is unknown.
            (Some(ring), (nranks > 1).then(|| hierarchical_bound(ring, nranks, gpn, nvl)))
        }
        _ => (None, None),
    };
    // One rank moves nothing: its "busbw" is 0 by definition, not a measurement.
    let busbw = measured.filter(|m| m.nranks != 1).map(|m| m.busbw_gbps);
    let links = node.nvlinks.iter().filter(|l| l.a == 0 || l.b == 0).map(|l| l.links).max();
    let model_name = measured.and_then(|m| m.gpu_model.clone()).or_else(|| node.gpus.first().map(|g| g.model.clone()));
    let nccl_model = match (links, model_name.as_deref().and_then(nccl_nvlink_per_link)) {
        (Some(l), Some(per)) if log.nvls_off() || !multi => Some(l as f64 * per),
        _ => None,
    };
    let intra = match (nvl, nccl_model) {
        (Some(n), Some(m)) if log.nvls_off() => Some(n.min(m)),
        (n, _) => n,
    };
    let ratio = match (busbw, ring, hier, intra) {
        (Some(b), Some(r), Some(h), _) => Some(if b > r { b / h } else { b / r }),
        (Some(b), Some(r), None, _) if b <= r => Some(b / r),
        (Some(b), None, None, Some(n)) if nodes == Some(1) && nranks > 1 => Some(b / n),
        _ => None,
    };
    if let (Some(b), Some(n), Some(m), Some(l)) = (busbw, nvl, nccl_model, links) {
        if !multi && log.nvls_off() && b < 0.8 * n {
            causes.push(format!(
                "NVLS is off (NCCL_NVLS_ENABLE=0): NCCL then drives each NVLink at its modelled 20 GB/s (SM90_NVLINK_BW), {l} links = {m:.0} GB/s; measured {b:.1} GB/s is {:.1}% of that and {:.1}% of the {n:.0} GB/s NVLink figure",
                b / m * 100.0,
                b / n * 100.0
            ));
        }
    }

    let observed = log.observed();
    if log.network.as_deref() == Some("mixed") {
        problems.push(format!("ranks disagree on the network ({})", log.networks_seen.join(" vs ")));
        causes.push("some ranks found no usable HCA while others did: the device nodes, NCCL_IB_HCA or HCA health differ between ranks or nodes; run ibwire doctor on each node".into());
    } else if multi && expect_rdma && observed.is_some() && !log.on_rdma() {
        problems.push(format!(
            "NOT ON RDMA: NCCL used {} between nodes{}",
            observed.as_deref().unwrap_or("?"),
            if same_node {
                format!(" although this node has {} healthy HCA port(s)", plan.hcas.len())
            } else {
                String::new()
            }
        ));
        if log.ib_no_device {
            if same_node && node.host.dev_infiniband.iter().all(|n| !n.starts_with("uverbs")) {
                causes.push(if node.host.in_container {
                    "/dev/infiniband is missing inside the container (NET/IB : No device found): mount it (ibwire's enroot hook, or enroot -m /dev/infiniband)".into()
                } else {
                    "no /dev/infiniband/uverbs* nodes (NET/IB : No device found): load ib_uverbs".into()
                });
            } else if !same_node {
                causes.push("NET/IB : No device found: most often /dev/infiniband missing inside the container".into());
            }
            if let Some(v) = log.env("NCCL_IB_HCA") {
                causes.push(format!("NCCL_IB_HCA={v} matched no ACTIVE port; use ibwire env's value"));
            }
        }
        if let Some(v) = log.env("NCCL_IB_DISABLE").filter(|v| *v != "0") {
            causes.push(format!("NCCL_IB_DISABLE={v} turns the IB transport off"));
        }
        if let Some(v) = log.env("NCCL_NET") {
            causes.push(format!("NCCL_NET={v} forces that network"));
        }
        if log.warns.iter().chain(&log.errors).any(|w| w.contains("libibverbs")) {
            causes.push(
                "libibverbs could not be loaded: the image lacks rdma-core (libibverbs.so.1 and a provider)".into(),
            );
        }
        if causes.is_empty() {
            causes.push("NCCL's IB plugin found no usable port: run ibwire doctor inside the job's environment".into());
        }
    } else if multi && log.on_rdma() && gdr_expected && log.gdr == Some(false) {
        problems.push(
            "ON RDMA WITHOUT GPUDirect: inter-node channels lack /GDRDMA, data is staged through host memory".into(),
        );
        if same_node && node.host.peermem.is_none() {
            causes.push("nvidia_peermem is not loaded (modprobe nvidia_peermem), and DMA-BUF was not used".into());
        } else if version_le(log.version.as_deref(), (2, 22, 3)) {
            causes.push("NCCL ≤ 2.22.3 does not see nvidia_peermem (NVIDIA/nccl#1676): use a newer NCCL".into());
        } else {
            causes.push("no GPUDirect peer memory (nvidia_peermem or DMA-BUF), or GPU–NIC distance beyond NCCL_NET_GDR_LEVEL (see ibwire topo)".into());
        }
        if let Some(g) = log.env("NCCL_IB_GID_INDEX") {
            causes.push(format!("NCCL_IB_GID_INDEX={g} is forced; NCCL ≥ 2.21 picks the GID itself"));
        }
    }
    for e in &log.modify_qp_errnos {
        match e {
            22 => {
                problems.push("ibv_modify_qp failed with EINVAL".into());
                let lid0: Vec<String> = node
                    .rdma
                    .iter()
                    .filter(|d| d.ports.iter().any(|p| p.link_layer == Some(LinkLayer::InfiniBand) && p.lid == Some(0)))
                    .map(|d| d.name.clone())
                    .collect();
                causes.push(format!(
                    "a peer offered an InfiniBand port with LID 0{} — exclude it from NCCL_IB_HCA (ibwire env does) on every node; on RoCE, a wrong NCCL_IB_GID_INDEX",
                    if lid0.is_empty() { String::new() } else { format!(" ({} here)", lid0.join(", ")) }
                ));
            }
            110 => {
                problems.push("ibv_modify_qp timed out".into());
                causes.push("the two NICs cannot reach each other (rail-only fabric): NCCL_CROSS_NIC=0 and the same HCA set on every node".into());
            }
            n => {
                problems.push(format!("ibv_modify_qp failed with errno {n}"));
            }
        }
    }
    if !log.errors.is_empty() {
        problems.push(format!("NCCL failed: {}", crate::probe::sysroot::clip(&log.errors[0])));
        if log.errors.iter().any(|e| e.contains("family")) {
            if let Some(v) = log.env("NCCL_SOCKET_IFNAME") {
                causes.push(format!("NCCL_SOCKET_IFNAME={v} names no interface on this node (NCCL 2.27 then reports a garbage address family)"));
            }
        }
    }
    if same_node && multi {
        if let (Some(b), Some(p)) = (log.bootstrap_ifs.first(), &plan.bootstrap_if) {
            if b != p {
                causes.push(format!(
                    "NCCL bootstrapped over {b}, ibwire expects {p} (the interface that reaches the master)"
                ));
            }
        }
    }
    if let (Some(r), Some(b)) = (ratio, busbw) {
        if r < 0.8 {
            problems.push(format!("SLOW: busbw {b:.1} GB/s is {:.1}% of the ceiling", r * 100.0));
            let max = rates.iter().cloned().fold(0.0, f64::max);
            if same_node && rates.iter().any(|x| *x < max) {
                causes.push(format!(
                    "HCA link rates differ (slowest {:.0} Gb/s vs {max:.0}): the slow HCA bounds the ring",
                    rates.iter().cloned().fold(f64::MAX, f64::min)
                ));
            }
            if same_node && !log.ib_devices.is_empty() && log.ib_devices.len() < plan.hcas.len() {
                causes.push(format!("NCCL used {} of the {} healthy HCAs", log.ib_devices.len(), plan.hcas.len()));
            }
            if same_node {
                let down: Vec<String> = node
                    .gpus
                    .iter()
                    .map(|g| (g.pci.bdf.clone(), &g.pci.link))
                    .chain(node.rdma.iter().filter_map(|d| d.pci.as_ref().map(|p| (d.name.clone(), &p.link))))
                    .filter(|(_, l)| l.narrower().is_some())
                    .map(|(n, _)| n)
                    .collect();
                if !down.is_empty() {
                    causes.push(format!("PCIe links below their width: {}", down.join(", ")));
                }
            }
        }
    }

    let ok = problems.is_empty();
    let bw = match (ratio, busbw) {
        (Some(r), Some(b)) => format!("; busbw {b:.1} GB/s = {:.1}% of the ceiling", r * 100.0),
        (None, Some(b)) if nodes.is_none() => {
            format!("; busbw {b:.1} GB/s (node count unknown: pass --nodes to judge it)")
        }
        (None, Some(b)) if multi => match ring {
            Some(r) => format!(
                "; busbw {b:.1} GB/s, above the {r:.0} GB/s ring bound (the hierarchical bound needs the rank count)"
            ),
            None => format!(
                "; busbw {b:.1} GB/s (ceiling unknown: pass --hcas N --hca-gbit RATE for a log from another node)"
            ),
        },
        (None, Some(b)) => format!("; busbw {b:.1} GB/s"),
        _ => String::new(),
    };
    let verdict = if !ok {
        problems.join("; ")
    } else if observed.is_none() {
        format!("transport not shown: the input has no 'Using network' or channel lines (run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET){bw}")
    } else if nodes.is_none() {
        format!("{} in use; node count unknown{bw}", observed.as_deref().unwrap_or("?"))
    } else if !multi {
        let why = if log.ib_no_device { " (NET/IB : No device found)" } else { "" };
        let hcas = if same_node {
            if healthy {
                "; the node has healthy HCAs for multi-node jobs"
            } else {
                "; this node has no healthy HCA, so multi-node jobs get Socket"
            }
        } else {
            ""
        };
        format!(
            "single node: NCCL initialised {}{why}{hcas}; nothing crossed a network{}{bw}",
            observed.as_deref().unwrap_or("?"),
            match (log.channels.p2p, log.channels.shm) {
                (0, 0) => String::new(),
                (p, 0) => format!("; GPUs talk over P2P ({p} channel connections)"),
                (0, s) => format!("; GPUs talk over SHM ({s} channel connections, no P2P)"),
                (p, s) => format!("; GPUs talk over P2P ({p}) and SHM ({s})"),
            }
        )
    } else if log.on_rdma() {
        let g = match log.gdr {
            Some(true) => " with GPUDirect RDMA",
            Some(false) => " without GPUDirect RDMA",
            None => "",
        };
        let over = match log.ib_devices.len() {
            0 => String::new(),
            n => format!(" over {n} HCA(s)"),
        };
        format!("OK: {}{g}{over}{bw}", observed.as_deref().unwrap_or("IB"))
    } else {
        format!("OK: {} as expected (no healthy HCA on this node){bw}", observed.as_deref().unwrap_or("Socket"))
    };
    Report {
        network: observed,
        expected_network,
        gdr: log.gdr,
        gdr_expected,
        hcas: log.ib_devices.iter().map(|d| format!("{}:{}", d.name, d.port)).collect(),
        bootstrap_if: log.bootstrap_ifs.first().cloned(),
        busbw_gbps: busbw,
        ring_ceiling_gbps: ring,
        hierarchical_ceiling_gbps: hier,
        nvlink_ceiling_gbps: if multi { None } else { nvl },
        nccl_nvlink_model_gbps: if multi { None } else { nccl_model },
        ratio,
        ok,
        verdict,
        causes,
    }
}

fn version_le(v: Option<&str>, max: (u32, u32, u32)) -> bool {
    let Some(v) = v else { return false };
    let n: Vec<u32> = v.split(['.', '+']).take(3).filter_map(|x| x.parse().ok()).collect();
    n.len() == 3 && (n[0], n[1], n[2]) <= max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_story_sweep() {
        // 4 GPUs × 2 nodes, 4 NDR HCAs: Ring 191 GB/s, Tree 288.8, Auto 328.8.
        let ring = ring_ceiling(4, 400.0);
        let hier = hierarchical_ceiling(ring, 8);
        assert_eq!(ring, 200.0);
        assert_eq!(hier, 350.0);
        assert_eq!(format!("{:.1}", 191.0 / ring * 100.0), "95.5");
        assert_eq!(format!("{:.1}", 328.8 / hier * 100.0), "93.9");
        assert_eq!(format!("{:.1}", 288.8 / hier * 100.0), "82.5");
        // with H200 NVLink inside each node (4 GPUs), the network term still binds
        assert_eq!(hierarchical_bound(ring, 8, 4, Some(450.0)), 350.0);
        // DGX H100 2×8, 8 NDR HCAs: NVLink binds at ~482 GB/s, not the network's 750
        let b = hierarchical_bound(ring_ceiling(8, 400.0), 16, 8, Some(450.0));
        assert_eq!(format!("{b:.1}"), "482.1");
    }

    #[test]
    fn nvlink_table() {
        assert_eq!(nvlink_gbps("NVIDIA H200"), Some(450.0));
        assert_eq!(nvlink_gbps("NVIDIA H100 80GB HBM3"), Some(450.0));
        assert_eq!(nvlink_gbps("NVIDIA A100-SXM4-80GB"), Some(300.0));
        assert_eq!(nvlink_gbps("Tesla T4"), None);
    }

    #[test]
    fn versions() {
        assert!(version_le(Some("2.21.5+cuda12.4"), (2, 22, 3)));
        assert!(!version_le(Some("2.27.5+cuda12.9"), (2, 22, 3)));
        assert!(!version_le(Some("garbage"), (2, 22, 3)));
    }
}
