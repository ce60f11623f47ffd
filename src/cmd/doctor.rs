//! `ibwire doctor`: lint the environment, nccl.conf files and the node; exit 1 on any error.

use crate::plan::doctor::{lint, Var};
use crate::plan::{self, Finding, Intent, Severity};
use crate::probe::Node;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `KEY=VALUE` lines of an nccl.conf (comments and blanks skipped).
pub fn parse_conf(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())))
        .filter(|(k, _)| crate::render::valid_name(k))
        .collect()
}

/// The variables NCCL would see: nccl.conf files first (system, then user or NCCL_CONF_FILE),
/// the environment over them. Conflicts are findings.
pub fn gather(env: &BTreeMap<String, String>, root: &Path) -> (BTreeMap<String, Var>, Vec<Finding>) {
    let mut vars: BTreeMap<String, Var> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut files: Vec<PathBuf> = vec![root.join("etc/nccl.conf")];
    match env.get("NCCL_CONF_FILE") {
        Some(f) => files.push(PathBuf::from(f)),
        None => {
            if let Some(h) = env.get("HOME") {
                files.push(Path::new(h).join(".nccl.conf"));
            }
        }
    }
    for file in files {
        let Ok(text) = crate::input::read_text(&file, crate::input::MAX_INPUT) else { continue };
        for (k, v) in parse_conf(&text) {
            vars.insert(k, Var { value: v, origin: file.display().to_string() });
        }
    }
    for (k, v) in env {
        if let Some(c) = vars.get(k) {
            if &c.value != v {
                notes.push(Finding::new(
                    Severity::Info,
                    k,
                    format!("{k}={v} from the environment overrides {}={} in {}", k, c.value, c.origin),
                ));
            }
        }
        vars.insert(k.clone(), Var { value: v.clone(), origin: "environment".into() });
    }
    (vars, notes)
}

/// `extra`: findings made before the node was examined (a master that does not resolve).
pub fn run(node: &Node, intent: &Intent, root: &Path, json: bool, extra: Vec<Finding>) -> Result<ExitCode> {
    // What the enroot hook said at this container's start (pyxis shows its stderr only when a
    // start fails): it left it in the environment.
    if let Some(w) = intent.env.get("IBWIRE_HOOK_WARNINGS").filter(|w| !w.is_empty()) {
        for part in w.split(" | ").take(20) {
            super::say(&format!(
                "ibwire doctor: the enroot hook said at container start: {}",
                super::printable(part, 2000)
            ));
        }
    }
    let p = plan::decide(node, intent);
    let (vars, mut findings) = gather(&intent.env, root);
    findings.extend(extra);
    findings.extend(lint(node, &p, &vars));
    findings.extend(p.findings.iter().cloned());
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings.dedup();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "schema": crate::render::JSON_SCHEMA, "findings": findings })
            )?
        );
    } else {
        print!("{}", crate::text::for_stdout(&report(&findings, node.host.in_container)));
    }
    Ok(if findings.iter().any(|f| f.severity == Severity::Error) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

pub fn report(findings: &[Finding], inside: bool) -> String {
    let mut s = format!("ibwire doctor ({})\n", if inside { "inside a container" } else { "on the host" });
    for (sev, title) in [(Severity::Error, "Errors"), (Severity::Warning, "Warnings"), (Severity::Info, "Notes")] {
        let group: Vec<&Finding> = findings.iter().filter(|f| f.severity == sev).collect();
        if group.is_empty() {
            continue;
        }
        s.push_str(&format!("\n{title} ({}):\n", group.len()));
        for f in group {
            s.push_str(&format!("  {}: {}\n", f.subject, f.message));
            if let Some(fix) = &f.fix {
                s.push_str(&format!("      fix: {fix}\n"));
            }
        }
    }
    if findings.is_empty() {
        s.push_str("\nNothing to report.\n");
    }
    s
}
