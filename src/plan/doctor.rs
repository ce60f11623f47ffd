//! Lint the job's environment (and nccl.conf files) and the node: which settings matter, which
//! are harmful, which do nothing, what is wrong with the node — each with the fix.

use super::topo::{classify, PathType};
use super::{Finding, Plan, Severity};
use crate::nccl::filter;
use crate::probe::Node;
use std::collections::BTreeMap;

/// Where a variable's value came from, for the message.
#[derive(Debug, Clone)]
pub struct Var {
    pub value: String,
    pub origin: String,
}

fn f(sev: Severity, subject: &str, msg: String, fix: &str) -> Finding {
    Finding::new(sev, subject, msg).fix(fix)
}

/// `vars`: NAME → value and origin (the environment wins over nccl.conf, as in NCCL).
/// `IBext` (any case) without the `_vN` its plugin's own name carries.
fn unversioned_plugin_name(v: &str) -> bool {
    v.trim().eq_ignore_ascii_case("IBext")
}

/// MELLANOX_VISIBLE_DEVICES: the stock hook's variable, read at container start only.
fn lint_mellanox_visible(node: &Node, v: &Var, inside: bool, healthy: &[&str]) -> Finding {
    let val = v.value.trim();
    let names = !val.is_empty()
        && !matches!(val, "all" | "none" | "void")
        && val.split(',').any(|e| e.trim().parse::<u32>().is_err());
    if names {
        f(Severity::Error, "MELLANOX_VISIBLE_DEVICES", format!("MELLANOX_VISIBLE_DEVICES={val}: enroot's 99-mellanox.sh takes indices in PCI order (0,1,…), not names; the container start fails with 'Unknown MELLANOX device id'"), "use indices, or ibwire's IBWIRE_VISIBLE_DEVICES which takes names")
    } else if inside {
        f(Severity::Warning, "MELLANOX_VISIBLE_DEVICES", format!("MELLANOX_VISIBLE_DEVICES={val} inside a running container does nothing: only the enroot hook reads it, at container start"), "set it in the job environment before the container starts (or rely on ibwire's hook)")
    } else {
        let bond = if val == "all" {
            node.rdma.iter().filter(|d| !healthy.contains(&d.name.as_str())).map(|d| d.name.clone()).collect::<Vec<_>>()
        } else {
            vec![]
        };
        f(
            Severity::Info,
            "MELLANOX_VISIBLE_DEVICES",
            format!(
                "MELLANOX_VISIBLE_DEVICES={val} is read by enroot's hook at container start (indices in PCI order){}",
                if bond.is_empty() {
                    String::new()
                } else {
                    format!("; `all` also exposes {}, which NCCL must not use", bond.join(", "))
                }
            ),
            "nothing to do when ibwire's hook is installed; it also sets NCCL_IB_HCA to the healthy ones",
        )
    }
}

/// Variables that NCCL and torchrun never read, or read only elsewhere.
fn ignored_var(k: &str, v: &Var, vars: &BTreeMap<String, Var>) -> Option<Finding> {
    if k.starts_with("PMIX_MCA_") {
        return Some(f(
            Severity::Info,
            k,
            format!(
                "{k}={} only matters to PMIx launches (srun --mpi=pmix, mpirun); torchrun and NCCL never read it",
                v.value
            ),
            "keep it only in MPI job scripts",
        ));
    }
    if k == "UCX_NET_DEVICES" || (k.starts_with("UCX_") && k != "UCX_HOME") {
        let plugin = vars.get("NCCL_NET").map(|n| n.value.to_ascii_lowercase().contains("ucx")).unwrap_or(false)
            || vars.get("NCCL_NET_PLUGIN").map(|n| n.value.contains("ucx")).unwrap_or(false);
        if !plugin {
            return Some(f(Severity::Warning, k, format!("{k}={} does nothing for NCCL: its IB transport uses verbs directly, not UCX; the knob that selects HCAs is NCCL_IB_HCA", v.value), "unset it; `ibwire env` sets NCCL_IB_HCA"));
        }
    }
    if k == "NCCL_ENV_PLUGIN" {
        return Some(f(
            Severity::Warning,
            k,
            format!(
                "NCCL_ENV_PLUGIN={}: NCCL ≥ 2.28 loads this plugin to supply its settings, and what it sets is not in this environment: ibwire (and this report) cannot see those values",
                v.value
            ),
            "compare what NCCL used (NCCL_DEBUG=INFO, `ibwire verify`) with `ibwire env`, or unset NCCL_ENV_PLUGIN",
        ));
    }
    if k == "MELLANOX_MOUNT_DRIVER" {
        return Some(f(
            Severity::Info,
            k,
            format!(
                "MELLANOX_MOUNT_DRIVER={}: only enroot 3.x's 99-mellanox.sh reads it (to inject the host's verbs provider into an image without rdma-core); enroot 4 dropped it and ibwire's hook does not do it",
                v.value
            ),
            "install rdma-core (libibverbs1, ibverbs-providers) in the image; ibwire's hook names an image without libibverbs",
        ));
    }
    None
}

/// Variables that switch a fast path off.
fn disabling_var(k: &str, v: &Var, healthy: &[&str]) -> Option<Finding> {
    if k == "NCCL_IB_DISABLE" && v.value != "0" && !v.value.is_empty() {
        let sev = if healthy.is_empty() { Severity::Info } else { Severity::Error };
        return Some(f(
            sev,
            k,
            format!("NCCL_IB_DISABLE={} ({}) turns InfiniBand off: NCCL runs on TCP sockets", v.value, v.origin),
            "unset NCCL_IB_DISABLE",
        ));
    }
    if k == "NCCL_P2P_DISABLE" && v.value != "0" {
        return Some(f(
            Severity::Warning,
            k,
            format!(
                "NCCL_P2P_DISABLE={} forces intra-node traffic through host memory instead of NVLink/PCIe P2P",
                v.value
            ),
            "unset NCCL_P2P_DISABLE",
        ));
    }
    if k == "NCCL_SHM_DISABLE" && v.value != "0" {
        return Some(f(
            Severity::Warning,
            k,
            format!("NCCL_SHM_DISABLE={} removes the shared-memory fallback", v.value),
            "unset NCCL_SHM_DISABLE",
        ));
    }
    if k == "NCCL_NET_GDR_LEVEL" && matches!(v.value.as_str(), "LOC" | "0") {
        return Some(f(
            Severity::Warning,
            k,
            "NCCL_NET_GDR_LEVEL=LOC disables GPUDirect RDMA: every transfer is staged through host memory".into(),
            "unset NCCL_NET_GDR_LEVEL",
        ));
    }
    if k == "NCCL_NET" && v.value.eq_ignore_ascii_case("socket") && !healthy.is_empty() {
        return Some(f(
            Severity::Error,
            k,
            "NCCL_NET=Socket forces TCP sockets although the node has healthy HCAs".into(),
            "unset NCCL_NET",
        ));
    }
    None
}

/// Variables that force what NCCL chooses better itself, or change how it fails.
fn forcing_var(k: &str, v: &Var) -> Option<Finding> {
    if k == "NCCL_ALGO" || k == "NCCL_PROTO" {
        return Some(f(
            Severity::Warning,
            k,
            format!(
                "{k}={} forces an algorithm/protocol; NCCL's tuner picks per message size and usually does better",
                v.value
            ),
            &format!("unset {k} unless you measured that it helps"),
        ));
    }
    if k == "NCCL_IB_GID_INDEX" {
        return Some(f(Severity::Warning, k, format!("NCCL_IB_GID_INDEX={} is forced: NCCL ≥ 2.21 selects the RoCE v2 IPv4 GID itself, and on InfiniBand the variable is ignored since 2.22; a wrong index gives ibv_modify_qp EINVAL or no GPUDirect", v.value), "unset NCCL_IB_GID_INDEX"));
    }
    if k == "NCCL_COMM_ID" {
        return Some(f(Severity::Warning, k, format!("NCCL_COMM_ID={} overrides the interface choice (NCCL_SOCKET_IFNAME is ignored for bootstrap) and PyTorch does not need it", v.value), "unset NCCL_COMM_ID"));
    }
    if k == "NCCL_DEBUG" && matches!(v.value.to_ascii_uppercase().as_str(), "INFO" | "TRACE") {
        return Some(f(
            Severity::Info,
            k,
            format!(
                "NCCL_DEBUG={} left on: verbose logs on every rank (fine for `ibwire verify`, noise in production)",
                v.value
            ),
            "unset NCCL_DEBUG or set it to WARN",
        ));
    }
    None
}

/// Variables that change which networks NCCL may use, or how it fails when nodes differ.
fn network_var(k: &str, v: &Var, vars: &BTreeMap<String, Var>) -> Option<Finding> {
    if k == "NCCL_CROSS_NIC"
        && v.value.trim() == "0"
        && vars.get("NCCL_GIN_ENABLE").is_none_or(|g| g.value.trim() != "0")
    {
        // nccl:src/transport/net_ib/gin.cc: GIN (the device API, NCCL 2.28+) needs full NIC
        // connectivity and refuses NCCL_CROSS_NIC=0 (shared/spec/nccl-2.27-2.32.md §1).
        return Some(f(
            Severity::Info,
            k,
            "NCCL_CROSS_NIC=0: fine for collectives on a rail-only fabric, but NCCL's device API (GIN, 2.28+: kernels that call ncclGin/ncclLsa) cannot run with it".into(),
            "if the job uses the device API, unset NCCL_CROSS_NIC (GIN needs every NIC to reach every other); else nothing to do",
        ));
    }
    if k == "NCCL_NET" && unversioned_plugin_name(&v.value) {
        // nccl:src/plugin/net.cc compares NCCL_NET with each network's full name
        // (strcasecmp); HPC-X's plugin names itself IBext_v11 (IBext_v8 in older builds):
        // shared/spec/nccl-2.27-2.32.md §1.2.
        return Some(f(
            Severity::Warning,
            k,
            format!(
                "NCCL_NET={}: NCCL matches NCCL_NET against a network's full name, and the HPC-X plugin is named with its version (IBext_v11, IBext_v8): this name selects no network where the plugin is one of those builds",
                v.value
            ),
            "use the name NCCL prints in `Using network …` (NCCL_DEBUG=INFO), or unset NCCL_NET",
        ));
    }
    if k == "NCCL_IGNORE_NET_MISMATCH" && v.value.trim() == "1" {
        return Some(f(
            Severity::Warning,
            k,
            "NCCL_IGNORE_NET_MISMATCH=1 lets a job start whose ranks see different numbers of network devices; with HCAs missing on one node NCCL can then hang after init instead of failing (NVIDIA/nccl#2428: NCCL 2.30.7, one HCA not openable on one node)".into(),
            "unset it and make the nodes agree: `ibwire fleet` names a node with fewer healthy ports",
        ));
    }
    if k == "NCCL_IGNORE_NET_MISMATCH" && v.value.trim() == "0" {
        return Some(f(
            Severity::Info,
            k,
            "NCCL_IGNORE_NET_MISMATCH=0: NCCL fails init when ranks see different numbers of network devices (\"Detected mixed local Net device counts across ranks\"): one node with a port down or an HCA excluded stops the whole job".into(),
            "run `ibwire fleet` over the job's nodes first: it names a node with fewer healthy ports",
        ));
    }
    None
}

pub fn lint(node: &Node, plan: &Plan, vars: &BTreeMap<String, Var>) -> Vec<Finding> {
    let mut out = Vec::new();
    let inside = node.host.in_container;
    let get = |k: &str| vars.get(k);
    let healthy: Vec<&str> = plan.hcas.iter().map(|(d, _)| d.as_str()).collect();

    for (k, v) in vars {
        if k == "NCCL_NET_PLUGIN" {
            lint_net_plugin(&v.value, &mut out);
        } else if let Some(x) = ignored_var(k, v, vars)
            .or_else(|| disabling_var(k, v, &healthy))
            .or_else(|| forcing_var(k, v))
            .or_else(|| network_var(k, v, vars))
        {
            out.push(x);
        }
    }

    if let Some(v) = get("MELLANOX_VISIBLE_DEVICES") {
        out.push(lint_mellanox_visible(node, v, inside, &healthy));
    }

    if let Some(v) = get("NCCL_IB_HCA") {
        lint_ib_hca(node, plan, v, &mut out);
    }
    if let Some(v) = get("NCCL_SOCKET_IFNAME") {
        lint_socket_ifname(node, plan, v, &mut out);
    }
    lint_node(node, plan, &mut out);
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}

/// NCCL_NET_PLUGIN: since NCCL 2.27 a comma list tried in order, and `none` (any case) loads
/// no external plugin (NCCL's src/plugin/net.cc); an older NCCL takes the whole value as one name.
fn lint_net_plugin(value: &str, out: &mut Vec<Finding>) {
    let v = value.trim();
    if v.eq_ignore_ascii_case("none") || v.is_empty() {
        out.push(f(
            Severity::Info,
            "NCCL_NET_PLUGIN",
            format!("NCCL_NET_PLUGIN={v}: no external network plugin; NCCL uses its own InfiniBand (verbs) and socket transports"),
            "nothing to do; this is what ibwire's NCCL_IB_HCA applies to",
        ));
    } else if v.contains(',') {
        let names: Vec<&str> = v.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
        out.push(f(
            Severity::Info,
            "NCCL_NET_PLUGIN",
            format!(
                "NCCL_NET_PLUGIN={v}: NCCL ≥ 2.27 tries {} in order, then its own transports; an older NCCL takes the whole value as one plugin name and finds none",
                names.join(", then ")
            ),
            "with NCCL < 2.27 name one plugin; `ibwire verify` shows which plugin NCCL loaded",
        ));
    }
}

fn lint_ib_hca(node: &Node, plan: &Plan, v: &Var, out: &mut Vec<Finding>) {
    let (flt, problems) = filter::parse(&v.value);
    // The example is this node's own decided value, not a name from another machine.
    let example = if plan.hcas.is_empty() {
        "=<device>:<port>,…".to_string()
    } else {
        format!("={}", plan.hcas.iter().map(|(d, p)| format!("{d}:{p}")).collect::<Vec<_>>().join(","))
    };
    for p in problems {
        out.push(f(
            Severity::Error,
            "NCCL_IB_HCA",
            format!("NCCL_IB_HCA={}: {p}", v.value),
            &format!("use the exact form `ibwire env` prints, here {example}"),
        ));
    }
    let mut selected: Vec<(String, u32)> = Vec::new();
    for d in &node.rdma {
        for p in &d.ports {
            if flt.selects(&d.name, p.port) {
                selected.push((d.name.clone(), p.port));
            }
        }
    }
    entry_findings(node, &flt, out);
    selection_findings(node, plan, v, &flt, &selected, out);
}

/// NCCL_IB_HCA entries that are prefixes of other devices, or that name no device here.
fn entry_findings(node: &Node, flt: &filter::Filter, out: &mut Vec<Finding>) {
    if !flt.exact && !flt.exclude {
        for e in &flt.entries {
            let hits: Vec<&str> = node
                .rdma
                .iter()
                .filter(|d| d.name.starts_with(&e.name) && d.name != e.name)
                .map(|d| d.name.as_str())
                .collect();
            if !hits.is_empty() {
                out.push(f(
                    Severity::Warning,
                    "NCCL_IB_HCA",
                    format!("entry {:?} is a prefix: it also selects {}", e.name, hits.join(", ")),
                    "prefix the list with `=` for exact names",
                ));
            }
        }
    }
    for e in &flt.entries {
        if !node.rdma.is_empty()
            && !node.rdma.iter().any(|d| if flt.exact { d.name == e.name } else { d.name.starts_with(&e.name) })
        {
            out.push(f(
                Severity::Warning,
                "NCCL_IB_HCA",
                format!("entry {:?} names no RDMA device on this node", e.name),
                "list the devices `ibwire env` reports",
            ));
        }
    }
}

/// What NCCL_IB_HCA selects here: an excluded port, no port at all, or exactly the healthy ones.
fn selection_findings(
    node: &Node,
    plan: &Plan,
    v: &Var,
    flt: &filter::Filter,
    selected: &[(String, u32)],
    out: &mut Vec<Finding>,
) {
    for (d, p) in selected {
        if let Some(x) = plan.excluded.iter().find(|x| &x.device == d && x.port == Some(*p)) {
            out.push(f(
                Severity::Error,
                "NCCL_IB_HCA",
                format!("NCCL_IB_HCA={} selects {d} port {p}: {}", v.value, x.reason),
                "use `ibwire env`'s NCCL_IB_HCA, which leaves it out",
            ));
        }
    }
    if !node.rdma.is_empty() && selected.is_empty() {
        out.push(f(
            Severity::Error,
            "NCCL_IB_HCA",
            format!(
                "NCCL_IB_HCA={} selects no port on this node: NET/IB : No device found, NCCL falls back to TCP sockets",
                v.value
            ),
            "use `ibwire env`'s value",
        ));
    }
    let mut want = plan.hcas.clone();
    want.sort();
    let mut got = selected.to_vec();
    got.sort();
    if !want.is_empty() && got == want {
        out.push(f(
            Severity::Info,
            "NCCL_IB_HCA",
            format!(
                "NCCL_IB_HCA={} selects exactly the {} healthy ports{}",
                v.value,
                want.len(),
                if flt.exact {
                    String::new()
                } else {
                    " (the prefix form happens to work here; `=` makes it exact)".into()
                }
            ),
            "nothing to do",
        ));
    }
}

fn lint_socket_ifname(node: &Node, plan: &Plan, v: &Var, out: &mut Vec<Finding>) {
    let s = "NCCL_SOCKET_IFNAME";
    let example = plan.bootstrap_if.as_deref().map(|i| format!("here ={i}")).unwrap_or_else(|| "=<interface>".into());
    if v.value.len() <= 1 {
        out.push(f(
            Severity::Warning,
            s,
            format!("{s}={:?}: NCCL ignores values of one character", v.value),
            &format!("name the interface exactly, {example}"),
        ));
        return;
    }
    let (flt, problems) = filter::parse(&v.value);
    for p in problems {
        out.push(f(
            Severity::Error,
            s,
            format!("{s}={}: {p}", v.value),
            &format!("name one interface exactly, {example}"),
        ));
    }
    let matched: Vec<&crate::probe::NetIf> = node.net.iter().filter(|i| flt.selects(&i.name, 0)).collect();
    if matched.is_empty() {
        out.push(f(Severity::Error, s, format!("{s}={} matches no interface on this node: bootstrap fails (NCCL 2.27 reports a garbage address family)", v.value), "use `ibwire env`'s value"));
        return;
    }
    if matched.len() > 1 && !flt.exclude {
        out.push(f(
            Severity::Warning,
            s,
            format!(
                "{s}={} matches {} interfaces ({}); bootstrap takes the first, the Socket transport all of them",
                v.value,
                matched.len(),
                matched.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
            "prefix it with `=` and name one interface",
        ));
    }
    let first = matched[0];
    interface_state(first, out);
    let wrong_route = route_findings(plan, v, first, out);
    // Said only when nothing above condemned the interface: an error and "nothing to do" about
    // the same value would contradict each other.
    if !wrong_route && first.if_type == crate::probe::IfType::Infiniband && first.kind != crate::probe::IfKind::Physical
    {
        let kind = format!("{:?}", first.kind).to_lowercase();
        out.push(f(Severity::Info, s, format!("{} is an IPoIB {kind} interface: fine for bootstrap if every node reaches its subnet; NCCL's data still goes over NCCL_IB_HCA, not this interface", first.name), "nothing to do if it routes between all nodes"));
    }
}

/// The bootstrap interface NCCL_SOCKET_IFNAME takes must be up and have a routable address.
fn interface_state(first: &crate::probe::NetIf, out: &mut Vec<Finding>) {
    let s = "NCCL_SOCKET_IFNAME";
    if !first.is_running() {
        out.push(f(
            Severity::Error,
            s,
            format!("{} is not up (operstate {})", first.name, first.operstate.as_deref().unwrap_or("?")),
            "choose an interface that is up",
        ));
    } else if first.routable_addr(true).is_none() && first.routable_addr(false).is_none() {
        out.push(f(
            Severity::Error,
            s,
            format!("{} has no address that is not link-local", first.name),
            "choose an interface with an IPv4 address",
        ));
    }
}

/// The interface NCCL_SOCKET_IFNAME takes against ibwire's (the one that routes to the master):
/// whether it is the wrong route.
fn route_findings(plan: &Plan, v: &Var, first: &crate::probe::NetIf, out: &mut Vec<Finding>) -> bool {
    let s = "NCCL_SOCKET_IFNAME";
    let mut wrong_route = false;
    if let Some(b) = &plan.bootstrap_if {
        if &first.name != b {
            wrong_route = plan.bootstrap_from_master;
            let why = plan.bootstrap_reason.clone().unwrap_or_default();
            let fix = format!("set NCCL_SOCKET_IFNAME=={b}, or unset it and use `ibwire env`");
            if plan.bootstrap_from_master {
                out.push(f(
                    Severity::Error,
                    s,
                    format!(
                        "{s}={} uses {}, which does not carry the route to the master; ibwire uses {b}: {why}",
                        v.value, first.name
                    ),
                    &fix,
                ));
            } else {
                out.push(f(Severity::Warning, s, format!("{s}={} uses {}; without a master address ibwire would use {b} ({why}); it must reach every other node", v.value, first.name), &fix));
            }
        }
    }
    wrong_route
}

/// GPUDirect RDMA's two registration paths (nvidia_peermem, DMA-BUF), the IOMMU, and ACS on
/// the GPU↔HCA paths it uses.
/// GPU memory registration for RDMA: nvidia_peermem, or DMA-BUF in its place.
fn lint_registration(node: &Node, out: &mut Vec<Finding>) {
    use super::gpudirect::{dmabuf, DmaBuf};
    if node.host.peermem.is_none() {
        match dmabuf(&node.host) {
            DmaBuf::Possible => out.push(f(
                Severity::Info,
                "GPUDirect RDMA",
                format!(
                    "nvidia_peermem is not loaded, and GPU memory can be registered through DMA-BUF instead (kernel {}, open NVIDIA kernel module): NCCL ≥ 2.19 with rdma-core ≥ 34 does so and logs \"DMA-BUF is available on GPU device N\"",
                    node.host.kernel.as_deref().unwrap_or("?")
                ),
                "confirm on a multi-node run: `ibwire verify` shows GPUDirect RDMA in use from channels `via NET/IB/…/GDRDMA`; with an older NCCL or rdma-core: modprobe nvidia_peermem",
            )),
            DmaBuf::Missing(why) => out.push(f(
                Severity::Warning,
                "GPUDirect RDMA",
                format!("no GPUDirect RDMA path: nvidia_peermem is not loaded and DMA-BUF is not possible ({why}); inter-node data is staged through host memory"),
                "modprobe nvidia_peermem (or: kernel ≥ 5.12 with the open NVIDIA kernel module, nvidia-open, for DMA-BUF)",
            )),
            DmaBuf::Unknown(why) => out.push(f(
                Severity::Warning,
                "GPUDirect RDMA",
                format!("nvidia_peermem is not loaded, and whether DMA-BUF can replace it is unknown ({why}); without either, inter-node data is staged through host memory"),
                "modprobe nvidia_peermem, or check for kernel ≥ 5.12 and the open NVIDIA kernel module; `ibwire verify` shows what NCCL used",
            )),
        }
    }
}

fn lint_gpudirect(node: &Node, plan: &Plan, out: &mut Vec<Finding>) {
    use super::gpudirect::{acs, iommu};
    lint_registration(node, out);
    let a = acs(node, plan);
    for r in &a.redirecting {
        let shown: Vec<&str> = r.pairs.iter().take(4).map(String::as_str).collect();
        let more = if r.pairs.len() > 4 { format!(" and {} more", r.pairs.len() - 4) } else { String::new() };
        out.push(f(
            Severity::Error,
            &format!("ACS {}", r.bridge),
            format!(
                "PCIe ACS redirects peer-to-peer at bridge {} (ACS control 0x{:04x}) between {}{more}: GPUDirect RDMA traffic goes up through the root complex (slower), and with an IOMMU translating DMA it fails — NCCL then reports \"IB completion error 4 … vendor err 81\" or hangs",
                r.bridge,
                r.ctrl,
                shown.join(", ")
            ),
            &format!(
                "setpci -s {} ECAP_ACS+0x6.w=0000 as root on each such bridge (lasts until reboot), or disable ACS in the BIOS (\"PCIe ACS\"); keep it where VMs get devices passed through",
                r.bridge
            ),
        ));
    }
    if a.redirecting.is_empty() && !a.unknown.is_empty() && a.pairs > 0 {
        out.push(f(
            Severity::Info,
            "ACS",
            format!(
                "ACS state of {} PCIe bridge(s) between GPUs and HCAs is unknown: their configuration space past 64 bytes is readable by root only",
                a.unknown.len()
            ),
            "read them as root: `ibwire doctor` as root on the node, or a tree that `ibwire probe --capture` wrote as root",
        ));
    }
    if iommu(&node.host) == Some("translating") && a.pairs > 0 {
        out.push(f(
            Severity::Warning,
            "IOMMU",
            format!(
                "the IOMMU translates DMA ({} groups, not in passthrough): GPUDirect RDMA between a GPU and an HCA needs ACS off on their switch and ATS, or it fails or slows down",
                node.host.iommu_groups.unwrap_or(0)
            ),
            "boot with iommu=pt (intel_iommu=on iommu=pt, or amd_iommu=on iommu=pt), or turn the IOMMU off in the BIOS where no VM needs it",
        ));
    }
}

fn lint_node(node: &Node, plan: &Plan, out: &mut Vec<Finding>) {
    if node.rdma.is_empty() {
        return;
    }
    lint_rdma_userspace(node, plan, out);
    if let (Some(false), Some(b)) = (node.host.memlock_unlimited, node.host.memlock_bytes) {
        if !plan.hcas.is_empty() {
            out.push(f(
                Severity::Warning,
                "memlock",
                format!("memlock limit is {} KiB: ibv_reg_mr may fail when NCCL registers its buffers", b / 1024),
                "ulimit -l unlimited (in Slurm: PropagateResourceLimits, or a limits.d entry)",
            ));
        }
    }
    if !node.gpus.is_empty() && !plan.hcas.is_empty() {
        lint_gpudirect(node, plan, out);
    }
    lint_links(node, plan, out);
}

/// What NCCL needs to open the HCAs: the device nodes, rdma_cm, libibverbs and its provider.
fn lint_rdma_userspace(node: &Node, plan: &Plan, out: &mut Vec<Finding>) {
    let inside = node.host.in_container;
    let missing = plan.missing_device_nodes(node);
    if !missing.is_empty() {
        let msg = if inside {
            format!("/dev/infiniband is missing inside this container for {}: NCCL will say 'NET/IB : No device found' and silently use TCP sockets", missing.join(", "))
        } else {
            format!("no /dev/infiniband node for {}", missing.join(", "))
        };
        let fix = if inside {
            "start the container with /dev/infiniband (ibwire's enroot hook, or enroot start -m /dev/infiniband)"
        } else {
            "modprobe ib_uverbs (rdma-core's udev rules create the nodes)"
        };
        out.push(f(Severity::Error, "/dev/infiniband", msg, fix));
    }
    if !plan.hcas.is_empty() && !node.host.dev_infiniband.iter().any(|n| n == "rdma_cm") {
        out.push(f(
            Severity::Warning,
            "/dev/infiniband/rdma_cm",
            "rdma_cm is missing (NCCL does not need it; some RDMA tools and MPI do)".into(),
            "modprobe rdma_ucm",
        ));
    }
    if !plan.hcas.is_empty() && node.host.libibverbs.is_none() && !node.host.libs_checked {
        out.push(f(
            Severity::Info,
            "libibverbs",
            "not checked: this tree holds no library directory (usr/lib, lib64, …)".into(),
            "check on the node itself, or in the image, that rdma-core (libibverbs1) is installed",
        ));
    } else if !plan.hcas.is_empty() && node.host.libibverbs.is_none() {
        out.push(f(
            Severity::Error,
            "libibverbs",
            "libibverbs.so.1 not found: NCCL cannot load its IB transport and uses TCP sockets".into(),
            "install rdma-core (libibverbs1 ibverbs-providers) in the image",
        ));
    } else if !plan.hcas.is_empty()
        && node.host.mlx5_provider.is_none()
        && node.rdma.iter().any(|d| d.name.starts_with("mlx5"))
    {
        out.push(f(
            Severity::Warning,
            "libmlx5",
            "no mlx5 verbs provider found (libmlx5-rdmav*.so): the HCAs will not open".into(),
            "install ibverbs-providers (or MOFED) in the image",
        ));
    }
}

/// The links: GPUs without a near HCA, slower or narrower HCA and GPU links, unhealthy ports.
fn lint_links(node: &Node, plan: &Plan, out: &mut Vec<Finding>) {
    for g in &node.gpus {
        let near = plan
            .hcas
            .iter()
            .filter_map(|(d, _)| node.rdma_device(d))
            .filter_map(|d| d.pci.as_ref())
            .any(|p| classify(&g.pci, p) <= PathType::PXB);
        if !plan.hcas.is_empty() && !near {
            out.push(f(Severity::Warning, &format!("GPU {}", g.pci.bdf), format!("GPU {} has no healthy HCA at PIX/PXB distance: no GPUDirect RDMA for it under NCCL's default NCCL_NET_GDR_LEVEL", g.pci.bdf), "see `ibwire topo`; this is the board's layout, not a setting"));
        }
    }
    let rates: Vec<(String, f64)> = plan
        .hcas
        .iter()
        .filter_map(|(d, p)| Some((d.clone(), node.rdma_device(d)?.ports.iter().find(|x| x.port == *p)?.rate_gbps?)))
        .collect();
    if let Some(max) = rates.iter().map(|r| r.1).reduce(f64::max) {
        for (d, r) in rates.iter().filter(|r| r.1 < max) {
            out.push(f(Severity::Warning, d, format!("{d} links at {r} Gb/s while the others reach {max} Gb/s: one slow HCA bounds every ring through it"), "check the cable and switch port (ibstat, mlxlink)"));
        }
    }
    lint_pcie_links(node, plan, out);
    // Port health from the same rule that builds NCCL_IB_HCA (not from its excluded-list wording):
    // policy exclusions (VFs, bond members, the management NIC) are not faults of the node.
    for d in &node.rdma {
        for p in &d.ports {
            if let Some(problem) = super::hca::port_problem(node, d, p) {
                out.push(f(
                    Severity::Warning,
                    &d.name,
                    format!("{} port {}: {problem}", d.name, p.port),
                    "left out of NCCL_IB_HCA by ibwire; fix the port or keep it out",
                ));
            }
        }
    }
}

/// PCIe links of the healthy HCAs (width and speed) and the GPUs (width: they lower their
/// speed when idle) that run below what they can.
fn lint_pcie_links(node: &Node, plan: &Plan, out: &mut Vec<Finding>) {
    for d in node.rdma.iter().filter(|d| plan.hcas.iter().any(|(n, _)| n == &d.name)) {
        if let Some(p) = &d.pci {
            if let Some((c, m)) = p.link.narrower() {
                out.push(f(
                    Severity::Warning,
                    &d.name,
                    format!("{} PCIe link runs at x{c} of x{m}", d.name),
                    "reseat the card or check the slot",
                ));
            }
            if let (Some(c), Some(m)) = (&p.link.current_speed, &p.link.max_speed) {
                if c != m {
                    out.push(f(
                        Severity::Warning,
                        &d.name,
                        format!("{} PCIe link runs at {c} of {m}", d.name),
                        "check the slot and BIOS PCIe settings",
                    ));
                }
            }
        }
    }
    for g in &node.gpus {
        if let Some((c, m)) = g.pci.link.narrower() {
            out.push(f(
                Severity::Warning,
                &format!("GPU {}", g.pci.bdf),
                format!("GPU {} PCIe link runs at x{c} of x{m}", g.pci.bdf),
                "reseat the GPU or check the riser",
            ));
        }
    }
}
