//! `ibwire fleet`: read one snapshot per node and report what differs between them.
//!
//! Inputs: snapshot files (JSON or YAML, as `probe --save` or `probe --json` wrote them),
//! directories of them, or `-` for JSON documents on standard input. A snapshot that cannot be
//! read, or a second one for a host already read, is one line on stderr; the rest are compared.

use crate::plan::fleet::{self, NodeFacts, Report};
use crate::plan::{Intent, Master, Severity};
use anyhow::{bail, Result};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Standard input holds at most this much (1 024 snapshots of a large node).
const MAX_STDIN: u64 = 1 << 30;

/// Every snapshot named by `inputs`: (where it came from, its text or why it could not be read).
fn gather(inputs: &[PathBuf]) -> Vec<(String, Result<String>)> {
    let mut out = Vec::new();
    for p in inputs {
        if p == Path::new("-") {
            let mut s = String::new();
            match std::io::stdin().take(MAX_STDIN).read_to_string(&mut s) {
                Ok(_) => {
                    // Concatenated (or one per line) JSON documents.
                    let mut n = 0;
                    let stream = serde_json::Deserializer::from_str(&s).into_iter::<serde_json::Value>();
                    for v in stream {
                        n += 1;
                        let origin = format!("stdin document {n}");
                        match v {
                            Ok(v) => out.push((origin, Ok(v.to_string()))),
                            Err(e) => {
                                out.push((origin, Err(anyhow::anyhow!("{}:{}: {e}", e.line(), e.column()))));
                                break; // the stream cannot be resynchronised after a broken document
                            }
                        }
                    }
                }
                Err(e) => out.push(("stdin".into(), Err(anyhow::anyhow!("cannot read: {e}")))),
            }
        } else if p.is_dir() {
            let mut files: Vec<PathBuf> = match std::fs::read_dir(p) {
                Ok(rd) => rd
                    .flatten()
                    .map(|e| e.path())
                    .filter(|f| f.extension().is_some_and(|x| x == "json" || x == "yaml" || x == "yml"))
                    .collect(),
                Err(e) => {
                    out.push((p.display().to_string(), Err(anyhow::anyhow!("cannot list: {e}"))));
                    continue;
                }
            };
            files.sort();
            for f in files {
                out.push((
                    f.display().to_string(),
                    crate::input::read_text(&f, crate::input::MAX_INPUT).map_err(Into::into),
                ));
            }
        } else {
            out.push((
                p.display().to_string(),
                crate::input::read_text(p, crate::input::MAX_INPUT).map_err(Into::into),
            ));
        }
    }
    out
}

pub fn run(inputs: &[PathBuf], master_addr: Option<&str>, config: Option<&Path>, json: bool) -> Result<ExitCode> {
    if inputs.is_empty() {
        bail!("no snapshots given: name files, a directory, or - for standard input");
    }
    let cfg = crate::config::load(config)?;
    let master = match master_addr {
        Some(m) => {
            Some(Master { name: m.to_string(), ip: crate::resolve::resolve(m, std::time::Duration::from_secs(5))? })
        }
        None => None,
    };
    let intent = Intent { master, config: cfg, env: Default::default() };
    let mut problems: Vec<String> = Vec::new();
    let mut seen: std::collections::BTreeMap<String, String> = Default::default();
    let mut facts: Vec<NodeFacts> = Vec::new();
    let docs = gather(inputs);
    // Parse and decide on a few threads: a thousand snapshots are mostly JSON parsing.
    let parsed = crate::probe::sysroot::par_map(&docs, |(origin, text)| {
        let node = text
            .as_ref()
            .map_err(|e| format!("{e:#}"))
            .and_then(|t| crate::snapshot::parse(t).map_err(|e| format!("{e:#}")));
        node.map(|n| {
            let host = n.hostname.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| {
                Path::new(origin)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| origin.clone())
            });
            (host.clone(), fleet::node_facts(&host, &n, &intent))
        })
    });
    for ((origin, _), r) in docs.iter().zip(parsed) {
        match r {
            Ok((host, f)) => {
                if let Some(first) = seen.get(&host) {
                    problems.push(format!(
                        "{origin}: a second snapshot of host {host} (the first came from {first}); skipped"
                    ));
                    continue;
                }
                seen.insert(host, origin.clone());
                facts.push(f);
            }
            Err(e) => {
                problems.push(format!("{origin}: {}; skipped", e.split_whitespace().collect::<Vec<_>>().join(" ")))
            }
        }
    }
    for p in &problems {
        let _ = writeln!(std::io::stderr(), "ibwire fleet: error: {p}");
    }
    if facts.is_empty() {
        bail!("no snapshot could be read");
    }
    let report = fleet::compare(&facts);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "report": report, "input_errors": problems }))?
        );
    } else {
        print!("{}", text(&report));
    }
    // Exit 1 when nodes differ on anything that changes what NCCL does (healthy ports, rates,
    // widths, link layer, MTU, GPUs, driver, GPUDirect, partitions, bootstrap); firmware
    // versions alone are a warning.
    let errors = report.differences.iter().any(|d| d.severity == Severity::Error || d.attribute != "hca_firmware");
    Ok(if errors || !problems.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// One row per attribute that differs, nodes grouped by value; one line for what agrees.
pub fn text(r: &Report) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let (e, w) = (
        r.differences.iter().filter(|d| d.severity == Severity::Error).count(),
        r.differences.iter().filter(|d| d.severity == Severity::Warning).count(),
    );
    let _ = writeln!(
        s,
        "{} nodes: {} facts agree, {} differ ({e} error{}, {w} warning{})",
        r.nodes,
        r.agree.len(),
        r.differences.len(),
        if e == 1 { "" } else { "s" },
        if w == 1 { "" } else { "s" }
    );
    if r.differences.is_empty() {
        return s;
    }
    let lw = r.differences.iter().map(|d| d.label.chars().count()).max().unwrap_or(0).max(4);
    let vw = r
        .differences
        .iter()
        .flat_map(|d| d.groups.iter().map(|g| g.value.chars().count()))
        .max()
        .unwrap_or(0)
        .clamp(5, 48);
    let _ = writeln!(s, "\n{:<8} {:<lw$} {:<vw$} NODES", "SEVERITY", "FACT", "VALUE");
    for d in &r.differences {
        for (i, g) in d.groups.iter().enumerate() {
            let (sev, label) =
                if i == 0 { (format!("{:?}", d.severity).to_lowercase(), d.label) } else { (String::new(), "") };
            let _ = writeln!(s, "{sev:<8} {label:<lw$} {:<vw$} {} ({})", g.value, g.nodes, g.count);
        }
    }
    let _ = writeln!(s);
    for d in &r.differences {
        for m in &d.messages {
            let _ = writeln!(s, "{}: {m}", format!("{:?}", d.severity).to_lowercase());
        }
    }
    for (label, nodes) in &r.unknown {
        let _ = writeln!(
            s,
            "note: {label} is not recorded in the snapshots of {nodes} (older snapshots); not compared there"
        );
    }
    s
}
