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
        .filter(|(k, _)| crate::shell::valid_name(k))
        .collect()
}

/// The variables NCCL would see: nccl.conf files first (system, then user or NCCL_CONF_FILE),
/// the environment over them. Conflicts are findings.
pub fn gather(env: &BTreeMap<String, String>, root: &Path) -> (BTreeMap<String, Var>, Vec<Finding>) {
    let mut vars: BTreeMap<String, Var> = BTreeMap::new();
    let mut notes = Vec::new();
    // A `--root` tree's own /etc/nccl.conf, read by the confined reader: a link that leaves
    // the tree is not followed (hostile round 4 #7). The live system's is a plain file.
    let mut files: Vec<PathBuf> = Vec::new();
    if root == Path::new("/") {
        files.push(root.join("etc/nccl.conf"));
    } else if let Some(text) = crate::probe::sysroot::SysRoot::new(root).read(Path::new("etc/nccl.conf")) {
        let origin = root.join("etc/nccl.conf").display().to_string();
        for (k, v) in parse_conf(&text) {
            vars.insert(k, Var { value: v, origin: origin.clone() });
        }
    }
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

/// ibwire's CDI specs in /etc/cdi and /var/run/cdi (under `root`) that no longer match what
/// this node offers: a runtime would still hand out a device whose port went down, or miss one
/// that came back. Files are read bounded; what does not parse as a spec is not ibwire's.
pub fn stale_cdi_specs(node: &Node, cfg: &crate::config::Config, root: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    for dir in ["etc/cdi", "var/run/cdi"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "json"))
            .take(256)
            .collect();
        files.sort();
        for f in files {
            let Ok(text) = crate::input::read_text_nofollow(&f, 1 << 20) else { continue };
            let parsed: Option<crate::plan::cdi::Spec> = if text.trim_start().starts_with('{') {
                serde_json::from_str(&text).ok()
            } else {
                serde_yaml::from_str(&text).ok()
            };
            let Some(on_disk) = parsed.filter(crate::plan::cdi::is_ours) else { continue };
            let now = super::cdi::build(node, cfg, &on_disk.kind);
            let diff = crate::plan::cdi::differences(&on_disk, now.spec.as_ref());
            if !diff.is_empty() {
                let shown = super::printable(&f.display().to_string(), 300);
                out.push(
                    Finding::new(
                        Severity::Warning,
                        "CDI spec",
                        format!(
                            "{shown} no longer matches this node: {}; containers started with it get the old devices or NCCL_IB_HCA",
                            super::printable(&diff.join("; "), 1000)
                        ),
                    )
                    .fix(format!("ibwire cdi --output {shown} (packaging/ibwire-cdi.timer refreshes it)")),
                );
            }
        }
    }
    out
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
    findings.extend(ib_disable_with_a_plugin(&vars, root));
    findings.extend(stale_cdi_specs(node, &intent.config, root));
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

/// `NCCL_IB_DISABLE` is read by NCCL's internal IB transport only
/// (`src/transport/net_ib/init.cc`): with an external net plugin loaded (HPC-X's IBext, the EFA
/// plugin) it has no effect (NVIDIA/nccl-tests#373: IB stayed on with `NCCL_IB_DISABLE=1`).
fn ib_disable_with_a_plugin(vars: &BTreeMap<String, Var>, root: &Path) -> Option<Finding> {
    let v = vars.get("NCCL_IB_DISABLE")?;
    let value = |k: &str| vars.get(k).map(|x| x.value.clone());
    let named = value("NCCL_NET_PLUGIN");
    if named.as_deref().map(str::trim).is_some_and(|n| n.eq_ignore_ascii_case("none")) {
        return None;
    }
    let plugin = crate::probe::host::find_net_plugin(root, value("LD_LIBRARY_PATH").as_deref(), named.as_deref())?;
    Some(
        Finding::new(
            Severity::Warning,
            "NCCL_IB_DISABLE",
            format!(
                "NCCL_IB_DISABLE={} has no effect while the net plugin {plugin} is loaded: only NCCL's own InfiniBand transport reads it, and NCCL prefers the plugin",
                v.value
            ),
        )
        .fix("to keep NCCL off InfiniBand set NCCL_NET=Socket, or NCCL_NET_PLUGIN=none to leave the plugin out; unset NCCL_IB_DISABLE if IB is wanted"),
    )
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
            s.push_str(&format!("  {}\n", f.headline()));
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
