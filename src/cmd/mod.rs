//! Actions: one module per command, each a thin renderer of facts and decisions.

pub mod cdi;
pub mod doctor;
pub mod env;
pub mod fleet;
pub mod health;
pub mod hook;
pub mod launch;
pub mod man;
pub mod probe;
pub mod taskprolog;
pub mod topo;
pub mod verify;
pub mod watch;

use crate::probe::{Node, ProbeOptions};
use anyhow::Result;
use std::path::PathBuf;

/// Where the node's facts come from: the live system, a captured tree, or a saved snapshot.
#[derive(Debug, Clone, Default)]
pub struct NodeSource {
    pub root: Option<PathBuf>,
    pub snapshot: Option<PathBuf>,
    pub nvidia_smi: bool,
    pub detail: crate::probe::Detail,
}

impl NodeSource {
    pub fn load(&self) -> Result<Node> {
        self.load_with_mad(true)
    }

    /// `load`; `mad: false` skips matching umad/issm nodes to devices (ProbeOptions::mad).
    pub fn load_with_mad(&self, mad: bool) -> Result<Node> {
        if let Some(s) = &self.snapshot {
            return crate::snapshot::load(s);
        }
        let root = self.root.clone().unwrap_or_else(|| PathBuf::from("/"));
        if !root.is_dir() {
            anyhow::bail!("--root {}: not a directory", root.display());
        }
        if root != std::path::Path::new("/") && !root.join("sys").is_dir() {
            anyhow::bail!(
                "--root {}: no sys/ inside, so not a node tree (give the directory `ibwire probe --capture` wrote, or an hwloc tarball's top directory)",
                root.display()
            );
        }
        let mut o = ProbeOptions::at(&root);
        o.nvidia_smi = self.nvidia_smi;
        o.detail = self.detail;
        o.mad = mad;
        Ok(crate::probe::probe(&o))
    }
}

/// One line to stderr. Where ibwire must not fail (the hook, the TaskProlog, the watch) a full
/// disk or a closed pipe must not turn a message into a panic: the write's error is dropped.
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{}", crate::text::for_terminal(line));
}

pub(crate) use crate::text::{one_line, printable};

/// The job's environment. Bytes that are not UTF-8 become U+FFFD rather than dropping the
/// variable: a value the user set is set, whatever its bytes, and must not be overridden.
pub fn job_env() -> std::collections::BTreeMap<String, String> {
    std::env::vars_os().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())).collect()
}

/// Inside a container the enroot hook's warnings of this start (IBWIRE_HOOK_WARNINGS: pyxis
/// shows none of the hook's stderr when a start succeeds), said first by `launch` and `verify`.
pub fn say_hook_warnings(cmd: &str) {
    if let Some(w) = std::env::var_os("IBWIRE_HOOK_WARNINGS").filter(|w| !w.is_empty()) {
        for part in w.to_string_lossy().split(" | ").take(16) {
            eprintln!(
                "ibwire {cmd}: warning: the enroot hook warned at this container's start: {}",
                crate::text::printable(part, 600)
            );
        }
    }
}
