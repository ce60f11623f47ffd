//! Facts: read the node into a `Node` snapshot. The only module that touches `/sys`, `/proc`,
//! `/dev` (through `SysRoot`) or runs `nvidia-smi`.

pub mod capture;
pub mod gpu;
pub mod host;
pub mod model;
pub mod net;
pub mod netlink;
pub mod pci;
pub mod rdma;
pub mod sysroot;

pub use model::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
pub use sysroot::Detail;
use sysroot::SysRoot;

#[derive(Debug, Clone)]
pub struct ProbeOptions {
    pub root: PathBuf,
    /// Ask `nvidia-smi` for UUIDs and NVLink counts (live only, hard timeout). Off on the hook's
    /// path: it costs 100 ms or more and may hang with a wedged driver.
    pub nvidia_smi: bool,
    pub nvidia_smi_timeout: Duration,
    /// How much to read beyond what decisions use; see `Detail`.
    pub detail: sysroot::Detail,
    /// Match umad/issm nodes to their devices (one link per function). The hook needs them only
    /// when it binds mad nodes or masks sysfs.
    pub mad: bool,
}

impl ProbeOptions {
    pub fn at(root: &Path) -> ProbeOptions {
        ProbeOptions {
            root: root.to_path_buf(),
            nvidia_smi: false,
            nvidia_smi_timeout: Duration::from_secs(5),
            detail: sysroot::Detail::Standard,
            mad: true,
        }
    }
}

pub fn probe(opts: &ProbeOptions) -> Node {
    probe_with(&SysRoot::new(&opts.root).with_detail(opts.detail).with_mad(opts.mad), opts)
}

/// Entries of /dev/infiniband (two or three per RDMA function) from which `probe` reads its
/// sections on threads: about 24 RDMA functions.
const THREADED_FROM: usize = 64;

pub fn probe_with(sys: &SysRoot, opts: &ProbeOptions) -> Node {
    // The three sections are independent: on a large node (SR-IOV functions by the hundred)
    // they are read side by side (notes are sorted, so the snapshot does not depend on the
    // interleaving). On the hook's path, and on a node of the story's size (a few hundred files
    // per section), threads cost more CPU than they save: measured on the story node with
    // bench/interleave.py, 150 interleaved runs, probe --json took 5.6 ms CPU (4.2 ms wall)
    // with threads and 4.9 ms (5.1 ms wall) without.
    // Listed once for both readers: on an SR-IOV node it holds thousands of names. The hook only
    // looks names up in it, so it skips the (natural) sort a snapshot wants.
    let dev_ib = if sys.detail() == Detail::Hook {
        sys.list_unordered(Path::new("dev/infiniband"))
    } else {
        sys.list(Path::new("dev/infiniband"))
    };
    let serial = sys.detail() == Detail::Hook || dev_ib.len() < THREADED_FROM || !crate::parallel::THREADS_PAY;
    let (mut rdma, (net, routes), gpus) = if serial {
        (rdma::read(sys, &dev_ib), net::read(sys), gpu::read(sys))
    } else {
        std::thread::scope(|s| {
            let n = s.spawn(|| net::read(sys));
            let g = s.spawn(|| gpu::read(sys));
            let r = rdma::read(sys, &dev_ib);
            (r, join(n), join(g))
        })
    };
    let mut net = net;
    link_by_function(&mut rdma, &mut net, !sys.full());
    link_bonds(&mut rdma, &net);
    let mut node = Node {
        schema: SCHEMA,
        source: if sys.is_live() { "live".into() } else { sys.root().display().to_string() },
        hostname: if sys.full() { host::hostname(sys) } else { None },
        rdma,
        net,
        routes,
        gpus,
        numa: if sys.full() { host::numa(sys) } else { Vec::new() },
        host: host::read(sys, dev_ib),
        nvlinks: Vec::new(),
        bridges: Vec::new(),
        notes: Vec::new(),
    };
    if sys.full() {
        node.bridges = bridges_between(sys, &node);
    }
    if opts.nvidia_smi && sys.is_live() && !node.gpus.is_empty() {
        if let Ok(path) = which::which("nvidia-smi") {
            for n in nvidia_smi(&mut node, &path, opts.nvidia_smi_timeout) {
                sys.note(n);
            }
        }
    }
    node.notes = sys.take_notes();
    node
}

/// ACS on the way between GPUs and HCAs (doctor, fleet): one config read per bridge.
fn bridges_between(sys: &SysRoot, node: &Node) -> Vec<model::Bridge> {
    let mut bdfs: Vec<String> = node
        .gpus
        .iter()
        .map(|g| &g.pci)
        .chain(node.rdma.iter().filter(|d| !d.virtual_function).filter_map(|d| d.pci.as_ref()))
        .flat_map(|p| p.bridges.iter().cloned())
        .collect();
    bdfs.sort();
    bdfs.dedup();
    pci::bridges(sys, &bdfs)
}

/// A section thread's result; its panic goes on up (the hook catches it) instead of becoming an
/// empty section.
fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// Link RDMA devices and interfaces that sit on the same PCI function: a device's `netdevs`,
/// an interface's `rdma_device`. The hook's probe lists no device directories, so it links all
/// of them this way (`all`); `probe` links only what it read by links (`attributes_unread`: the
/// VFs of RDMA PFs in rdma::read, their interfaces in net::vf_if), the rest came from listings.
/// Linear: one index per side, one look-up per item (an SR-IOV node has a device and a netdev
/// per function: the N×M compares this replaced were 37 % of the hook at 1 024 functions).
fn link_by_function(rdma: &mut [RdmaDevice], net: &mut [NetIf], all: bool) {
    if !all && !rdma.iter().any(|d| d.attributes_unread) && !net.iter().any(|i| i.attributes_unread) {
        return;
    }
    // The first device on a function names its interfaces.
    let mut device_of: HashMap<String, String> = HashMap::with_capacity(rdma.len());
    for d in rdma.iter() {
        if let Some(p) = &d.pci {
            device_of.entry(p.bdf.clone()).or_insert_with(|| d.name.clone());
        }
    }
    let mut by_bdf: HashMap<&str, Vec<&str>> = HashMap::with_capacity(net.len());
    for i in net.iter() {
        if let Some(p) = &i.pci {
            by_bdf.entry(p.bdf.as_str()).or_default().push(i.name.as_str());
        }
    }
    for d in rdma.iter_mut().filter(|d| all || d.attributes_unread) {
        let Some(bdf) = d.pci.as_ref().map(|p| p.bdf.as_str()) else { continue };
        d.netdevs = by_bdf.get(bdf).map(|v| v.iter().map(|n| n.to_string()).collect()).unwrap_or_default();
        d.netdevs.sort_by(|a, b| crate::text::natural_cmp(a, b));
    }
    drop(by_bdf);
    for i in net.iter_mut().filter(|i| all || i.attributes_unread) {
        if let Some(p) = &i.pci {
            i.rdma_device = device_of.get(&p.bdf).cloned();
        }
    }
}

/// A bond device (`mlx5_bond_0`) sits on its first port's PCI function; the functions behind it
/// are those of the bond slaves of its network interface.
fn link_bonds(rdma: &mut [RdmaDevice], net: &[NetIf]) {
    // Linear: interfaces indexed by name and bond slaves by master once, then one look-up per
    // device's netdev.
    let by_name: HashMap<&str, &NetIf> = net.iter().map(|i| (i.name.as_str(), i)).collect();
    let mut slaves: HashMap<&str, Vec<&str>> = HashMap::new();
    for i in net {
        if let (Some(m), Some(p)) = (i.master.as_deref(), i.pci.as_ref()) {
            slaves.entry(m).or_default().push(p.bdf.as_str());
        }
    }
    for d in rdma.iter_mut() {
        let master = d.netdevs.iter().filter_map(|n| by_name.get(n.as_str())).find_map(|i| {
            if i.kind == IfKind::Bond {
                Some(i.name.as_str())
            } else {
                i.master.as_deref()
            }
        });
        let Some(m) = master else { continue };
        d.is_bond = true;
        let mut members: Vec<String> =
            slaves.get(m).map(|v| v.iter().map(|b| b.to_string()).collect()).unwrap_or_default();
        members.sort();
        members.dedup();
        d.bond_members = members;
    }
}

/// UUIDs and NVLink counts from `program` (nvidia-smi), matched to probed GPUs by bus id, each
/// call bounded by `limit`. Returns notes; a hang, a failure or garbage leaves the facts unknown.
pub fn nvidia_smi(node: &mut Node, program: &Path, limit: Duration) -> Vec<String> {
    let mut notes = Vec::new();
    let mut note = |m: String| notes.push(m);
    let path = program;
    let mut c = Command::new(path);
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
        Ok(out) => note(format!("nvidia-smi exited with {:?}: {}", out.status, crate::text::clip(out.stderr.trim()))),
        Err(e) => {
            note(format!("nvidia-smi: {e}"));
            return notes;
        }
    }
    let mut c = Command::new(path);
    c.args(["topo", "-m"]);
    match crate::subprocess::run(c, limit) {
        Ok(out) if out.status == Some(0) => node.nvlinks = crate::nvsmi::parse_topo(&out.stdout).nvlinks(),
        Ok(_) => note("nvidia-smi topo -m failed; NVLink cells unknown".into()),
        Err(e) => note(format!("nvidia-smi topo -m: {e}")),
    }
    notes
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

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn bus_ids() {
        assert_eq!(normalize_bus_id("00000000:18:00.0"), "0000:18:00.0");
        assert_eq!(normalize_bus_id("00010000:01:00.0"), "10000:01:00.0");
    }
}
