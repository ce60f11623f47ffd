//! `ibwire probe`: print, save or capture the node snapshot.

use crate::probe::{IfKind, LinkLayer, Node};
use crate::snapshot::{self, Format};
use anyhow::Result;
use std::fmt::Write;

/// The node in a few screens: GPUs, RDMA devices and their ports, network interfaces, the
/// host's GPUDirect/memlock/device-node state, and probe's notes.
pub fn summary(n: &Node) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "node {} (source: {})", n.hostname.as_deref().unwrap_or("?"), n.source);
    gpus_section(&mut s, n);
    rdma_section(&mut s, n);
    net_section(&mut s, n);
    host_section(&mut s, n);
    if !n.notes.is_empty() {
        let _ = writeln!(s, "\nNotes ({}):", n.notes.len());
        for note in &n.notes {
            let _ = writeln!(s, "  {note}");
        }
    }
    s
}

fn gpus_section(s: &mut String, n: &Node) {
    let _ = writeln!(s, "\nGPUs: {}", n.gpus.len());
    for (i, g) in n.gpus.iter().enumerate() {
        let _ = writeln!(
            s,
            "  GPU{i}  {}  {}  NUMA {}{}",
            g.pci.bdf,
            g.model,
            numa(g.pci.numa_node),
            g.uuid.as_deref().map(|u| format!("  {u}")).unwrap_or_default()
        );
    }
}

fn rdma_section(s: &mut String, n: &Node) {
    let _ = writeln!(s, "\nRDMA devices: {}", n.rdma.len());
    for d in &n.rdma {
        let mut tags = Vec::new();
        if d.is_bond {
            tags.push(format!(
                "bond of {}",
                if d.bond_members.is_empty() { "?".into() } else { d.bond_members.join("+") }
            ));
        }
        if d.virtual_function {
            tags.push("SR-IOV VF".into());
        }
        if d.attributes_unread {
            tags.push("PF used; ports not read (--all reads them)".into());
        }
        let node_present = match (&d.uverbs, d.uverbs_node_present) {
            (Some(u), true) => format!("/dev/infiniband/{u}"),
            (Some(u), false) => format!("/dev/infiniband/{u} MISSING"),
            (None, _) => "no uverbs".into(),
        };
        let _ = writeln!(
            s,
            "  {:<12} {}  NUMA {}  {}{}",
            d.name,
            d.pci.as_ref().map(|p| p.bdf.as_str()).unwrap_or("-"),
            numa(d.pci.as_ref().and_then(|p| p.numa_node)),
            node_present,
            if tags.is_empty() { String::new() } else { format!("  [{}]", tags.join(", ")) }
        );
        for p in &d.ports {
            port_line(s, p);
        }
    }
}

fn port_line(s: &mut String, p: &crate::probe::RdmaPort) {
    let ll = p.link_layer.unwrap_or(LinkLayer::Unknown);
    let addr = match ll {
        LinkLayer::InfiniBand => format!(
            "LID {} SM {}",
            p.lid.map(|l| format!("0x{l:x}")).unwrap_or("?".into()),
            p.sm_lid.map(|l| format!("0x{l:x}")).unwrap_or("?".into())
        ),
        _ => {
            let v2 =
                p.gids.iter().filter(|g| g.gid_type.as_deref() == Some("RoCE v2") && g.ipv4_mapped().is_some()).count();
            format!("{} RoCE v2 IPv4 GIDs", v2)
        }
    };
    // The whole P_Key table is read with --all only; index 0 (what NCCL's queue pairs
    // use) always: an empty "P_Keys " on every port said nothing true.
    let pkeys = if !p.pkeys.is_empty() {
        format!("  P_Keys {}", p.pkeys.iter().map(|k| format!("0x{k:04x}")).collect::<Vec<_>>().join(","))
    } else {
        p.pkey0.map(|k| format!("  P_Key[0] 0x{k:04x}")).unwrap_or_default()
    };
    let _ = writeln!(
        s,
        "      port {}  {} / {}  {}  {}  {}{pkeys}",
        p.port,
        p.state_name.as_deref().unwrap_or("?"),
        p.phys_state_name.as_deref().unwrap_or("?"),
        ll,
        p.rate.as_deref().unwrap_or("?"),
        addr,
    );
}

fn net_section(s: &mut String, n: &Node) {
    let _ = writeln!(s, "\nNetwork interfaces: {}", n.net.len());
    for i in &n.net {
        if i.kind == IfKind::Veth {
            continue;
        }
        let mut extra = Vec::new();
        if let Some(m) = &i.master {
            extra.push(format!("master {m}"));
        }
        if !i.lowers.is_empty() {
            extra.push(format!("on {}", i.lowers.join("+")));
        }
        if let Some(r) = &i.rdma_device {
            extra.push(format!("rdma {r}"));
        }
        if i.attributes_unread {
            extra.push("SR-IOV VF, not read (--all reads it)".into());
        }
        let addrs: Vec<String> = i.addrs.iter().map(|a| a.to_string()).collect();
        let _ = writeln!(
            s,
            "  {:<14} {:<10} {:<10} {:<8} {}{}",
            i.name,
            format!("{:?}", i.kind).to_lowercase(),
            format!("{:?}", i.if_type).to_lowercase(),
            if i.is_running() { "up" } else { i.operstate.as_deref().unwrap_or("?") },
            addrs.join(" "),
            if extra.is_empty() { String::new() } else { format!("  ({})", extra.join(", ")) }
        );
    }
    let veths = n.net.iter().filter(|i| i.kind == IfKind::Veth).count();
    if veths > 0 {
        let _ = writeln!(s, "  … and {veths} veth interfaces");
    }
    if let Some(r) = n.routes.iter().find(|r| r.dest.prefix_len() == 0 && r.dest.addr().is_ipv4()) {
        let _ = writeln!(
            s,
            "  default route via {} dev {}",
            r.gateway.map(|g| g.to_string()).unwrap_or("-".into()),
            r.iface
        );
    }
}

fn host_section(s: &mut String, n: &Node) {
    let h = &n.host;
    let _ = writeln!(s, "\nHost:");
    let _ = writeln!(s, "  GPUDirect peer memory: {}", h.peermem.as_deref().unwrap_or("not loaded"));
    let _ = writeln!(
        s,
        "  memlock limit: {}",
        match (h.memlock_unlimited, h.memlock_bytes) {
            (Some(true), _) => "unlimited".to_string(),
            (_, Some(b)) => format!("{} KiB", b / 1024),
            _ => "unknown".to_string(),
        }
    );
    let _ = writeln!(
        s,
        "  /dev/infiniband: {}",
        if h.dev_infiniband.is_empty() { "absent or empty".to_string() } else { h.dev_infiniband.join(" ") }
    );
}

fn numa(n: Option<i32>) -> String {
    n.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

/// `ibwire probe`: capture the tree (`--capture DIR`), or read the node, save its snapshot
/// (`--save`) and print it (summary, `--json` or `--yaml`).
pub fn run(
    src: &super::NodeSource,
    capture: Option<&std::path::Path>,
    save: Option<&std::path::Path>,
    json: bool,
    yaml: bool,
) -> Result<std::process::ExitCode> {
    if let Some(dir) = capture {
        let mut o = crate::probe::ProbeOptions::at(src.root.as_deref().unwrap_or(std::path::Path::new("/")));
        o.nvidia_smi = false;
        let n = crate::probe::capture::capture(&o, dir)?;
        eprintln!("ibwire probe: captured {n} files and links into {}", dir.display());
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let node = src.load()?;
    if let Some(p) = save {
        snapshot::save(&node, p)?;
    }
    let out = render(&node, json, yaml)?;
    if json || yaml {
        print!("{out}");
    } else {
        print!("{}", crate::text::for_stdout(&out));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

pub fn render(n: &Node, json: bool, yaml: bool) -> Result<String> {
    Ok(if json {
        snapshot::to_string(n, Format::Json)?
    } else if yaml {
        snapshot::to_string(n, Format::Yaml)?
    } else {
        summary(n)
    })
}
