//! CUDA_VISIBLE_DEVICES: the GPUs this node's processes use, in PCI bus order.
//!
//! An allocation made by Slurm (CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS) is kept
//! and checked against the probed GPUs; otherwise every GPU, by bus order.

use super::{Finding, Severity};
use crate::probe::Node;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default)]
pub struct Choice {
    pub visible: Option<String>,
    pub count: usize,
    pub reason: String,
    pub from_user: bool,
    pub findings: Vec<Finding>,
}

pub fn choose(node: &Node, env: &BTreeMap<String, String>) -> Choice {
    let n = node.gpus.len();
    let mut c = Choice::default();
    let given = ["CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"]
        .iter()
        .find_map(|k| env.get(*k).map(|v| (*k, v.clone())));
    let Some((var, value)) = given else {
        return all_gpus(node);
    };
    c.from_user = true;
    let entries: Vec<&str> = value.split(',').map(str::trim).filter(|e| !e.is_empty()).collect();
    let bad = check_entries(node, var, &entries, &mut c.findings);
    let printable = value.chars().all(|ch| ch.is_ascii_graphic());
    if !bad.is_empty() || !printable {
        c.findings.push(
            Finding::new(
                Severity::Error,
                var,
                format!(
                    "{var}={:?} names GPUs this node does not have or is not a GPU list ({}); {n} GPU(s) probed",
                    crate::text::clip(&value),
                    bad.join(", ")
                ),
            )
            .fix("let Slurm allocate GPUs (--gres=gpu:N) or list indices 0..N-1"),
        );
        c.reason = format!("{var} given but invalid");
        return c;
    }
    c.count = entries.len();
    // Slurm's lists name device minors; CUDA wants bus-order indices.
    let mapped: Vec<String> = entries
        .iter()
        .map(|e| match (var != "CUDA_VISIBLE_DEVICES", e.parse::<u32>()) {
            (true, Ok(m)) => {
                node.gpus.iter().position(|g| g.minor == Some(m)).map(|i| i.to_string()).unwrap_or(e.to_string())
            }
            _ => e.to_string(),
        })
        .collect();
    c.visible = Some(mapped.join(","));
    c.reason = format!("allocation from {var} kept ({} GPU(s)), checked against {n} probed", entries.len());
    c
}

/// No allocation given: every GPU of the node, in PCI bus order.
fn all_gpus(node: &Node) -> Choice {
    let n = node.gpus.len();
    let mut c = Choice::default();
    if n == 0 {
        c.reason = "no NVIDIA GPU on this node".into();
        c.findings.push(Finding::new(
            Severity::Info,
            "CUDA_VISIBLE_DEVICES",
            "no NVIDIA GPU found: one process per node (CPU/gloo)",
        ));
        return c;
    }
    c.visible = Some((0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    c.count = n;
    let bdfs = node.gpus.iter().map(|g| g.pci.bdf.as_str()).collect::<Vec<_>>().join(", ");
    c.reason =
        if n == 1 { format!("the node's one GPU ({bdfs})") } else { format!("all {n} GPUs in PCI bus order ({bdfs})") };
    c
}

/// The entries of an allocation this node does not have (each GPU listed once, or a finding).
fn check_entries(node: &Node, var: &str, entries: &[&str], findings: &mut Vec<Finding>) -> Vec<String> {
    let n = node.gpus.len();
    let mut bad = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for e in entries {
        let ok = if let Ok(i) = e.parse::<usize>() {
            // Slurm's *_GPUS lists hold device minors when the driver told it; CUDA's hold indices.
            let known = if var == "CUDA_VISIBLE_DEVICES" || node.gpus.iter().all(|g| g.minor.is_none()) {
                i < n
            } else {
                node.gpus.iter().any(|g| g.minor == Some(i as u32))
            };
            known || n == 0
        } else if e.starts_with("GPU-") || e.starts_with("MIG-") {
            node.gpus.iter().all(|g| g.uuid.is_none()) || node.gpus.iter().any(|g| g.uuid.as_deref() == Some(*e))
        } else {
            false
        };
        if !ok {
            bad.push(e.to_string());
        }
        if !seen.insert(*e) {
            findings.push(
                Finding::new(
                    Severity::Error,
                    var,
                    format!("{var} lists {e} twice: two local ranks would share one GPU"),
                )
                .fix("list each GPU once"),
            );
        }
    }
    bad
}
