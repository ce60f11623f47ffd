//! `ibwire taskprolog`: the Slurm TaskProlog (slurm.conf `TaskProlog=`) for bare-metal jobs.
//!
//! slurmstepd runs it as the job's user before every task, with the task's environment, and
//! adds each `export NAME=value` line it prints to that environment (read without a shell). It
//! prints the decided NCCL settings that the job has not set itself, and NCCL_NET=IB for a
//! multi-node job where no net plugin is in play (as the enroot hook does for containers). It
//! is on the path of every task of every job, so it reads the node the hook's way, and nothing
//! makes it fail the task: any error is one line on stderr, nothing exported, exit 0.

use super::{one_line, say};
use crate::plan::{self, netguard, Intent, Source};
use crate::render;
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

/// The lines to print and the values refused, for a node, the task's environment and config.
pub fn lines(env: &BTreeMap<String, String>, src: &super::NodeSource) -> Result<(Vec<String>, Vec<String>)> {
    let cfg = crate::config::load(None)?;
    // environment only: no device nodes (umad/issm owners) are read
    let node = src.load_with_mad(false)?;
    let root = src.root.clone().unwrap_or_else(|| std::path::PathBuf::from("/"));
    let root = root.as_path();
    let mut refused = Vec::new();
    // As in the hook: a master that does not resolve costs the route, not every setting.
    let master = super::env::master(None, env, Duration::from_secs(2)).unwrap_or_else(|e| {
        refused.push(format!("{e:#}; NCCL_SOCKET_IFNAME from the default route"));
        None
    });
    let intent = Intent { master, config: cfg.clone(), env: env.clone() };
    let p = plan::decide(&node, &intent);
    let mut out = Vec::new();
    let mut push = |k: &str, v: &str| match render::slurm_line(k, v) {
        Ok(l) => out.push(l),
        Err(e) => refused.push(format!("{e:#}; not exported")),
    };
    // CUDA_VISIBLE_DEVICES is Slurm's to set (its GPU allocation): a job that asked for no GPU
    // must not be handed the node's.
    for s in p
        .settings
        .iter()
        .filter(|s| s.source == Source::Decided && !env.contains_key(&s.name) && s.name != "CUDA_VISIBLE_DEVICES")
    {
        push(&s.name, &s.value);
    }
    let plugin = crate::probe::host::find_net_plugin(
        root,
        env.get("LD_LIBRARY_PATH").map(String::as_str),
        env.get("NCCL_NET_PLUGIN").map(String::as_str),
    );
    if netguard::pin_for_job(&p, netguard::Exposure::Usable, &cfg, |k| env.get(k).cloned(), plugin.as_deref()).is_ok() {
        push("NCCL_NET", "IB");
    }
    Ok((out, refused))
}

/// Print the lines; never fail the task.
pub fn run(env: &BTreeMap<String, String>, src: &super::NodeSource) -> std::process::ExitCode {
    let res = std::panic::catch_unwind(|| lines(env, src));
    match res {
        Ok(Ok((out, refused))) => {
            for r in refused {
                say(&format!("ibwire-taskprolog: warning: {}", one_line(&r)));
            }
            let mut text = out.join("\n");
            if !text.is_empty() {
                text.push('\n');
            }
            // One write: the output is whole or, if stdout fails, absent — never half a line.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
        }
        Ok(Err(e)) => {
            say(&format!("ibwire-taskprolog: error: {}; nothing exported", one_line(&format!("{e:#}"))));
        }
        Err(_) => {
            say("ibwire-taskprolog: error: internal error (panic); nothing exported");
        }
    }
    std::process::ExitCode::SUCCESS
}
