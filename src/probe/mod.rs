//! Facts: read the node into a `Node` snapshot. The only module that touches `/sys`, `/proc`,
//! `/dev` (through `SysRoot`) or runs `nvidia-smi`.

pub mod capture;
pub mod gpu;
pub mod host;
pub mod model;
pub mod net;
pub mod pci;
pub mod rdma;
pub mod sysroot;

pub use model::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use sysroot::SysRoot;

#[derive(Debug, Clone)]
pub struct ProbeOptions {
    pub root: PathBuf,
    /// Ask `nvidia-smi` for UUIDs and NVLink counts (live only, hard timeout). Off on the hook's
    /// path: it costs 100 ms or more and may hang with a wedged driver.
    pub nvidia_smi: bool,
    pub nvidia_smi_timeout: Duration,
}

impl ProbeOptions {
    pub fn at(root: &Path) -> ProbeOptions {
        ProbeOptions {
            root: root.to_path_buf(),
            nvidia_smi: false,
            nvidia_smi_timeout: Duration::from_secs(5),
        }
    }
}

pub fn probe(opts: &ProbeOptions) -> Node {
    let sys = SysRoot::new(&opts.root);
    probe_with(&sys, opts)
}

pub fn probe_with(sys: &SysRoot, opts: &ProbeOptions) -> Node {
    let mut rdma = rdma::read(sys);
    let (net, routes) = net::read(sys);
    link_bonds(&mut rdma, &net);
    let mut node = Node {
        schema: SCHEMA,
        source: if sys.is_live() {
            "live".into()
        } else {
            sys.root().display().to_string()
        },
        hostname: host::hostname(sys),
        rdma,
        net,
        routes,
        gpus: gpu::read(sys),
        numa: host::numa(sys),
        host: host::read(sys),
        nvlinks: Vec::new(),
        notes: Vec::new(),
    };
    if opts.nvidia_smi && sys.is_live() && !node.gpus.is_empty() {
        nvidia_smi(&mut node, opts.nvidia_smi_timeout, &|m| sys.note(m));
    }
    node.notes = sys.take_notes();
    node
}

/// A bond device (`mlx5_bond_0`) sits on its first port's PCI function; the functions behind it
/// are those of the bond slaves of its network interface.
fn link_bonds(rdma: &mut [RdmaDevice], net: &[NetIf]) {
    for d in rdma.iter_mut() {
        let master = d
            .netdevs
            .iter()
            .filter_map(|n| net.iter().find(|i| &i.name == n))
            .find_map(|i| {
                if i.kind == IfKind::Bond {
                    Some(i.name.clone())
                } else {
                    i.master.clone()
                }
            });
        let Some(m) = master else { continue };
        d.is_bond = true;
        let mut members: Vec<String> = net
            .iter()
            .filter(|i| i.master.as_deref() == Some(m.as_str()))
            .filter_map(|i| i.pci.clone())
            .collect();
        members.sort();
        members.dedup();
        d.bond_members = members;
    }
}

/// UUIDs and NVLink counts from nvidia-smi, matched to probed GPUs by bus id.
fn nvidia_smi(node: &mut Node, limit: Duration, note: &dyn Fn(String)) {
    let Ok(path) = which::which("nvidia-smi") else {
        return;
    };
    let mut c = Command::new(&path);
    c.args(["--query-gpu=pci.bus_id,uuid,name", "--format=csv,noheader"]);
    match crate::subprocess::run(c, limit) {
        Ok(out) if out.status == Some(0) => {
            for line in out.stdout.lines() {
                let f: Vec<&str> = line.split(',').map(str::trim).collect();
                if f.len() < 3 {
                    continue;
                }
                let bdf = normalize_bus_id(f[0]);
                if let Some(g) = node.gpus.iter_mut().find(|g| g.pci.bdf == bdf) {
                    g.uuid = Some(f[1].to_string());
                    g.model = f[2].to_string();
                }
            }
        }
        Ok(out) => note(format!(
            "nvidia-smi exited with {:?}: {}",
            out.status,
            sysroot::clip(out.stderr.trim())
        )),
        Err(e) => {
            note(format!("nvidia-smi: {e}"));
            return;
        }
    }
    let mut c = Command::new(&path);
    c.args(["topo", "-m"]);
    match crate::subprocess::run(c, limit) {
        Ok(out) if out.status == Some(0) => node.nvlinks = parse_topo_nvlinks(&out.stdout),
        Ok(_) => note("nvidia-smi topo -m failed; NVLink cells unknown".into()),
        Err(e) => note(format!("nvidia-smi topo -m: {e}")),
    }
}

/// `00000000:18:00.0` → `0000:18:00.0`.
pub fn normalize_bus_id(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    match s.split_once(':') {
        Some((dom, rest)) if dom.len() > 4 => {
            let d = dom.trim_start_matches('0');
            format!("{:0>4}:{}", d, rest)
        }
        _ => s,
    }
}

/// NV# cells of the GPU block of `nvidia-smi topo -m`.
pub fn parse_topo_nvlinks(text: &str) -> Vec<NvLink> {
    let mut out = Vec::new();
    let mut header: Vec<String> = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split(['\t', ' ']).filter(|c| !c.is_empty()).collect();
        if cells
            .first()
            .map(|c| c.starts_with("GPU0"))
            .unwrap_or(false)
            && header.is_empty()
        {
            header = cells.iter().map(|c| c.to_string()).collect();
            continue;
        }
        let Some(row) = cells
            .first()
            .and_then(|c| c.strip_prefix("GPU"))
            .and_then(|i| i.parse::<usize>().ok())
        else {
            continue;
        };
        for (j, cell) in cells.iter().skip(1).enumerate() {
            let Some(col) = header
                .get(j)
                .and_then(|h| h.strip_prefix("GPU"))
                .and_then(|i| i.parse::<usize>().ok())
            else {
                continue;
            };
            if let Some(n) = cell.strip_prefix("NV").and_then(|n| n.parse::<u32>().ok()) {
                if row < col {
                    out.push(NvLink {
                        a: row,
                        b: col,
                        links: n,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn bus_ids() {
        assert_eq!(normalize_bus_id("00000000:18:00.0"), "0000:18:00.0");
        assert_eq!(normalize_bus_id("00010000:01:00.0"), "10000:01:00.0");
    }
    #[test]
    fn nvlinks_from_topo() {
        let t = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\nGPU0\t X \tNV18\tPIX\t0-1\nGPU1\tNV18\t X \tSYS\t0-1\n";
        assert_eq!(
            parse_topo_nvlinks(t),
            vec![NvLink {
                a: 0,
                b: 1,
                links: 18
            }]
        );
    }
}
