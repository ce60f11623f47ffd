//! `ibwire health`: the node checked against what a multi-node job needs (plan::health), for
//! Slurm's HealthCheckProgram and NHC. Healthy: exit 0, silent. Unhealthy: exit 1, one line on
//! stdout. With `--drain` (or called as `ibwire-health`, the HealthCheckProgram link), an
//! unhealthy node is drained with that line as the reason (`ibwire: …`), and a node that
//! ibwire drained is resumed once healthy; a drain with any other reason is never touched. An
//! error of its own (configuration, probe, scontrol) is exit 2 and changes nothing.

use crate::plan::{self, health};
use crate::probe::Node;
use anyhow::{anyhow, Result};
use std::process::{Command, ExitCode};
use std::time::Duration;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct Args {
    /// Print this node's shape as a `health:` section for /etc/ibwire.yaml (run on a good node).
    #[arg(long, conflicts_with_all = ["drain", "json"])]
    pub learn: bool,
    /// Drain this node in Slurm when it is unhealthy (reason `ibwire: …`), and resume it once
    /// healthy if ibwire drained it. HealthCheckProgram=/usr/bin/ibwire-health does this.
    #[arg(long)]
    pub drain: bool,
    /// The node's Slurm name (default: SLURMD_NODENAME, else the host name).
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// A configuration file read after /etc/ibwire.yaml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// The report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Give up after SECONDS (a sysfs read or a file system that does not answer): one line,
    /// exit 2, nothing drained.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub timeout: u64,
}

/// The prefix of every drain reason ibwire writes: only such drains are ibwire's to resume.
pub const REASON_PREFIX: &str = "ibwire: ";

const SCONTROL_LIMIT: Duration = Duration::from_secs(10);

/// Past `secs`, from any state: one line and exit 2 (its own error: nothing is drained). A
/// health check runs unattended every few minutes; a read that never returns must not pile up
/// copies of it.
fn watchdog(secs: u64) {
    let limit = Duration::from_secs(secs.max(1));
    let _ = std::thread::Builder::new().name("deadline".into()).spawn(move || {
        std::thread::sleep(limit);
        eprintln!(
            "ibwire health: error: gave up after {}s (a read of the node or of the configuration did not answer): nothing drained",
            limit.as_secs()
        );
        std::process::exit(2);
    });
}

pub fn run(src: &super::NodeSource, a: &Args) -> Result<ExitCode> {
    watchdog(a.timeout);
    // Debug builds only (the tests'): `IBWIRE_TEST_STALL=MS` stands for a read that hangs.
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("IBWIRE_TEST_STALL").ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
    let cfg = crate::config::load(a.config.as_deref())?;
    let node = &src.load()?;
    // The job's variables are no business of a node check: decided as for an empty job.
    let intent = plan::Intent { master: None, config: cfg.clone(), env: Default::default() };
    let p = plan::decide(node, &intent);
    if a.learn {
        // The shape of a node with a problem is no shape to hold others to.
        let r = health::check(node, &p, &cfg.hca.exclude, &Default::default());
        if let Some(line) = r.line() {
            anyhow::bail!("--learn: this node is not healthy ({line}): learn from a good node");
        }
        for u in &r.unknown {
            eprintln!("ibwire health: note: not learned: {}", crate::text::printable(u, 300));
        }
        print!("{}", learned(node, &health::learn(node, &p, &cfg.hca.exclude))?);
        return Ok(ExitCode::SUCCESS);
    }
    let r = health::check(node, &p, &cfg.hca.exclude, &cfg.health);
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "schema": crate::render::JSON_SCHEMA,
                "healthy": r.healthy(),
                "problems": r.problems,
                "unknown": r.unknown,
                "rails": r.rails,
                "healthy_rails": r.healthy_rails,
            }))?
        );
    } else {
        for u in &r.unknown {
            eprintln!("ibwire health: note: not checked: {}", crate::text::printable(u, 300));
        }
        if let Some(line) = r.line() {
            println!("{}", crate::text::printable(&line, 400));
        }
    }
    if a.drain {
        let name = slurm_name(node, a)?;
        slurm(&name, r.line().as_deref())?;
    }
    Ok(if r.healthy() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn learned(node: &Node, h: &crate::config::HealthConfig) -> Result<String> {
    #[derive(serde::Serialize)]
    struct Section<'a> {
        health: &'a crate::config::HealthConfig,
    }
    let yaml = serde_yaml::to_string(&Section { health: h })?;
    let host = node.hostname.as_deref().unwrap_or("this node");
    Ok(format!(
        "# `ibwire health --learn` on {}: the shape a node of this kind should have.\n\
         # Put it into /etc/ibwire.yaml on every node of this kind; unset keys are not checked.\n{yaml}",
        crate::text::printable(host, 64)
    ))
}

fn slurm_name(node: &Node, a: &Args) -> Result<String> {
    let name = a
        .node
        .clone()
        .or_else(|| std::env::var("SLURMD_NODENAME").ok().filter(|n| !n.is_empty()))
        .or_else(|| node.hostname.as_deref().map(|h| h.split('.').next().unwrap_or(h).to_string()))
        .ok_or_else(|| anyhow!("--drain: no node name (give --node NAME; SLURMD_NODENAME is not set)"))?;
    if name.is_empty() || name.len() > 255 || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        return Err(anyhow!("--drain: {:?} is not a Slurm node name", crate::text::clip(&name)));
    }
    Ok(name)
}

/// The node's State= and Reason= as `scontrol show node NAME --oneliner` prints them.
#[derive(Debug, PartialEq)]
pub struct SlurmNode {
    pub drained: bool,
    pub reason: Option<String>,
}

pub fn parse_show_node(out: &str) -> Option<SlurmNode> {
    let line = out.lines().find(|l| l.contains("NodeName="))?;
    let state = line.split_whitespace().find_map(|t| t.strip_prefix("State="))?;
    // Reason= comes last and holds spaces: `Reason=ibwire: mlx5_6 port 1: … [root@2026-…]`.
    let reason = line.split_once(" Reason=").map(|(_, r)| {
        let r = r.trim_end();
        match r.rfind(" [") {
            Some(i) if r.ends_with(']') => r[..i].to_string(),
            _ => r.to_string(),
        }
    });
    Some(SlurmNode { drained: state.split('+').any(|s| s.starts_with("DRAIN")), reason })
}

fn scontrol(args: &[&str]) -> Result<String> {
    let mut c = Command::new("scontrol");
    c.args(args);
    let out = crate::subprocess::run(c, SCONTROL_LIMIT)?;
    if out.status != Some(0) {
        return Err(anyhow!("scontrol {} failed: {}", args.join(" "), crate::text::printable(out.stderr.trim(), 300)));
    }
    Ok(out.stdout)
}

/// Drain for `problem`, or resume an ibwire drain when there is none; an admin's drain stays.
fn slurm(name: &str, problem: Option<&str>) -> Result<()> {
    let shown = scontrol(&["show", "node", name, "--oneliner"])?;
    let st = parse_show_node(&shown).ok_or_else(|| anyhow!("scontrol show node {name}: no State= in its answer"))?;
    let ours = st.reason.as_deref().is_some_and(|r| r.starts_with(REASON_PREFIX.trim_end()));
    match problem {
        Some(p) if !st.drained => {
            let reason = format!("{REASON_PREFIX}{}", crate::text::one_line(&crate::text::printable(p, 200)));
            scontrol(&["update", &format!("NodeName={name}"), "State=DRAIN", &format!("Reason={reason}")])?;
            eprintln!("ibwire health: drained {name}");
        }
        Some(_) => {} // drained already, by ibwire or by someone else: left as it is
        None if st.drained && ours => {
            scontrol(&["update", &format!("NodeName={name}"), "State=RESUME"])?;
            eprintln!("ibwire health: resumed {name} (healthy again; ibwire had drained it)");
        }
        None => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scontrol_show_node_is_read() {
        let out = "NodeName=node2 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=IDLE+DRAIN ThreadsPerCore=1 \
                   Partitions=gpu Reason=ibwire: mlx5_6 port 1: port state DOWN (1), not ACTIVE; fix: x [root@2026-12-02T19:00:00]\n";
        let n = parse_show_node(out).unwrap();
        assert!(n.drained);
        assert_eq!(n.reason.as_deref(), Some("ibwire: mlx5_6 port 1: port state DOWN (1), not ACTIVE; fix: x"));
        let idle = parse_show_node("NodeName=node1 State=IDLE Partitions=gpu\n").unwrap();
        assert_eq!(idle, SlurmNode { drained: false, reason: None });
        let admin =
            parse_show_node("NodeName=n State=MIXED+DRAIN Reason=bad dimm [admin@2026-01-01T00:00:00]").unwrap();
        assert!(admin.drained && admin.reason.as_deref() == Some("bad dimm"));
        assert!(parse_show_node("Node n not found").is_none());
    }
}
