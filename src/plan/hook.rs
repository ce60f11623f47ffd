//! What the enroot hook exposes and injects, decided purely from the plan, the device
//! selection and three facts the hook gathers (is /dev restricted, may mad nodes be bound, which
//! variables did the user already set). `cmd::hook` renders this as fstab and environ lines.

use super::visible::{self, Selection};
use super::{Plan, Source};
use crate::probe::Node;

/// Variables the container needs besides NCCL_IB_HCA (CUDA_VISIBLE_DEVICES belongs to the GPU
/// hooks and Slurm, not to us).
const COMPANIONS: [&str; 5] =
    ["NCCL_SOCKET_IFNAME", "NCCL_SOCKET_FAMILY", "GLOO_SOCKET_IFNAME", "CUDA_DEVICE_ORDER", "NCCL_RAS_ADDR"];

/// What stops the hook from doing its job: each is a warning, and in strict mode a failed start
/// (SECURITY.md). Everything else the hook says is information.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// The node has RDMA devices but no healthy port.
    NoHealthyPort,
    /// The device selection exposes no healthy port although the node has some.
    SelectionEmpty,
    /// A configured bootstrap interface that does not exist, no route to the master.
    Bootstrap,
    /// The job's own NCCL_IB_HCA takes a port ibwire excluded (the LID-0 bond…).
    JobHcaExcluded,
    /// The image cannot use verbs (no libibverbs.so.1, or no provider for the HCA's driver).
    ImageNoVerbs,
    /// The administrator's configuration could not be read.
    Config,
    /// The hook itself failed (a write, a panic).
    Internal,
}

impl Problem {
    /// Does this problem break a job of `nnodes` nodes (and so fail its start in strict mode)?
    /// What only matters for traffic between nodes — the HCAs, their selection, the bootstrap
    /// interface, the job's NCCL_IB_HCA, verbs in the image — breaks a multi-node job only: a
    /// one-node job needs none of it (docs/admin.md, "What strict mode refuses"). The
    /// administrator's configuration unread, or the hook failing, breaks any job: its settings
    /// are what strict mode promises.
    pub fn breaks(self, nnodes: usize) -> bool {
        match self {
            Problem::Config | Problem::Internal => true,
            Problem::NoHealthyPort
            | Problem::SelectionEmpty
            | Problem::Bootstrap
            | Problem::JobHcaExcluded
            | Problem::ImageNoVerbs => nnodes > 1,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// Host device nodes to bind at the same path: `/dev/infiniband/uverbs3`, …
    pub binds: Vec<String>,
    /// Variables to append to the container's environment.
    pub env: Vec<(String, String)>,
    pub devices: Vec<String>,
    pub warnings: Vec<String>,
    pub problems: Vec<(Problem, String)>,
}

/// The rdma-core provider a device's name implies (`libmlx5` for `mlx5_*`, …): what an image
/// needs beside libibverbs to open it. None for names that do not say (udev-renamed devices).
pub fn verbs_provider(dev: &str) -> Option<&'static str> {
    ["mlx5", "mlx4", "irdma", "bnxt_re", "efa", "hns"].into_iter().find(|p| dev.starts_with(p))
}

/// A port the job's own NCCL_IB_HCA lets NCCL take although ibwire excluded it.
pub struct Taken {
    /// `mlx5_bond_0:1`
    pub port: String,
    /// Why ibwire excluded it; None when it was simply not selected.
    pub kind: Option<super::ExclusionKind>,
    pub reason: String,
}

impl std::fmt::Display for Taken {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{} ({})", self.port, self.reason)
    }
}

/// The ports a job's own `NCCL_IB_HCA` would let NCCL take that ibwire excluded, with why:
/// `mlx5` is a prefix that takes `mlx5_bond_0`, LID 0, and NCCL dies in ibv_modify_qp with
/// EINVAL. Only ports NCCL can see count (active ones; NCCL skips the rest itself).
pub fn job_hca_takes_excluded(node: &Node, plan: &Plan, value: &str) -> Vec<Taken> {
    let (f, _) = crate::nccl::filter::parse(value.trim());
    let mut out = Vec::new();
    for d in &node.rdma {
        for p in &d.ports {
            if plan.hcas.iter().any(|(n, q)| n == &d.name && *q == p.port) || p.state != Some(4) {
                continue;
            }
            if f.selects(&d.name, p.port) {
                let why = plan.excluded.iter().find(|e| e.device == d.name && e.port.is_none_or(|q| q == p.port));
                out.push(Taken {
                    port: format!("{}:{}", d.name, p.port),
                    kind: why.map(|e| e.kind),
                    reason: why.map(|e| e.reason.clone()).unwrap_or_else(|| "not in ibwire's healthy set".into()),
                });
            }
        }
    }
    out
}

/// The job's own NCCL_IB_HCA, kept (the user set it), when it lets NCCL take ports ibwire
/// excluded: which, and what NCCL will do (LID 0: EINVAL in ibv_modify_qp).
pub fn job_hca_problem(node: &Node, plan: &Plan, value: &str) -> Option<String> {
    if value.trim().is_empty() {
        return None;
    }
    let bad = job_hca_takes_excluded(node, plan, value);
    if bad.is_empty() {
        return None;
    }
    let lid0 = bad.iter().any(|b| b.kind == Some(super::ExclusionKind::LidZero));
    Some(format!(
        "the job's NCCL_IB_HCA={value} takes {} (kept, the job set it){}; ibwire's set: NCCL_IB_HCA=={}",
        bad.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", "),
        if lid0 { ": NCCL will fail in ibv_modify_qp with EINVAL (Invalid argument) when it connects" } else { "" },
        plan.hcas.iter().map(|(d, q)| format!("{d}:{q}")).collect::<Vec<_>>().join(",")
    ))
}

/// Whether the container gets a healthy HCA (`Usable`), had healthy ones taken away by its
/// selection (`Emptied`: `none`/`void` is the user's choice, not that), or there were none.
pub fn exposure(plan: &Plan, sel: &Selection, restricted: bool, value: &str) -> super::netguard::Exposure {
    use super::netguard::Exposure;
    let exposed = plan.hcas.iter().any(|(dev, _)| sel.devices.contains(dev))
        || (sel.void && !restricted && !plan.hcas.is_empty());
    let explicit_none = matches!(value.trim().to_ascii_lowercase().as_str(), "none" | "void");
    if exposed {
        Exposure::Usable
    } else if !plan.hcas.is_empty() && !explicit_none {
        Exposure::Emptied
    } else {
        Exposure::Nothing
    }
}

/// Which variable selects the devices: IBWIRE_VISIBLE_DEVICES, then MELLANOX_VISIBLE_DEVICES (read
/// as the stock hook reads it), then the configured default, then `auto`. Returns the variable's
/// name, its value, and whether it has the stock hook's index-only meaning.
pub fn visibility(lookup: impl Fn(&str) -> Option<String>, configured: Option<&str>) -> (&'static str, String, bool) {
    if let Some(v) = lookup("IBWIRE_VISIBLE_DEVICES") {
        ("IBWIRE_VISIBLE_DEVICES", v, false)
    } else if let Some(v) = lookup("MELLANOX_VISIBLE_DEVICES") {
        ("MELLANOX_VISIBLE_DEVICES", v, true)
    } else {
        ("hook.visible_devices", configured.unwrap_or("auto").to_string(), false)
    }
}

fn is_node_name(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).map(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())).unwrap_or(false)
}

pub fn decide(
    node: &Node,
    plan: &Plan,
    sel: &Selection,
    restricted: bool,
    mad_permitted: bool,
    user_set: impl Fn(&str) -> bool,
) -> Decision {
    let mut d = Decision { devices: sel.devices.clone(), ..Default::default() };
    if !sel.unknown.is_empty() {
        let more = if sel.unknown_more > 0 { format!(" and {} more", sel.unknown_more) } else { String::new() };
        d.warnings.push(format!(
            "{}: no such device here: {}{more} (known: {})",
            sel.var,
            sel.unknown.iter().map(|u| format!("{u:?}")).collect::<Vec<_>>().join(", "),
            visible::pci_order(node).iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    // Device nodes only into a /dev of the container's own: under the host's /dev they are
    // already there, and x-create would create files on the host.
    if restricted {
        bind_devices(node, sel, mad_permitted, &mut d);
    }
    // Environment: only what the container needs, only where the user has not spoken.
    let exposed: Vec<String> = plan
        .hcas
        .iter()
        .filter(|(dev, _)| sel.devices.contains(dev))
        .map(|(dev, port)| format!("{dev}:{port}"))
        .collect();
    let mut vars: Vec<(String, String)> = Vec::new();
    // What NCCL inside can open: with the host's /dev every device node is there (binds cannot
    // narrow anything), in a restricted /dev only what was bound. If that includes devices no
    // healthy port of which is exposed (a LID-0 bond, an unselected HCA), only the environment
    // can keep NCCL off them: NCCL_IB_HCA when some healthy port is exposed, else
    // NCCL_IB_DISABLE=1 (sockets, which is what an empty selection means).
    let visible_rdma = if restricted { !d.binds.is_empty() } else { !node.rdma.is_empty() };
    ib_vars(plan, sel, restricted, visible_rdma, &exposed, &mut d, &mut vars);
    vars.extend(
        plan.settings
            .iter()
            .filter(|s| s.source == Source::Decided && COMPANIONS.contains(&s.name.as_str()))
            .map(|s| (s.name.clone(), s.value.clone())),
    );
    d.env = vars.into_iter().filter(|(k, _)| !user_set(k)).collect();
    d
}

/// The device nodes of the selected devices (and their MAD nodes when permitted, rdma_cm) to
/// bind into a /dev of the container's own; a device without its node is said, not bound.
fn bind_devices(node: &Node, sel: &Selection, mad_permitted: bool, d: &mut Decision) {
    for name in &sel.devices {
        let Some(dev) = node.rdma_device(name) else { continue };
        let Some(u) = dev.uverbs.as_deref().filter(|u| is_node_name(u, "uverbs")) else {
            d.warnings.push(format!("{name} has no uverbs device; not exposed"));
            continue;
        };
        if !dev.uverbs_node_present {
            d.warnings.push(format!("/dev/infiniband/{u} ({name}) is missing on the host; not exposed"));
            continue;
        }
        d.binds.push(format!("/dev/infiniband/{u}"));
        if mad_permitted {
            for m in dev.mad.iter().filter(|m| is_node_name(m, "umad") || is_node_name(m, "issm")) {
                if node.host.dev_infiniband.contains(m) {
                    d.binds.push(format!("/dev/infiniband/{m}"));
                }
            }
        }
    }
    if !sel.devices.is_empty() && node.host.dev_infiniband.iter().any(|n| n == "rdma_cm") {
        d.binds.push("/dev/infiniband/rdma_cm".into());
    }
}

/// NCCL_IB_HCA, or NCCL_IB_DISABLE=1 where the container would see RDMA devices no healthy
/// port of which is exposed (a LID-0 bond, an unselected HCA): what keeps NCCL off them.
fn ib_vars(
    plan: &Plan,
    sel: &Selection,
    restricted: bool,
    visible_rdma: bool,
    exposed: &[String],
    d: &mut Decision,
    vars: &mut Vec<(String, String)>,
) {
    let disable = |d: &mut Decision, vars: &mut Vec<(String, String)>, why: String| {
        vars.push(("NCCL_IB_DISABLE".into(), "1".into()));
        d.problems.push((Problem::NoHealthyPort, why));
    };
    if sel.void {
        // The stock hook's "leave everything alone" for devices. With the host's /dev the
        // container sees every HCA, the LID-0 bond included: NCCL_IB_HCA still keeps NCCL on the
        // healthy ports (unless the job set its own).
        if restricted {
            d.warnings.push(format!("{}: no device exposed; NCCL will use TCP sockets", sel.source));
        } else if !plan.hcas.is_empty() {
            let all: Vec<String> = plan.hcas.iter().map(|(dev, port)| format!("{dev}:{port}")).collect();
            vars.push(("NCCL_IB_HCA".into(), format!("={}", all.join(","))));
        }
    } else if !exposed.is_empty() {
        vars.push(("NCCL_IB_HCA".into(), format!("={}", exposed.join(","))));
    } else if !plan.hcas.is_empty() {
        if visible_rdma {
            let what = if restricted { "the devices bound" } else { "every HCA, through the host's /dev" };
            let why = format!(
                "{}: no healthy HCA is selected, but the container sees {what}: NCCL_IB_DISABLE=1 keeps NCCL on TCP sockets instead of unhealthy or unselected HCAs",
                sel.source
            );
            vars.push(("NCCL_IB_DISABLE".into(), "1".into()));
            d.problems.push((Problem::SelectionEmpty, why));
        } else {
            d.problems.push((
                Problem::SelectionEmpty,
                format!("{}: no healthy HCA is exposed; NCCL will use TCP sockets", sel.source),
            ));
        }
    } else {
        let why: Vec<String> = plan.excluded.iter().take(3).map(|e| format!("{}: {}", e.device, e.reason)).collect();
        let why = format!("{}{}", why.join("; "), if plan.excluded.len() > 3 { "; …" } else { "" });
        if visible_rdma {
            disable(d, vars, format!(
                "no healthy HCA port on this node ({why}); the container still sees RDMA devices, so NCCL_IB_DISABLE=1 keeps NCCL on TCP sockets instead of failing on them"
            ));
        } else {
            d.problems.push((
                Problem::NoHealthyPort,
                format!("no healthy HCA port on this node ({why}); NCCL will use TCP sockets"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{self, Intent};

    #[test]
    fn binds_only_into_a_restricted_dev_and_leaves_user_keys_alone() {
        let t = tempfile::tempdir().unwrap();
        ibwire_fixture::story(t.path());
        let node = crate::probe::probe(&crate::probe::ProbeOptions::at(t.path()));
        let p = plan::decide(&node, &Intent::default());
        let healthy: Vec<String> = p.hcas.iter().map(|(d, _)| d.clone()).collect();
        let sel = visible::select(&node, "MELLANOX_VISIBLE_DEVICES", "3,0", true, &healthy);
        assert_eq!(sel.devices, ["mlx5_0", "mlx5_bond_0"], "PCI order, the bond at index 3");

        let d = decide(&node, &p, &sel, true, true, |k| k == "GLOO_SOCKET_IFNAME");
        assert_eq!(
            d.binds,
            [
                "/dev/infiniband/uverbs0",
                "/dev/infiniband/umad0",
                "/dev/infiniband/uverbs1",
                "/dev/infiniband/umad1",
                "/dev/infiniband/rdma_cm"
            ]
        );
        assert_eq!(
            d.env[0],
            ("NCCL_IB_HCA".to_string(), "=mlx5_0:1".to_string()),
            "the bond is exposed, never in NCCL"
        );
        assert!(!d.env.iter().any(|(k, _)| k == "GLOO_SOCKET_IFNAME"));

        let host_dev = decide(&node, &p, &sel, false, true, |_| false);
        assert!(host_dev.binds.is_empty());
        assert_eq!(host_dev.env.len(), 5);
    }

    #[test]
    fn visibility_precedence() {
        let env = |k: &str| match k {
            "MELLANOX_VISIBLE_DEVICES" => Some("0".to_string()),
            _ => None,
        };
        assert_eq!(visibility(env, Some("all")), ("MELLANOX_VISIBLE_DEVICES", "0".into(), true));
        assert_eq!(visibility(|_| None, Some("all")), ("hook.visible_devices", "all".into(), false));
        assert_eq!(visibility(|_| None, None).1, "auto");
    }
}
