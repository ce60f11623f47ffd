//! Rendering decided settings for their consumers: POSIX sh, enroot's environ file, JSON.

use crate::plan::{Plan, Severity, Source};
use crate::shell::{sh_quote, valid_name};
use anyhow::{bail, Result};
use std::fmt::Write;

/// `export NAME='value'` lines that `eval "$(ibwire env)"` reproduces byte for byte.
pub fn sh(plan: &Plan) -> Result<String> {
    let mut s = String::new();
    for st in &plan.settings {
        if !valid_name(&st.name) {
            bail!("refusing to write variable name {:?}", st.name);
        }
        if st.value.contains('\0') {
            bail!("{}: value contains a NUL byte", st.name);
        }
        writeln!(s, "export {}={}", st.name, sh_quote(&st.value))?;
    }
    Ok(s)
}

/// One line of a Slurm TaskProlog's output: `export NAME=value`. slurmstepd reads it without a
/// shell — no quoting, no escapes, the value is the rest of the line — so a value with a line
/// break, a NUL, or blanks at either end (which would be lost or change meaning) cannot be
/// written: refused, with the reason.
pub fn slurm_line(name: &str, value: &str) -> Result<String> {
    if !valid_name(name) {
        bail!("refusing to write variable name {name:?} for Slurm");
    }
    if value.contains(['\n', '\r', '\0']) {
        bail!("{name}: value contains a line break or NUL; a TaskProlog line cannot carry it");
    }
    if value.trim() != value {
        bail!("{name}: value has blanks at its start or end, which Slurm's TaskProlog parsing would not keep");
    }
    Ok(format!("export {name}={value}"))
}

/// TaskProlog lines for every setting; refused values are left out (named in the error list).
pub fn slurm(plan: &Plan) -> (String, Vec<String>) {
    let mut s = String::new();
    let mut refused = Vec::new();
    for st in &plan.settings {
        match slurm_line(&st.name, &st.value) {
            Ok(l) => {
                s.push_str(&l);
                s.push('\n');
            }
            Err(e) => refused.push(format!("{e:#}")),
        }
    }
    (s, refused)
}

/// One `NAME="value"` line for enroot's environ file. enroot strips exactly one pair of
/// surrounding quotes and has no escapes and no multi-line values, so the value is wrapped in
/// quotes (it survives even if it starts or ends with a quote) and line breaks are refused.
pub fn environ_line(name: &str, value: &str) -> Result<String> {
    if !valid_name(name) || name.starts_with("ENROOT_") {
        bail!("refusing to write variable name {name:?} to the environ file");
    }
    if value.contains(['\n', '\r', '\0']) {
        bail!("{name}: value contains a line break or NUL; enroot's environ format cannot carry it");
    }
    Ok(format!("{name}=\"{value}\""))
}

pub fn enroot(plan: &Plan) -> Result<String> {
    let mut s = String::new();
    for st in &plan.settings {
        s.push_str(&environ_line(&st.name, &st.value)?);
        s.push('\n');
    }
    Ok(s)
}

/// The version of every `--json`/`--format json` output but probe's (a snapshot has its own):
/// fields are only added within a version; a rename, a removal or a change of meaning bumps it
/// (docs/json.md).
pub const JSON_SCHEMA: u32 = 1;

pub fn json(plan: &Plan) -> serde_json::Value {
    let env: serde_json::Map<String, serde_json::Value> =
        plan.settings.iter().map(|s| (s.name.clone(), serde_json::Value::String(s.value.clone()))).collect();
    serde_json::json!({
        "schema": JSON_SCHEMA,
        "env": env,
        "decisions": plan.settings.iter().map(|s| serde_json::json!({
            "name": s.name, "value": s.value, "reason": s.reason, "source": s.source,
        })).collect::<Vec<_>>(),
        "excluded": plan.excluded,
        "findings": plan.findings,
        "nproc_per_node": plan.nproc_per_node,
    })
}

/// The decisions in words: what was chosen and the evidence.
pub fn explain(plan: &Plan) -> String {
    let mut s = String::new();
    for st in &plan.settings {
        let who = match st.source {
            Source::Decided => "",
            Source::User => " (yours, kept)",
        };
        let _ = writeln!(s, "{}={}{}\n    {}", st.name, st.value, who, st.reason);
    }
    // SR-IOV virtual functions, one line each, would be hundreds of lines on a large node:
    // past a few, one line says how many and which (the JSON output lists every one).
    let vf = |e: &&crate::plan::Exclusion| e.kind == crate::plan::ExclusionKind::VirtualFunction;
    let vfs: Vec<&crate::plan::Exclusion> = plan.excluded.iter().filter(vf).collect();
    for e in plan.excluded.iter().filter(|e| vfs.len() <= 4 || !vf(e)) {
        let port = e.port.map(|p| format!(" port {p}")).unwrap_or_default();
        let _ = writeln!(s, "{}{} excluded: {}", e.device, port, e.reason);
    }
    if vfs.len() > 4 {
        let _ = writeln!(
            s,
            "{} SR-IOV virtual functions excluded ({} … {}): their physical functions are used (--format json lists each)",
            vfs.len(),
            vfs[0].device,
            vfs[vfs.len() - 1].device
        );
    }
    for f in &plan.findings {
        let sev = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "note",
        };
        let _ = writeln!(s, "{sev}: {}", f.headline());
        if let Some(fix) = &f.fix {
            let _ = writeln!(s, "    fix: {fix}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environ_refuses_line_breaks_and_wraps_quotes() {
        assert_eq!(environ_line("A", "x'y\"").unwrap(), "A=\"x'y\"\"");
        assert!(environ_line("A", "a\nB=evil").is_err());
        assert!(environ_line("ENROOT_ROOTFS", "x").is_err());
        assert!(environ_line("A B", "x").is_err());
    }

    #[test]
    fn names() {
        assert!(valid_name("NCCL_IB_HCA"));
        assert!(!valid_name("1X"));
        assert!(!valid_name("A-B"));
        assert!(!valid_name(""));
    }
}
