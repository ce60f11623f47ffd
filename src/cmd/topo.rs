//! `ibwire topo`: the GPU↔NIC PCIe matrix laid out like `nvidia-smi topo -m`, and verdicts.

use crate::plan::topo::Matrix;
use crate::probe::Node;
use std::fmt::Write;

const LEGEND: &str = "Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
";

fn cpus(node: &Node, numa: Option<i32>) -> (String, String) {
    // A device without a NUMA node (numa_node -1, common in VMs) on a machine with a single
    // NUMA node belongs to that node: nvidia-smi prints it so (seen on the H200 VMs).
    let numa = numa.or_else(|| (node.numa.len() == 1).then(|| node.numa[0].id as i32));
    match numa {
        Some(n) => (
            node.numa.iter().find(|x| x.id as i32 == n).and_then(|x| x.cpulist.clone()).unwrap_or_else(|| "N/A".into()),
            n.to_string(),
        ),
        None => ("N/A".into(), "N/A".into()),
    }
}

pub fn text(node: &Node, m: &Matrix) -> String {
    let mut s = String::new();
    if m.gpus.is_empty() && m.nics.is_empty() {
        // No matrix to draw: the verdict alone, not a header of tabs and a legend of nothing.
        let _ = writeln!(s, "No GPU and no NIC on this node: no GPU↔NIC matrix.");
        for v in &m.verdicts {
            let _ = writeln!(s, "  {v}");
        }
        return s;
    }
    let cols: Vec<String> =
        m.gpus.iter().map(|g| g.name.clone()).chain(m.nics.iter().map(|n| n.name.clone())).collect();
    let _ = writeln!(s, "\t{}\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID", cols.join("\t"));
    let cell = |c: &str| if c == "X" { " X ".to_string() } else { c.to_string() };
    for (i, g) in m.gpus.iter().enumerate() {
        let mut row: Vec<String> = m.gpu_gpu[i].iter().map(|c| cell(c)).collect();
        row.extend(m.gpu_nic[i].iter().map(|t| t.to_string()));
        let (cpu, numa) = cpus(node, g.numa);
        let _ = writeln!(s, "{}\t{}\t{}\t{}\t\tN/A", g.name, row.join("\t"), cpu, numa);
    }
    for (j, n) in m.nics.iter().enumerate() {
        let mut row: Vec<String> = m.gpu_nic.iter().map(|r| r[j].to_string()).collect();
        row.extend(m.nic_nic[j].iter().map(|c| cell(c)));
        let _ = writeln!(s, "{}\t{}", n.name, row.join("\t"));
    }
    let _ = writeln!(s, "\n{LEGEND}");
    if !m.nics.is_empty() {
        let _ = writeln!(s, "NIC Legend:\n");
        for n in &m.nics {
            let _ = writeln!(s, "  {}: {}", n.name, n.device);
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "Verdicts:");
    for v in &m.verdicts {
        let _ = writeln!(s, "  {v}");
    }
    if m.hidden_virtual_functions > 0 {
        let _ = writeln!(
            s,
            "  ({} SR-IOV virtual functions not shown: each sits where its physical function does; --all-functions lists them.)",
            m.hidden_virtual_functions
        );
    }
    if node.nvlinks.is_empty() && m.gpus.len() > 1 {
        let _ = writeln!(s, "  (GPU×GPU cells show the PCIe path; NVLink counts need nvidia-smi on the node.)");
    }
    s
}

pub fn json(m: &Matrix) -> serde_json::Value {
    serde_json::json!({
        "schema": crate::render::JSON_SCHEMA,
        "gpus": m.gpus,
        "nics": m.nics,
        "gpu_nic": m.gpu_nic,
        "gpu_gpu": m.gpu_gpu,
        "nic_nic": m.nic_nic,
        "verdicts": m.verdicts,
        "hidden_virtual_functions": m.hidden_virtual_functions,
    })
}
