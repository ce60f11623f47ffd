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
/// All inputs together: the same 1 GiB, and at most this many snapshots (a cluster of 100 000
/// nodes compares in groups).
const MAX_TOTAL: u64 = 1 << 30;
const MAX_SNAPSHOTS: usize = 100_000;

/// Where one snapshot comes from. Files are read where they are parsed, one at a time per
/// worker, so peak memory is a few snapshots, not the directory.
enum Source {
    /// Named on the command line: followed if a link (the caller named it).
    Named(PathBuf),
    /// Found by listing a directory: a link is refused, never followed.
    Listed(PathBuf),
}

/// Files named by `inputs` (directories listed, without following links in them), and the
/// problems found while listing. `-` is handled by the caller.
fn list(inputs: &[PathBuf], problems: &mut Vec<String>) -> Vec<Source> {
    let mut out = Vec::new();
    let mut total = 0u64;
    let mut over = 0usize;
    for p in inputs.iter().filter(|p| *p != Path::new("-")) {
        if !p.is_dir() {
            total += std::fs::metadata(p).map_or(0, |m| m.len());
            out.push(Source::Named(p.clone()));
            continue;
        }
        let rd = match std::fs::read_dir(p) {
            Ok(rd) => rd,
            Err(e) => {
                problems.push(format!("{}: cannot list: {e}", p.display()));
                continue;
            }
        };
        let mut files: Vec<(PathBuf, u64)> = Vec::new();
        let mut links = Vec::new();
        for e in rd.flatten() {
            let f = e.path();
            if !f.extension().is_some_and(|x| x == "json" || x == "yaml" || x == "yml") {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_symlink() => links.push(e.file_name().to_string_lossy().into_owned()),
                Ok(t) if t.is_file() => {
                    if files.len() + out.len() >= MAX_SNAPSHOTS {
                        over += 1;
                        continue;
                    }
                    files.push((f, e.metadata().map_or(0, |m| m.len())));
                }
                _ => {}
            }
        }
        if let Some(m) = links_not_followed(p, links) {
            problems.push(m);
        }
        files.sort();
        for (f, len) in files {
            if total + len > MAX_TOTAL {
                over += 1;
                continue;
            }
            total += len;
            out.push(Source::Listed(f));
        }
    }
    if over > 0 {
        problems.push(format!(
            "{over} snapshot file(s) not read: fleet reads at most {MAX_SNAPSHOTS} snapshots and {} GiB in one run; compare in groups",
            MAX_TOTAL >> 30
        ));
    }
    out
}

/// The symbolic links a directory held, not followed (they may point anywhere).
fn links_not_followed(p: &Path, mut links: Vec<String>) -> Option<String> {
    if links.is_empty() {
        return None;
    }
    links.sort();
    let shown: Vec<_> = links.iter().take(5).map(|l| crate::text::printable(l, 80)).collect();
    Some(format!(
        "{}: {} symbolic link{} not followed ({}{}): a directory's links may point anywhere; name a file itself to read it",
        p.display(),
        links.len(),
        if links.len() == 1 { "" } else { "s" },
        shown.join(", "),
        if links.len() > 5 { ", …" } else { "" }
    ))
}

/// A snapshot's host name, or the file's name when it has none; at most 255 characters (a host
/// name is at most 253), whatever a snapshot says.
fn host_of(n: &crate::probe::model::Node, origin: &str) -> String {
    let h = n.hostname.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| {
        Path::new(origin).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| origin.to_string())
    });
    // A snapshot is someone else's file: its host name reaches the text report, where a line
    // break could forge a line ("3 nodes: … 0 differ"). Control characters are shown escaped.
    crate::text::printable(&h, 255)
}

type Parsed = std::result::Result<(String, NodeFacts), String>;

fn facts_of(origin: &str, text: std::io::Result<String>, intent: &Intent) -> Parsed {
    let n = text
        .map_err(|e| format!("cannot read: {e}"))
        .and_then(|t| crate::snapshot::parse(&t).map_err(|e| format!("{e:#}")))?;
    let host = host_of(&n, origin);
    Ok((host.clone(), fleet::node_facts(&host, &n, intent)))
}

/// JSON documents from standard input, one at a time (concatenated or one per line): at most
/// `MAX_STDIN` bytes; a broken document ends the stream (it cannot be resynchronised).
fn stdin_docs(intent: &Intent, out: &mut Vec<(String, Parsed)>) {
    let stdin = std::io::stdin();
    let reader = std::io::BufReader::new(stdin.lock().take(MAX_STDIN));
    let stream = serde_json::Deserializer::from_reader(reader).into_iter::<serde_json::Value>();
    for (n, v) in stream.enumerate() {
        let origin = format!("stdin document {}", n + 1);
        match v {
            Ok(v) => {
                let parsed = facts_of(&origin, Ok(v.to_string()), intent);
                out.push((origin, parsed));
            }
            Err(e) => {
                let why = crate::input::parse_error_text(&e.to_string());
                out.push((origin, Err(format!("{}:{}: {why}", e.line(), e.column()))));
                break;
            }
        }
        if out.len() >= MAX_SNAPSHOTS {
            break;
        }
    }
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
    let sources = list(inputs, &mut problems);
    // Read, parse and decide on a few threads, one file at a time each: a thousand snapshots
    // are mostly parsing, and only their facts are kept.
    let mut parsed: Vec<(String, Parsed)> = crate::parallel::par_map(&sources, |src| {
        let (origin, text) = match src {
            Source::Named(p) => (p.display().to_string(), crate::input::read_text(p, crate::input::MAX_INPUT)),
            Source::Listed(p) => {
                (p.display().to_string(), crate::input::read_text_nofollow(p, crate::input::MAX_INPUT))
            }
        };
        let r = facts_of(&origin, text, &intent);
        (origin, r)
    });
    if inputs.iter().any(|p| p == Path::new("-")) {
        stdin_docs(&intent, &mut parsed);
    }
    let facts = one_per_host(parsed, &mut problems);
    for p in &problems {
        let _ = writeln!(std::io::stderr(), "ibwire fleet: error: {}", crate::text::for_terminal(p));
    }
    if facts.is_empty() {
        bail!("no snapshot could be read");
    }
    let report = fleet::compare(&facts);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "schema": crate::render::JSON_SCHEMA, "report": report, "input_errors": problems })
            )?
        );
    } else {
        print!("{}", crate::text::for_stdout(&text(&report)));
    }
    // Exit 1 when nodes differ on anything that changes what NCCL does (healthy ports, rates,
    // widths, link layer, MTU, GPUs, driver, GPUDirect, partitions, bootstrap); firmware
    // versions alone are a warning.
    let errors = report.differences.iter().any(|d| d.severity == Severity::Error || d.attribute != "hca_firmware");
    Ok(if errors || !problems.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The facts of each host once: a second snapshot of a host, or one that could not be read, is
/// a problem said and skipped.
fn one_per_host(parsed: Vec<(String, Parsed)>, problems: &mut Vec<String>) -> Vec<NodeFacts> {
    let mut seen: std::collections::BTreeMap<String, String> = Default::default();
    let mut facts: Vec<NodeFacts> = Vec::new();
    for (origin, r) in parsed {
        match r {
            Ok((host, f)) => {
                if let Some(first) = seen.get(&host) {
                    problems.push(format!(
                        "{origin}: a second snapshot of host {host} (the first came from {first}); skipped"
                    ));
                    continue;
                }
                seen.insert(host, origin);
                facts.push(f);
            }
            Err(e) => problems.push(format!("{origin}: {}; skipped", crate::text::one_line(&e))),
        }
    }
    facts
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
        // Only ACS is read from PCI config space past its first 64 bytes, which needs root.
        let why = if label.starts_with("ACS") { ": ACS needs root" } else { "" };
        let _ = writeln!(
            s,
            "note: {label} is unknown in the snapshots of {nodes} (an older snapshot, or a fact the probe could not read there{why}); not compared there"
        );
    }
    s
}
