//! `ibwire env`: print the decided settings for an sbatch script, enroot, or a program.

use super::job_env;
use crate::plan::{self, Intent, Master};
use crate::probe::Node;
use crate::render;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `export NAME='value'` lines for `out=$(ibwire env) && eval "$out"`.
    Sh,
    /// `{"env": …, "decisions": …, "excluded": …, "findings": …}`.
    Json,
    /// `NAME="value"` lines in enroot's environ format.
    Enroot,
    /// `export NAME=value` lines as a Slurm TaskProlog prints them (unquoted: slurmstepd reads
    /// them without a shell); a value that cannot be written so is refused on stderr.
    Slurm,
}

/// The master address: the flag, else Slurm's first node, else MASTER_ADDR.
pub fn master(flag: Option<&str>, env: &BTreeMap<String, String>, limit: Duration) -> Result<Option<Master>> {
    let name = match flag {
        Some(m) => Some(m.to_string()),
        None => match crate::slurm::from_env(env)? {
            Some(job) => job.nodes.first().cloned(),
            None => env.get("MASTER_ADDR").filter(|v| !v.is_empty()).cloned(),
        },
    };
    let Some(name) = name else { return Ok(None) };
    let ip = crate::resolve::resolve(&name, limit).with_context(|| {
        format!(
            "master address {}: the rendezvous must not depend on a name only some nodes resolve",
            crate::text::printable(&name, 80)
        )
    })?;
    Ok(Some(Master { name, ip }))
}

pub fn intent(master_flag: Option<&str>, config: Option<&Path>, bootstrap_if: Option<&str>) -> Result<Intent> {
    let (env, cfg) = env_and_config(config, bootstrap_if)?;
    Ok(Intent { master: master(master_flag, &env, Duration::from_secs(5))?, config: cfg, env })
}

/// The job's environment and the layered config, `bootstrap_if` over the config's.
fn env_and_config(
    config: Option<&Path>,
    bootstrap_if: Option<&str>,
) -> Result<(BTreeMap<String, String>, crate::config::Config)> {
    let mut cfg = crate::config::load(config)?;
    if let Some(b) = bootstrap_if {
        cfg.bootstrap_interface = Some(b.to_string());
    }
    Ok((job_env(), cfg))
}

/// As [`intent`], for doctor: a master that does not resolve here is a finding of its own (an
/// error: the job's rendezvous would fail the same way), and the rest is still examined with
/// the default route.
/// A configuration that cannot be read is a finding too (doctor lints it; the node is examined
/// with the defaults), where `env` and `launch` refuse it.
pub fn intent_or_finding(
    master_flag: Option<&str>,
    config: Option<&Path>,
    bootstrap_if: Option<&str>,
) -> Result<(Intent, Vec<plan::Finding>)> {
    let mut findings = Vec::new();
    let (env, cfg) = match env_and_config(config, bootstrap_if) {
        Ok(x) => x,
        Err(e) => {
            findings.push(
                plan::Finding::new(plan::Severity::Error, "configuration", format!("{e:#}; examined with the defaults"))
                    .fix("fix the file at that line (or point IBWIRE_CONFIG/--config elsewhere); `ibwire env` and `launch` refuse it"),
            );
            let cfg =
                crate::config::Config { bootstrap_interface: bootstrap_if.map(str::to_string), ..Default::default() };
            (job_env(), cfg)
        }
    };
    match master(master_flag, &env, Duration::from_secs(5)) {
        Ok(m) => Ok((Intent { master: m, config: cfg, env }, findings)),
        Err(e) => {
            findings.push(plan::Finding::new(plan::Severity::Error, "master address", format!("{e:#}")).fix(
                "give the master as an IP (--master-addr), or make the name resolve on every node (/etc/hosts or DNS)",
            ));
            Ok((Intent { master: None, config: cfg, env }, findings))
        }
    }
}

pub fn run(node: &Node, intent: &Intent, format: Format, explain: bool) -> Result<ExitCode> {
    let plan = plan::decide(node, intent);
    if explain {
        eprint!("{}", crate::text::for_stderr(&render::explain(&plan)));
    } else {
        for f in plan.findings.iter().filter(|f| f.severity >= plan::Severity::Warning) {
            let line = format!(
                "ibwire env: {}: {}",
                if f.severity == plan::Severity::Error { "error" } else { "warning" },
                f.headline()
            );
            eprintln!("{}", crate::text::for_terminal(&line));
        }
    }
    let out = match format {
        Format::Sh => render::sh(&plan)?,
        Format::Enroot => render::enroot(&plan)?,
        Format::Slurm => {
            let (s, refused) = render::slurm(&plan);
            for r in &refused {
                eprintln!("ibwire env: error: {}", crate::text::printable(&r.to_string(), 2000));
            }
            s
        }
        Format::Json => serde_json::to_string_pretty(&render::json(&plan))? + "\n",
    };
    print!("{out}");
    Ok(if plan.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
