//! Decisions: pure functions from the node snapshot and the user's intent to a `Plan`.
//!
//! No I/O here (no files, no DNS, no environment): everything arrives in `Intent`, so every rule
//! is testable from snapshots and the same rules serve env, hook, launch, doctor and verify.

pub mod bootstrap_if;
pub mod cdi;
pub mod doctor;
pub mod fleet;
pub mod gpudirect;
pub mod gpus;
pub mod hca;
pub mod health;
pub mod hook;
pub mod launch;
pub mod netguard;
pub mod topo;
pub mod verify;
pub mod visible;

use crate::config::{Config, EmptyPolicy};
use crate::probe::Node;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::IpAddr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// The variable or device concerned.
    pub subject: String,
    pub message: String,
    pub fix: Option<String>,
    /// What a decision elsewhere asks of this finding (launch's preflight), never its words.
    #[serde(skip)]
    pub kind: Option<FindingKind>,
}

/// Findings that other steps act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    /// RDMA devices are here but no port of them is healthy: multi-node traffic would be sockets.
    NoHealthyHca,
}

impl Finding {
    pub fn new(severity: Severity, subject: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding { severity, subject: subject.into(), message: message.into(), fix: None, kind: None }
    }
    /// "subject: message" for people, the subject once: a message that already starts with its
    /// subject ("mlx5_bond_0 port 1: …" about mlx5_bond_0) is shown as it is.
    pub fn headline(&self) -> String {
        match self.message.strip_prefix(self.subject.as_str()) {
            Some(rest) if rest.starts_with([' ', ':']) => self.message.clone(),
            _ => format!("{}: {}", self.subject, self.message),
        }
    }
    pub fn kind(mut self, kind: FindingKind) -> Finding {
        self.kind = Some(kind);
        self
    }
    pub fn fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = Some(fix.into());
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Decided by ibwire from the node.
    Decided,
    /// Already set by the user (environment); the user wins.
    User,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    pub name: String,
    pub value: String,
    pub reason: String,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exclusion {
    pub device: String,
    pub port: Option<u32>,
    /// What decisions ask (the hook, launch, the renderers); `reason` is for people.
    pub kind: ExclusionKind,
    pub reason: String,
}

/// Why a device or port is left out of NCCL_IB_HCA. The port faults are `hca::port_fault`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExclusionKind {
    NotIncluded,
    ConfigExcluded,
    UnsafeName,
    VirtualFunction,
    BondMember,
    BootstrapCarrier,
    OtherPartition,
    OtherFabric,
    TooMany,
    PortNotActive,
    PhysNotLinkUp,
    PortStateUnknown,
    LidZero,
    LidNotUnicast,
    LidUnreadable,
    NoSubnetManager,
    SmLidUnreadable,
    RoceNoAddress,
    LinkLayerUnknown,
}

/// The master (rendezvous) address: what the user gave and what it resolved to.
#[derive(Debug, Clone, PartialEq)]
pub struct Master {
    pub name: String,
    pub ip: IpAddr,
}

/// What the user asked for, already gathered from flags, config, environment and DNS.
#[derive(Debug, Clone, Default)]
pub struct Intent {
    pub master: Option<Master>,
    pub config: Config,
    /// The job's environment (only the variables ibwire reads are consulted).
    pub env: BTreeMap<String, String>,
}

impl Intent {
    /// A variable the job set itself (empty counts as unset, as NCCL reads it).
    pub fn user_value(&self, k: &str) -> Option<String> {
        self.env.get(k).filter(|v| !v.is_empty()).cloned()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub settings: Vec<Setting>,
    pub excluded: Vec<Exclusion>,
    pub findings: Vec<Finding>,
    /// The healthy HCA ports chosen, `(device, port)`, in NCCL_IB_HCA order.
    pub hcas: Vec<(String, u32)>,
    pub bootstrap_if: Option<String>,
    /// The rule and evidence behind bootstrap_if, and whether a master address decided it.
    pub bootstrap_reason: Option<String>,
    pub bootstrap_from_master: bool,
    /// Number of processes torchrun should start on this node.
    pub nproc_per_node: usize,
}

impl Plan {
    pub fn get(&self, name: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.name == name)
    }
    /// Healthy HCAs whose /dev/infiniband/uverbsN node is absent, as `mlx5_0 (uverbs0)`: the
    /// silent socket fallback of our story, seen from the node.
    pub fn missing_device_nodes(&self, node: &Node) -> Vec<String> {
        missing_device_nodes(self.hcas.iter().filter_map(|(d, _)| node.rdma_device(d)))
    }

    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// Of `devs`, those whose /dev/infiniband/uverbsN node is absent, as `mlx5_0 (uverbs0)`, each once.
pub fn missing_device_nodes<'a>(devs: impl Iterator<Item = &'a crate::probe::RdmaDevice>) -> Vec<String> {
    let mut v: Vec<String> = devs
        .filter(|d| !d.uverbs_node_present)
        .map(|d| format!("{} ({})", d.name, d.uverbs.as_deref().unwrap_or("no uverbs")))
        .collect();
    v.dedup();
    v
}

/// Decide every setting for this node.
pub fn decide(node: &Node, intent: &Intent) -> Plan {
    let mut settings = Vec::new();
    let mut findings = Vec::new();

    // Bootstrap interface first: the HCA rules exclude the NIC that carries it.
    let one_node = ["SLURM_JOB_NUM_NODES", "SLURM_NNODES"].iter().any(|k| intent.env.contains_key(*k))
        && crate::slurm::num_nodes(|k| intent.env.get(k).cloned()) == 1;
    let boot =
        bootstrap_if::choose(node, intent.master.as_ref(), intent.config.bootstrap_interface.as_deref(), one_node);
    let boot_if = match &boot {
        Ok(b) => {
            findings.extend(b.warning.clone());
            Some(b.iface.clone())
        }
        Err(f) => {
            findings.push(f.clone());
            None
        }
    };

    let hca = hca::select(
        node,
        &hca::Policy {
            include: &intent.config.hca.include,
            exclude: &intent.config.hca.exclude,
            bootstrap_if: boot_if.as_deref(),
        },
    );
    findings.extend(hca.findings.iter().cloned());
    hca_setting(node, intent, &hca, &mut settings, &mut findings);
    socket_settings(intent, &boot, &mut settings);

    let g = gpus::choose(node, &intent.env);
    gpu_settings(node, intent, &g, &mut settings, &mut findings);

    Plan {
        settings,
        excluded: hca.excluded,
        findings,
        hcas: hca.selected,
        bootstrap_reason: boot.as_ref().ok().map(|b| b.reason.clone()),
        bootstrap_from_master: intent.master.is_some() && boot.is_ok(),
        bootstrap_if: boot.ok().map(|b| b.iface),
        nproc_per_node: g.count.max(1),
    }
}

/// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER for the GPUs, and the job's own RAS address.
fn gpu_settings(
    node: &Node,
    intent: &Intent,
    g: &gpus::Choice,
    settings: &mut Vec<Setting>,
    findings: &mut Vec<Finding>,
) {
    let user = |k: &str| intent.user_value(k);
    findings.extend(g.findings.iter().cloned());
    if let Some(v) = &g.visible {
        let source = if g.from_user { Source::User } else { Source::Decided };
        settings.push(Setting {
            name: "CUDA_VISIBLE_DEVICES".into(),
            value: v.clone(),
            reason: g.reason.clone(),
            source,
        });
    }
    if !node.gpus.is_empty() {
        match user("CUDA_DEVICE_ORDER") {
            Some(v) if v != "PCI_BUS_ID" => findings.push(
                Finding::new(
                    Severity::Warning,
                    "CUDA_DEVICE_ORDER",
                    format!("CUDA_DEVICE_ORDER={v}: CUDA ordinals will not follow PCI bus order, so indices differ from nvidia-smi's"),
                )
                .fix("unset CUDA_DEVICE_ORDER or set it to PCI_BUS_ID"),
            ),
            _ => settings.push(Setting {
                name: "CUDA_DEVICE_ORDER".into(),
                value: "PCI_BUS_ID".into(),
                reason: "GPU index i is the i-th GPU by PCI bus id, as in nvidia-smi and sysfs".into(),
                source: Source::Decided,
            }),
        }
    }

    // A job's own RAS address (slurm::ras_port_for_job says why); the hook cannot know whether
    // other jobs share the node now or will, and a per-job loopback port costs nothing.
    if !node.gpus.is_empty() && user("NCCL_RAS_ADDR").is_none() {
        if let Some(id) = crate::slurm::job_id(&intent.env) {
            settings.push(Setting {
                name: "NCCL_RAS_ADDR".into(),
                value: format!("127.0.0.1:{}", crate::slurm::ras_port_for_job(id)),
                reason: format!(
                    "NCCL's RAS listener per job (job {id}): the default localhost:28028 is shared by every job on the node; `ncclras -p {}` queries this one",
                    crate::slurm::ras_port_for_job(id)
                ),
                source: Source::Decided,
            });
        }
    }
}

/// NCCL_IB_HCA: the user's value (with what ibwire would choose), the decided one, or a finding
/// saying why there is none.
fn hca_setting(
    node: &Node,
    intent: &Intent,
    hca: &hca::Decision,
    settings: &mut Vec<Setting>,
    findings: &mut Vec<Finding>,
) {
    let user = |k: &str| intent.user_value(k);
    match (user("NCCL_IB_HCA"), &hca.value) {
        (Some(v), decided) => settings.push(Setting {
            name: "NCCL_IB_HCA".into(),
            reason: format!(
                "set by the user; ibwire would choose {}",
                decided.as_deref().unwrap_or("no NCCL_IB_HCA (no healthy HCA)")
            ),
            value: v,
            source: Source::User,
        }),
        (None, Some(v)) => settings.push(Setting {
            name: "NCCL_IB_HCA".into(),
            value: v.clone(),
            reason: hca.reason.clone(),
            source: Source::Decided,
        }),
        (None, None) => {
            let sev =
                if intent.config.hca.on_empty == Some(EmptyPolicy::Fail) { Severity::Error } else { Severity::Warning };
            let msg = if node.rdma.is_empty() {
                "no RDMA device on this node: NCCL will use TCP sockets between nodes".to_string()
            } else {
                format!("no healthy HCA port ({}): NCCL will use TCP sockets between nodes", hca.reason)
            };
            let fix = if node.rdma.is_empty() {
                "run multi-node jobs on nodes with InfiniBand/RoCE HCAs; for a single-node or test job sockets are fine"
            } else if hca.excluded.is_empty() {
                "the RDMA devices here show no port NCCL could use: check `ibstat` and the driver; for a single-node or test job sockets are fine"
            } else {
                "fix the ports listed as excluded (`ibwire env --explain` gives each reason), or accept socket speed for single-node or test jobs"
            };
            let f = Finding::new(sev, "NCCL_IB_HCA", msg).fix(fix);
            findings.push(if node.rdma.is_empty() { f } else { f.kind(FindingKind::NoHealthyHca) });
        }
    }
}

/// NCCL_SOCKET_IFNAME (+ NCCL_SOCKET_FAMILY) and GLOO_SOCKET_IFNAME from the bootstrap choice,
/// unless the user set them.
fn socket_settings(intent: &Intent, boot: &Result<bootstrap_if::Choice, Finding>, settings: &mut Vec<Setting>) {
    let user = |k: &str| intent.user_value(k);
    match (boot, user("NCCL_SOCKET_IFNAME")) {
        (_, Some(v)) => settings.push(Setting {
            name: "NCCL_SOCKET_IFNAME".into(),
            reason: format!(
                "set by the user; ibwire would choose {}",
                boot.as_ref().map(|b| format!("={}", b.iface)).unwrap_or_else(|_| "nothing (see findings)".into())
            ),
            value: v,
            source: Source::User,
        }),
        (Ok(b), None) => {
            settings.push(Setting {
                name: "NCCL_SOCKET_IFNAME".into(),
                value: format!("={}", b.iface),
                reason: b.reason.clone(),
                source: Source::Decided,
            });
            if b.addr.addr().is_ipv4() && user("NCCL_SOCKET_FAMILY").is_none() {
                settings.push(Setting {
                    name: "NCCL_SOCKET_FAMILY".into(),
                    value: "AF_INET".into(),
                    reason: format!("{} is used through its IPv4 address {}", b.iface, b.addr.addr()),
                    source: Source::Decided,
                });
            }
        }
        (Err(_), None) => {}
    }
    match (boot, user("GLOO_SOCKET_IFNAME")) {
        (_, Some(v)) => settings.push(Setting {
            name: "GLOO_SOCKET_IFNAME".into(),
            value: v,
            reason: "set by the user".into(),
            source: Source::User,
        }),
        (Ok(b), None) => settings.push(Setting {
            name: "GLOO_SOCKET_IFNAME".into(),
            value: b.iface.clone(),
            reason: "torch's gloo and c10d bind to this interface; same as NCCL's bootstrap".into(),
            source: Source::Decided,
        }),
        _ => {}
    }
}

/// A name NCCL's list syntax can carry exactly: no separators, no filter characters, nothing
/// a shell or an environ file would mangle.
pub fn nccl_list_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() < 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'))
}
