//! Where a job's rendezvous comes from outside Slurm: the conventions of the engines that run
//! PyTorch jobs on Kubernetes, read by `launch` as a container's or pod's entrypoint. Slurm's
//! variables win when present (slurm.rs); flags win over both.
//!
//! - Kubeflow's PyTorchJob (training-operator, torchrun mode): `PET_NNODES`, `PET_NODE_RANK`,
//!   `PET_MASTER_ADDR`, `PET_MASTER_PORT`, `PET_NPROC_PER_NODE` (torchrun's own `PET_*` view of
//!   its flags).
//! - JobSet and plain torchrun set-ups: `MASTER_ADDR`, `MASTER_PORT`, `NNODES` and `NODE_RANK`;
//!   `WORLD_SIZE` and `RANK` as the node count and index where `NNODES` is absent (what
//!   PyTorchJob sets per pod when it does not run torchrun itself).
//!
//! Values are checked: a count that is not a positive number, an elastic range (`1:4`), a port
//! outside 1–65535 is an error naming the variable, never a silent default.

use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendezvous {
    /// Which convention supplied it: `PET_*` (Kubeflow) or `MASTER_ADDR` (JobSet/torchrun).
    pub source: &'static str,
    pub nnodes: Option<usize>,
    pub node_rank: Option<usize>,
    pub master_addr: Option<String>,
    pub master_port: Option<u16>,
    pub nproc_per_node: Option<usize>,
}

fn number(env: &BTreeMap<String, String>, k: &str) -> Result<Option<usize>> {
    let Some(v) = env.get(k) else { return Ok(None) };
    let t = v.trim();
    if let Some((lo, hi)) = t.split_once(':') {
        if lo == hi {
            return number_text(k, lo).map(Some);
        }
        bail!(
            "{k}={}: an elastic range; ibwire launch runs a fixed node count (set --nnodes)",
            crate::text::printable(t, 40)
        );
    }
    number_text(k, t).map(Some)
}

fn number_text(k: &str, t: &str) -> Result<usize> {
    match t.parse::<usize>() {
        Ok(n) if n <= 1_000_000 => Ok(n),
        _ => Err(anyhow!("{k}={}: not a number", crate::text::printable(t, 40))),
    }
}

fn port(env: &BTreeMap<String, String>, k: &str) -> Result<Option<u16>> {
    match env.get(k).map(|v| v.trim()) {
        None => Ok(None),
        Some(t) => match t.parse::<u16>() {
            Ok(p) if p > 0 => Ok(Some(p)),
            _ => bail!("{k}={}: not a port (1-65535)", crate::text::printable(t, 40)),
        },
    }
}

fn addr(env: &BTreeMap<String, String>, k: &str) -> Result<Option<String>> {
    match env.get(k).map(|v| v.trim()) {
        None => Ok(None),
        Some("") => bail!("{k} is empty"),
        Some(t) if t.len() > 253 || t.chars().any(|c| c.is_control() || c.is_whitespace()) => {
            bail!("{k}={}: not a host name or address", crate::text::printable(t, 60))
        }
        Some(t) => Ok(Some(t.to_string())),
    }
}

/// The rendezvous the environment names, if any convention is present.
pub fn from_env(env: &BTreeMap<String, String>) -> Result<Option<Rendezvous>> {
    if ["PET_NNODES", "PET_NODE_RANK", "PET_MASTER_ADDR"].iter().any(|k| env.contains_key(*k)) {
        let nproc = match env.get("PET_NPROC_PER_NODE").map(|v| v.trim()) {
            // torchrun's own words for "as many as devices": ibwire counts the GPUs itself.
            Some("auto" | "gpu") | None => None,
            Some(_) => number(env, "PET_NPROC_PER_NODE")?,
        };
        return Ok(Some(Rendezvous {
            source: "PET_*",
            nnodes: number(env, "PET_NNODES")?,
            node_rank: number(env, "PET_NODE_RANK")?,
            master_addr: addr(env, "PET_MASTER_ADDR")?,
            master_port: port(env, "PET_MASTER_PORT")?,
            nproc_per_node: nproc,
        }));
    }
    if env.contains_key("MASTER_ADDR") {
        let (nnodes, rank) = if env.contains_key("NNODES") {
            (number(env, "NNODES")?, number(env, "NODE_RANK")?)
        } else {
            (number(env, "WORLD_SIZE")?, number(env, "NODE_RANK")?.or(number(env, "RANK")?))
        };
        return Ok(Some(Rendezvous {
            source: "MASTER_ADDR",
            nnodes,
            node_rank: rank,
            master_addr: addr(env, "MASTER_ADDR")?,
            master_port: port(env, "MASTER_PORT")?,
            nproc_per_node: None,
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn kubeflow_pytorchjob() {
        let r = from_env(&env(&[
            ("PET_NNODES", "4"),
            ("PET_NODE_RANK", "2"),
            ("PET_MASTER_ADDR", "job-master-0"),
            ("PET_MASTER_PORT", "23456"),
            ("PET_NPROC_PER_NODE", "8"),
            ("MASTER_ADDR", "ignored"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            r,
            Rendezvous {
                source: "PET_*",
                nnodes: Some(4),
                node_rank: Some(2),
                master_addr: Some("job-master-0".into()),
                master_port: Some(23456),
                nproc_per_node: Some(8)
            }
        );
        let r = from_env(&env(&[("PET_NNODES", "2:2"), ("PET_NPROC_PER_NODE", "auto")])).unwrap().unwrap();
        assert_eq!((r.nnodes, r.nproc_per_node), (Some(2), None));
    }

    #[test]
    fn jobset_and_world_size() {
        let r = from_env(&env(&[("MASTER_ADDR", "10.0.0.1"), ("NNODES", "2"), ("NODE_RANK", "1"), ("RANK", "9")]))
            .unwrap()
            .unwrap();
        assert_eq!((r.nnodes, r.node_rank, r.master_port), (Some(2), Some(1), None));
        let r = from_env(&env(&[("MASTER_ADDR", "m"), ("MASTER_PORT", "1234"), ("WORLD_SIZE", "3"), ("RANK", "2")]))
            .unwrap()
            .unwrap();
        assert_eq!((r.nnodes, r.node_rank, r.master_port), (Some(3), Some(2), Some(1234)));
        assert_eq!(from_env(&env(&[("NNODES", "2")])).unwrap(), None, "no master, no convention");
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (kv, want) in [
            (("PET_NNODES", "1:4"), "elastic range"),
            (("PET_NNODES", "two"), "PET_NNODES=two: not a number"),
            (("PET_MASTER_PORT", "70000"), "PET_MASTER_PORT=70000: not a port"),
            (("PET_MASTER_ADDR", "a b"), "PET_MASTER_ADDR=a b: not a host"),
            (("PET_NODE_RANK", "-1"), "PET_NODE_RANK=-1"),
        ] {
            let mut e = env(&[("PET_MASTER_ADDR", "m")]);
            e.insert(kv.0.into(), kv.1.into());
            let err = format!("{:#}", from_env(&e).unwrap_err());
            assert!(err.contains(want), "{err}");
        }
    }
}
