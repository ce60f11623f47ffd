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
    let common = a.bridges.iter().zip(&b.bridges).take_while(|(x, y)| x == y).count();
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
        let deep = f("pci0000:15", &[rp, us, "0000:17:02.0", "0000:18:00.0", "0000:19:00.0"], 0);
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

/// A NIC column: an RDMA device, or (with --all-nics) a physical netdev without one.
#[derive(Debug, Clone, Serialize)]
pub struct Nic {
    pub name: String,
    pub device: String,
    pub pci: String,
    pub numa: Option<i32>,
    #[serde(skip)]
    pub function: PciFunction,
}

#[derive(Debug, Clone, Serialize)]
pub struct GpuCol {
    pub name: String,
    pub pci: String,
    pub numa: Option<i32>,
    pub model: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    pub gpus: Vec<GpuCol>,
    pub nics: Vec<Nic>,
    /// Rows in `gpus` order, columns in `nics` order.
    pub gpu_nic: Vec<Vec<PathType>>,
    /// `X`, `NV#` or a PCIe class.
    pub gpu_gpu: Vec<Vec<String>>,
    pub nic_nic: Vec<Vec<String>>,
    pub verdicts: Vec<String>,
    /// SR-IOV virtual functions left out (`all_functions` shows them): a 512-function node
    /// would otherwise print 512 NIC columns, each at its physical function's distance.
    pub hidden_virtual_functions: usize,
}

pub fn matrix(node: &crate::probe::Node, all_nics: bool, all_functions: bool) -> Matrix {
    use crate::probe::IfKind;
    let hidden_virtual_functions =
        if all_functions { 0 } else { node.rdma.iter().filter(|d| d.virtual_function && d.pci.is_some()).count() };
    let mut nics: Vec<Nic> = node
        .rdma
        .iter()
        .filter(|d| all_functions || !d.virtual_function)
        .filter_map(|d| {
            d.pci.as_ref().map(|p| Nic {
                name: String::new(),
                device: d.name.clone(),
                pci: p.bdf.clone(),
                numa: p.numa_node,
                function: p.clone(),
            })
        })
        .collect();
    if all_nics {
        let covered: std::collections::HashSet<String> = nics.iter().map(|n| n.pci.clone()).collect();
        for i in node.net.iter().filter(|i| i.kind == IfKind::Physical) {
            let Some(f) = &i.pci else { continue };
            if covered.contains(&f.bdf) {
                continue;
            }
            nics.push(Nic {
                name: String::new(),
                device: i.name.clone(),
                pci: f.bdf.clone(),
                numa: f.numa_node,
                function: f.clone(),
            });
        }
    }
    nics.sort_by(|a, b| {
        crate::probe::gpu::bus_key(&a.pci).cmp(&crate::probe::gpu::bus_key(&b.pci)).then(a.device.cmp(&b.device))
    });
    for (i, n) in nics.iter_mut().enumerate() {
        n.name = format!("NIC{i}");
    }
    let gpus: Vec<GpuCol> = node
        .gpus
        .iter()
        .enumerate()
        .map(|(i, g)| GpuCol {
            name: format!("GPU{i}"),
            pci: g.pci.bdf.clone(),
            numa: g.pci.numa_node,
            model: g.model.clone(),
        })
        .collect();
    let gpu_nic: Vec<Vec<PathType>> =
        node.gpus.iter().map(|g| nics.iter().map(|n| classify(&g.pci, &n.function)).collect()).collect();
    let nvlinks: std::collections::HashMap<(usize, usize), u32> =
        node.nvlinks.iter().map(|l| ((l.a, l.b), l.links)).collect();
    let gpu_gpu: Vec<Vec<String>> = (0..node.gpus.len())
        .map(|i| {
            (0..node.gpus.len())
                .map(|j| {
                    if i == j {
                        return "X".to_string();
                    }
                    let (a, b) = (i.min(j), i.max(j));
                    match nvlinks.get(&(a, b)) {
                        Some(l) => format!("NV{l}"),
                        None => classify(&node.gpus[i].pci, &node.gpus[j].pci).to_string(),
                    }
                })
                .collect()
        })
        .collect();
    let nic_nic: Vec<Vec<String>> = (0..nics.len())
        .map(|i| {
            (0..nics.len())
                .map(|j| if i == j { "X".into() } else { classify(&nics[i].function, &nics[j].function).to_string() })
                .collect()
        })
        .collect();
    let mut m = Matrix { gpus, nics, gpu_nic, gpu_gpu, nic_nic, verdicts: Vec::new(), hidden_virtual_functions };
    m.verdicts = verdicts(&m);
    m
}

fn verdicts(m: &Matrix) -> Vec<String> {
    let mut v = Vec::new();
    if m.gpus.is_empty() || m.nics.is_empty() {
        v.push(format!("{} GPU(s), {} NIC(s): no GPU↔NIC pairs to judge.", m.gpus.len(), m.nics.len()));
        return v;
    }
    let mut no_gdr = Vec::new();
    let mut near_counts = Vec::new();
    for (i, g) in m.gpus.iter().enumerate() {
        let best = *m.gpu_nic[i].iter().min().unwrap();
        let nearest: Vec<&str> =
            m.nics.iter().zip(&m.gpu_nic[i]).filter(|(_, t)| **t == best).map(|(n, _)| n.device.as_str()).collect();
        let close = m.gpu_nic[i].iter().filter(|t| t.gdr_by_default()).count();
        near_counts.push(close);
        v.push(format!("{}: nearest {} ({})", g.name, nearest.join(", "), best));
        if !best.gdr_by_default() {
            no_gdr.push(g.name.clone());
        }
    }
    if !no_gdr.is_empty() {
        v.push(format!(
            "{} have no NIC at PIX/PXB distance: GPUDirect RDMA is off for them under NCCL's default NCCL_NET_GDR_LEVEL (PXB); traffic is staged through host memory.",
            no_gdr.join(", ")
        ));
    }
    let far: Vec<&str> = m
        .nics
        .iter()
        .enumerate()
        .filter(|(j, _)| m.gpu_nic.iter().all(|row| !row[*j].gdr_by_default()))
        .map(|(_, n)| n.device.as_str())
        .collect();
    if !far.is_empty() && far.len() < m.nics.len() {
        v.push(format!(
            "{} {} far from every GPU (storage or management NICs, not GPU rails).",
            far.join(", "),
            if far.len() == 1 { "is" } else { "are" }
        ));
    }
    let layout = if near_counts.iter().all(|c| *c == 1) {
        let pix = m.gpu_nic.iter().all(|r| r.contains(&PathType::PIX));
        format!(
            "Layout: one NIC per GPU on its own PCIe switch (1:1 rails, {} switches){}.",
            m.gpus.len(),
            if pix { "" } else { ", through a multi-level switch" }
        )
    } else if near_counts.iter().all(|c| *c == 2) {
        "Layout: two GPUs and two NICs share each PCIe switch tree (DGX-style: GPU0's neighbour NIC is PIX/PXB as well).".to_string()
    } else if near_counts.iter().all(|c| *c == 0) {
        "Layout: no GPU shares a PCIe switch with a NIC (NICs hang off the CPU; GPUDirect RDMA needs NCCL_NET_GDR_LEVEL raised).".to_string()
    } else {
        format!(
            "Layout: uneven — NICs at PIX/PXB distance per GPU: {}.",
            near_counts.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ")
        )
    };
    v.push(layout);
    v
}
