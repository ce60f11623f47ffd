//! GPUDirect RDMA's prerequisites on a node, from facts: which memory-registration path exists
//! (nvidia_peermem, or DMA-BUF: kernel ≥ 5.12 and the open NVIDIA kernel module; NCCL ≥ 2.19
//! and rdma-core ≥ 34 on top, which only NCCL's own log shows), and whether PCIe ACS sends
//! peer-to-peer traffic between a GPU and its HCA up to the root complex. Pure; doctor and
//! fleet word it.

use super::topo::{classify, PathType};
use super::Plan;
use crate::probe::kernel_version;
use crate::probe::{HostFacts, Node};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DmaBuf {
    /// Kernel and module allow it.
    Possible,
    /// The missing piece, in words.
    Missing(String),
    /// What could not be read.
    Unknown(String),
}

pub fn dmabuf(h: &HostFacts) -> DmaBuf {
    let kernel = match h.kernel.as_deref() {
        None => return DmaBuf::Unknown("the kernel version was not read".into()),
        Some(k) => match kernel_version(k) {
            Some(v) if v < (5, 12) => return DmaBuf::Missing(format!("kernel {k} is older than 5.12")),
            Some(_) => k,
            None => return DmaBuf::Unknown(format!("kernel version {k:?} not understood")),
        },
    };
    match h.nvidia_module.as_deref() {
        Some("open") => DmaBuf::Possible,
        Some(_) => DmaBuf::Missing(format!(
            "the proprietary NVIDIA kernel module is loaded (kernel {kernel}); exporting GPU memory as DMA-BUF needs the open one"
        )),
        None => DmaBuf::Unknown("the NVIDIA kernel module's kind was not read (/proc/driver/nvidia/version)".into()),
    }
}

/// A PCIe bridge that redirects (or blocks) peer-to-peer between GPUs and healthy HCAs below
/// one switch, with the pairs it sits between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcsOnPath {
    pub bridge: String,
    pub ctrl: u16,
    /// `GPU 0000:18:00.0 ↔ mlx5_0`, …
    pub pairs: Vec<String>,
}

/// What ACS does on the GPU↔HCA paths that GPUDirect RDMA uses (PIX/PXB: one switch): the
/// bridges below the pair's common ancestor carry their peer-to-peer traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AcsReport {
    pub redirecting: Vec<AcsOnPath>,
    /// Bridges on such paths whose ACS state was not readable.
    pub unknown: Vec<String>,
    /// Pairs examined.
    pub pairs: usize,
}

pub fn acs(node: &Node, plan: &Plan) -> AcsReport {
    let mut r = AcsReport::default();
    let mut devices: Vec<&str> = plan.hcas.iter().map(|(d, _)| d.as_str()).collect();
    devices.dedup();
    for g in &node.gpus {
        for name in &devices {
            let Some(p) = node.rdma_device(name).and_then(|d| d.pci.as_ref()) else { continue };
            if classify(&g.pci, p) > PathType::PXB {
                continue;
            }
            r.pairs += 1;
            let common = g.pci.bridges.iter().zip(&p.bridges).take_while(|(a, b)| a == b).count();
            let below = g.pci.bridges[common..].iter().chain(&p.bridges[common..]);
            for b in below {
                let Some(br) = node.bridges.iter().find(|x| &x.bdf == b) else {
                    if !r.unknown.contains(b) {
                        r.unknown.push(b.clone());
                    }
                    continue;
                };
                match br.redirects() {
                    Some(true) => {
                        let pair = format!("GPU {} ↔ {name}", g.pci.bdf);
                        match r.redirecting.iter_mut().find(|x| &x.bridge == b) {
                            Some(x) => {
                                if !x.pairs.contains(&pair) {
                                    x.pairs.push(pair)
                                }
                            }
                            None => r.redirecting.push(AcsOnPath {
                                bridge: b.clone(),
                                ctrl: br.acs_ctrl.unwrap_or(0),
                                pairs: vec![pair],
                            }),
                        }
                    }
                    Some(false) => {}
                    None => {
                        if !r.unknown.contains(b) {
                            r.unknown.push(b.clone());
                        }
                    }
                }
            }
        }
    }
    r
}

/// The IOMMU's state in words: `off` (no groups), `passthrough`, `translating`; None unknown.
pub fn iommu(h: &HostFacts) -> Option<&'static str> {
    match (h.iommu_groups, h.iommu_passthrough) {
        (Some(0), _) => Some("off"),
        (Some(_), Some(true)) => Some("passthrough"),
        (Some(_), Some(false)) => Some("translating"),
        // Groups, but nothing says whether they translate: unknown, not a guess.
        (Some(_), None) | (None, _) => None,
    }
}
