//! A Container Device Interface (CDI) spec of the node's HCAs, for the runtimes that read one
//! (podman, Docker ≥ 25, containerd, CRI-O, Kubernetes device plugins/DRA): pure, from the
//! snapshot and the plan.
//!
//! Devices offered (kind `ibwire.dev/hca` unless told):
//! - one per healthy HCA, by its name: its uverbs node and `rdma_cm`;
//! - `healthy`: every healthy HCA's node, `rdma_cm`, and the `NCCL_IB_HCA` of exactly that set
//!   (the story's fix, as the hook sets it);
//! - `all`: every RDMA device with a uverbs node (as the stock hook's `all`), with the same
//!   `NCCL_IB_HCA` so NCCL still keeps off the unhealthy ones (`NCCL_IB_DISABLE=1` when none is
//!   healthy, as the hook does).
//!
//! An unhealthy HCA is not offered by name, and `healthy` is absent when nothing is healthy: a
//! container that asks for it does not start (fail-closed). Only node facts go into a spec,
//! nothing job-dependent (`NCCL_SOCKET_IFNAME`, `NCCL_NET` are `launch`'s). umad/issm nodes only
//! when `hook.mad` is configured. Device nodes carry type/major/minor when sysfs gave them (a
//! runtime then needs no node on the host); otherwise only the path, which the runtime stats.
//!
//! Version: the lowest `cdiVersion` the content needs. Everything here is in 0.3.0 (the earliest
//! the reference library accepts) except device names starting with a digit (0.5.0). Debian
//! 12's podman 4.3.1 ignores specs above 0.5.0.

use super::visible::pci_order;
use super::Plan;
use crate::probe::parse_dev_numbers;
use crate::probe::Node;
use serde::{Deserialize, Serialize};

pub const DEFAULT_KIND: &str = "ibwire.dev/hca";
/// Names ibwire gives to sets; an HCA of that name would shadow them.
const SET_NAMES: [&str; 2] = ["healthy", "all"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    #[serde(rename = "cdiVersion")]
    pub cdi_version: String,
    pub kind: String,
    pub devices: Vec<Device>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    #[serde(rename = "containerEdits")]
    pub container_edits: Edits,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Edits {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    #[serde(rename = "deviceNodes", default, skip_serializing_if = "Vec::is_empty")]
    pub device_nodes: Vec<DeviceNode>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceNode {
    pub path: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minor: Option<u32>,
    /// cgroup access: read and write, no mknod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<String>,
}

/// The spec, or why there is none; `notes` say what was left out and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub spec: Option<Spec>,
    pub notes: Vec<String>,
}

/// A CDI kind: `vendor.tld/class`, DNS-like prefix, a class of [A-Za-z0-9_.-] (spec grammar).
pub fn valid_kind(k: &str) -> bool {
    let Some((vendor, class)) = k.split_once('/') else { return false };
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    vendor.len() <= 253
        && vendor.contains('.')
        && vendor.split('.').all(label)
        && valid_name(class)
        && class.bytes().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// A CDI device name: starts and ends with [A-Za-z0-9], [A-Za-z0-9_.-] between.
pub fn valid_name(n: &str) -> bool {
    let b = n.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

fn node_of(path: String, dev: Option<&str>) -> DeviceNode {
    let nums = dev.and_then(parse_dev_numbers);
    DeviceNode {
        path,
        kind: nums.map(|_| "c".to_string()),
        major: nums.map(|n| n.0),
        minor: nums.map(|n| n.1),
        permissions: Some("rw".into()),
    }
}

fn is_node_name(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.len() <= 6 && n.bytes().all(|c| c.is_ascii_digit()))
}

pub fn build(node: &Node, plan: &Plan, kind: &str, mad: bool) -> Built {
    let mut notes = Vec::new();
    let rdma_cm = rdma_cm(node, &mut notes);
    let offered = offered(node, mad, &mut notes);
    let mut healthy_names: Vec<&str> = Vec::new();
    for (dev, _) in &plan.hcas {
        if !healthy_names.contains(&dev.as_str()) {
            healthy_names.push(dev);
        }
    }
    let with_cm = |mut nodes: Vec<DeviceNode>| {
        nodes.extend(rdma_cm.clone());
        nodes
    };
    let mut devices = Vec::new();
    let mut healthy_nodes = Vec::new();
    let mut healthy_ports = Vec::new();
    for (name, nodes) in &offered {
        if !healthy_names.contains(&name.as_str()) {
            notes.push(not_healthy(plan, name));
            continue;
        }
        healthy_nodes.extend(nodes.iter().cloned());
        healthy_ports.extend(plan.hcas.iter().filter(|(d, _)| d == name).map(|(d, p)| format!("{d}:{p}")));
        devices.push(Device {
            name: name.clone(),
            container_edits: Edits { env: Vec::new(), device_nodes: with_cm(nodes.clone()) },
        });
    }
    let hca_env = if healthy_ports.is_empty() {
        "NCCL_IB_DISABLE=1".to_string()
    } else {
        format!("NCCL_IB_HCA=={}", healthy_ports.join(","))
    };
    if healthy_nodes.is_empty() {
        notes.push("no healthy HCA: `healthy` is not offered (a container asking for it does not start)".into());
    } else {
        devices.push(Device {
            name: "healthy".into(),
            container_edits: Edits { env: vec![hca_env.clone()], device_nodes: with_cm(healthy_nodes) },
        });
    }
    if !offered.is_empty() {
        let all: Vec<DeviceNode> = offered.iter().flat_map(|(_, n)| n.iter().cloned()).collect();
        devices.push(Device {
            name: "all".into(),
            container_edits: Edits { env: vec![hca_env], device_nodes: with_cm(all) },
        });
    }
    built(devices, kind, notes)
}

/// The spec of these devices (none, with a note, where there are none), at the lowest CDI
/// version that allows their names: 0.5.0 for a name that does not start with a letter.
fn built(devices: Vec<Device>, kind: &str, mut notes: Vec<String>) -> Built {
    if devices.is_empty() {
        notes.push("no RDMA device with a uverbs node: nothing to offer".into());
        return Built { spec: None, notes };
    }
    let needs_050 = devices.iter().any(|d| !d.name.as_bytes()[0].is_ascii_alphabetic());
    Built {
        spec: Some(Spec {
            cdi_version: if needs_050 { "0.5.0" } else { "0.3.0" }.into(),
            kind: kind.to_string(),
            devices,
        }),
        notes,
    }
}

/// /dev/infiniband/rdma_cm, for every device of the spec, where the node has it.
fn rdma_cm(node: &Node, notes: &mut Vec<String>) -> Option<DeviceNode> {
    if node.host.dev_infiniband.iter().any(|n| n == "rdma_cm") || node.host.rdma_cm_dev.is_some() {
        Some(node_of("/dev/infiniband/rdma_cm".into(), node.host.rdma_cm_dev.as_deref()))
    } else {
        notes.push("no /dev/infiniband/rdma_cm on this node: not in the spec (load rdma_ucm)".into());
        None
    }
}

/// Why a device offered is in `all` only: the plan's reason for excluding it.
fn not_healthy(plan: &Plan, name: &str) -> String {
    let why = plan
        .excluded
        .iter()
        .find(|e| e.device == name)
        .map(|e| e.reason.clone())
        .unwrap_or_else(|| "no healthy port".into());
    format!("{}: not healthy ({}): only in `all`", name, crate::text::printable(&why, 200))
}

/// Each RDMA device's nodes, in PCI order, if it can be offered at all (why not, in `notes`).
fn offered(node: &Node, mad: bool, notes: &mut Vec<String>) -> Vec<(String, Vec<DeviceNode>)> {
    let mut offered: Vec<(String, Vec<DeviceNode>)> = Vec::new();
    for d in pci_order(node) {
        let shown = crate::text::printable(&d.name, 64);
        if !valid_name(&d.name) || SET_NAMES.contains(&d.name.as_str()) {
            notes.push(format!("{shown}: not a name CDI allows (or one of ibwire's set names): not offered"));
            continue;
        }
        let Some(u) = d.uverbs.as_deref().filter(|u| is_node_name(u, "uverbs")) else {
            notes.push(format!("{shown}: no uverbs device: not offered"));
            continue;
        };
        if !d.uverbs_node_present {
            notes.push(format!("{shown}: /dev/infiniband/{u} is missing on this node: not offered"));
            continue;
        }
        let mut nodes = vec![node_of(format!("/dev/infiniband/{u}"), d.uverbs_dev.as_deref())];
        if mad {
            for m in d.mad.iter().filter(|m| is_node_name(m, "umad") || is_node_name(m, "issm")) {
                if node.host.dev_infiniband.contains(m) {
                    nodes.push(node_of(format!("/dev/infiniband/{m}"), None));
                }
            }
        }
        offered.push((d.name.clone(), nodes));
    }
    offered
}

/// Whether a spec read from disk is one of ibwire's: an `all` device, and nothing but
/// `/dev/infiniband` nodes (NVIDIA's GPU spec has an `all` too, with /dev/nvidia* nodes).
pub fn is_ours(s: &Spec) -> bool {
    let mut nodes = s.devices.iter().flat_map(|d| &d.container_edits.device_nodes).peekable();
    s.devices.iter().any(|d| d.name == "all")
        && nodes.peek().is_some()
        && nodes.all(|n| n.path.starts_with("/dev/infiniband/"))
}

/// What differs between a spec on disk and the one this node offers now (same kind), in words;
/// empty when they agree. Devices are compared by name, nodes and environment.
pub fn differences(on_disk: &Spec, now: Option<&Spec>) -> Vec<String> {
    let Some(now) = now else {
        return vec!["this node has nothing to offer any more".into()];
    };
    let mut out = Vec::new();
    let names = |s: &Spec| s.devices.iter().map(|d| d.name.clone()).collect::<std::collections::BTreeSet<_>>();
    let (old, new) = (names(on_disk), names(now));
    let gone: Vec<_> = old.difference(&new).cloned().collect();
    let added: Vec<_> = new.difference(&old).cloned().collect();
    if !gone.is_empty() {
        out.push(format!("offers {} that this node no longer would", gone.join(", ")));
    }
    if !added.is_empty() {
        out.push(format!("lacks {} that this node now offers", added.join(", ")));
    }
    for d in &now.devices {
        if let Some(o) = on_disk.devices.iter().find(|o| o.name == d.name) {
            if o.container_edits.env != d.container_edits.env {
                out.push(format!(
                    "{}: environment {} on disk, {} now",
                    d.name,
                    o.container_edits.env.join(" "),
                    d.container_edits.env.join(" ")
                ));
            } else if o.container_edits.device_nodes != d.container_edits.device_nodes {
                out.push(format!("{}: other device nodes than this node's", d.name));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_kinds_follow_the_cdi_grammar() {
        assert!(valid_kind("ibwire.dev/hca") && valid_kind("example.com/rdma-hca_1"));
        for k in ["hca", "ibwire.dev/", "/hca", "ibwire.dev/hca/x", "-x.dev/hca", "ibwire.dev/1hca", "ibwire/hca"] {
            assert!(!valid_kind(k), "{k}");
        }
        assert!(valid_name("mlx5_bond_0") && valid_name("0abc") && valid_name("a.b-c"));
        for n in ["", "_x", "x_", "a b", "mlx5\u{9b}0", "a/b"] {
            assert!(!valid_name(n), "{n:?}");
        }
    }
}
