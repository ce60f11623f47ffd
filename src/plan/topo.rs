//! PCIe path classes between two devices, in nvidia-smi's vocabulary, from sysfs paths alone.
//!
//! nvidia-smi (NVML) and NCCL derive the class from the device tree: the deepest common
//! ancestor of the two bridge chains and the NUMA nodes (spec nccl-rules.md §4). A PCIe switch
//! appears as an upstream port plus one downstream port per device, so two devices under one
//! switch share the chain up to the upstream port and then cross one downstream port each.

use crate::probe::PciFunction;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum PathType {
    /// At most one PCIe bridge/switch between them.
    PIX,
    /// Several bridges, no host bridge.
    PXB,
    /// Through one PCIe host bridge (same root complex).
    PHB,
    /// Between host bridges within one NUMA node.
    NODE,
    /// Across NUMA nodes (the SMP interconnect).
    SYS,
}

impl std::fmt::Display for PathType {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{:?}", self)
    }
}

impl PathType {
    /// Whether NCCL's default `NCCL_NET_GDR_LEVEL` (PXB) allows GPUDirect RDMA on this path.
    pub fn gdr_by_default(self) -> bool {
        self <= PathType::PXB
    }
}

pub fn classify(a: &PciFunction, b: &PciFunction) -> PathType {
    if a.root != b.root {
        return match (a.numa_node, b.numa_node) {
            (Some(x), Some(y)) if x != y => PathType::SYS,
            _ => PathType::NODE,
        };
    }
    let common = a
        .bridges
        .iter()
        .zip(&b.bridges)
        .take_while(|(x, y)| x == y)
        .count();
    if common == 0 {
        // Different root ports of one root complex: the path turns in the host bridge.
        return PathType::PHB;
    }
    let below_a = a.bridges.len() - common;
    let below_b = b.bridges.len() - common;
    if below_a <= 1 && below_b <= 1 {
        PathType::PIX
    } else {
        PathType::PXB
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(root: &str, bridges: &[&str], numa: i32) -> PciFunction {
        PciFunction {
            bdf: "x".into(),
            root: root.into(),
            bridges: bridges.iter().map(|s| s.to_string()).collect(),
            numa_node: Some(numa),
            ..Default::default()
        }
    }

    #[test]
    fn classes() {
        let rp = "0000:15:01.0";
        let us = "0000:16:00.0";
        let gpu = f("pci0000:15", &[rp, us, "0000:17:00.0"], 0);
        let nic = f("pci0000:15", &[rp, us, "0000:17:01.0"], 0);
        assert_eq!(classify(&gpu, &nic), PathType::PIX);
        let deep = f(
            "pci0000:15",
            &[rp, us, "0000:17:02.0", "0000:18:00.0", "0000:19:00.0"],
            0,
        );
        assert_eq!(classify(&gpu, &deep), PathType::PXB);
        let other_rp = f("pci0000:15", &["0000:15:02.0"], 0);
        assert_eq!(classify(&gpu, &other_rp), PathType::PHB);
        let other_rc = f("pci0000:26", &["0000:26:01.0"], 0);
        assert_eq!(classify(&gpu, &other_rc), PathType::NODE);
        let other_numa = f("pci0000:97", &["0000:97:01.0"], 1);
        assert_eq!(classify(&gpu, &other_numa), PathType::SYS);
        // two functions of one card: no bridge between them at all
        let f0 = f("pci0000:48", &["0000:48:01.0"], 0);
        assert_eq!(classify(&f0, &f0.clone()), PathType::PIX);
    }
}
