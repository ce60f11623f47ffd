//! The Slurm job as the environment describes it: node list (hostlist syntax), node rank, job id.

use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub nodes: Vec<String>,
    pub node_rank: Option<usize>,
    pub job_id: Option<u64>,
}

/// Expand `gpu-[001-004,010],login1` into host names, in order.
pub fn expand_hostlist(s: &str) -> Result<Vec<String>> {
    let s = s.trim();
    if s.is_empty() {
        bail!("empty node list");
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!("node list {s:?} contains whitespace or control characters");
    }
    let hosts =
        hostlist_parser::parse(s).map_err(|e| anyhow!("malformed node list {s:?}: {}", one_line(&e.to_string())))?;
    if hosts.is_empty() {
        bail!("node list {s:?} names no host");
    }
    Ok(hosts)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Read the job from Slurm's variables; None outside Slurm.
pub fn from_env(env: &BTreeMap<String, String>) -> Result<Option<Job>> {
    let Some(list) = env.get("SLURM_JOB_NODELIST").or_else(|| env.get("SLURM_NODELIST")) else {
        return Ok(None);
    };
    let nodes = expand_hostlist(list).map_err(|e| anyhow!("SLURM_JOB_NODELIST: {e}"))?;
    let node_rank = match env.get("SLURM_NODEID") {
        Some(v) => Some(v.trim().parse().map_err(|_| anyhow!("SLURM_NODEID={v:?} is not a number"))?),
        None => None,
    };
    let job_id = match env.get("SLURM_JOB_ID").or_else(|| env.get("SLURM_JOBID")) {
        Some(v) => Some(v.trim().parse().map_err(|_| anyhow!("SLURM_JOB_ID={v:?} is not a number"))?),
        None => None,
    };
    Ok(Some(Job { nodes, node_rank, job_id }))
}

/// A rendezvous port per job, outside Linux's default ephemeral range (32768–60999) and away
/// from torchrun's 29500, so two jobs sharing a node do not collide.
pub fn port_for_job(job_id: u64) -> u16 {
    (20000 + job_id % 9000) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostlists() {
        assert_eq!(
            expand_hostlist("gpu-[001-004,010],login1").unwrap(),
            ["gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-010", "login1"]
        );
        assert_eq!(expand_hostlist("n[9-11]").unwrap(), ["n9", "n10", "n11"]);
        assert_eq!(expand_hostlist("a[1-2]b[3-4]").unwrap().len(), 4);
        assert_eq!(expand_hostlist("single").unwrap(), ["single"]);
        for bad in ["gpu-[001-", "gpu-[]", "", "a b", "x[3-1]x]"] {
            assert!(expand_hostlist(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn order_is_kept() {
        assert_eq!(expand_hostlist("b1,a1").unwrap(), ["b1", "a1"]);
    }

    #[test]
    fn ports() {
        let p = port_for_job(123456);
        assert!((20000..29000).contains(&p));
        assert_ne!(port_for_job(1), port_for_job(2));
    }
}
