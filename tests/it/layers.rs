//! The layers of ARCHITECTURE.md, enforced: every `crate::…` and `super::…` path in `src/`
//! (outside `#[cfg(test)]` modules) must point to a layer its file may import, and `plan/` must
//! not touch the filesystem. A new arrow that runs the wrong way fails here with the file, the
//! line and the rule.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which modules a file in `from` (its top-level module) may import.
fn allowed(from: &str, to: &str) -> bool {
    if from == to {
        return true;
    }
    match from {
        "cmd" => to != "main",
        "render" => matches!(to, "plan" | "probe" | "shell" | "text"),
        "plan" => matches!(to, "probe" | "nccl" | "slurm" | "config" | "text" | "shell"),
        "snapshot" => matches!(to, "probe" | "input" | "text"),
        "probe" => matches!(to, "nvsmi" | "subprocess" | "parallel" | "text" | "input"),
        "config" => matches!(to, "input" | "text"),
        "enroot" => matches!(to, "shell" | "input" | "text"),
        "input" | "rendezvous" | "nccl" => to == "text",
        "resolve" => matches!(to, "subprocess" | "text"),
        // Every other leaf (slurm, text, shell, parallel, nvsmi, subprocess…) imports no module.
        _ => false,
    }
}

/// `probe`'s readers: `plan` may use the model, not the code that reads the node.
const PROBE_READERS: [&str; 7] = ["sysroot", "host", "net", "rdma", "pci", "gpu", "capture"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text before the first `#[cfg(test)]` (tests sit at the end of each file here).
fn product(text: &str) -> &str {
    text.find("#[cfg(test)]").map(|i| &text[..i]).unwrap_or(text)
}

/// `(line, target module, rest of the path)` for every crate-relative path in the text.
fn paths(text: &str, here: &[String]) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::").or_else(|| rest.find("super::")) {
            let (abs, after): (Vec<String>, &str) = if rest[i..].starts_with("crate::") {
                (Vec::new(), &rest[i + 7..])
            } else {
                // super:: (possibly repeated) from the file's own module path.
                let mut up = here.to_vec();
                let mut a = &rest[i..];
                while let Some(r) = a.strip_prefix("super::") {
                    up.pop();
                    a = r;
                }
                (up, a)
            };
            let names: Vec<String> = if let Some(group) = after.strip_prefix('{') {
                let body = group.split('}').next().unwrap_or("");
                body.split(',').map(|s| s.trim().split("::").next().unwrap_or("").to_string()).collect()
            } else {
                vec![after.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("").to_string()]
            };
            for name in names.into_iter().filter(|s| !s.is_empty() && s != "self") {
                let mut full = abs.clone();
                full.push(name);
                let tail =
                    after.split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == ')').next().unwrap_or("");
                out.push((
                    n + 1,
                    full[0].clone(),
                    format!(
                        "{}{}",
                        full.join("::"),
                        tail.split_once("::").map(|(_, t)| format!("::{t}")).unwrap_or_default()
                    ),
                ));
            }
            // Past the whole prefix (`super::super::` once, not once per `super::`).
            rest = after;
        }
    }
    out
}

#[test]
fn imports_follow_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    all.sort();
    let mut bad = Vec::new();
    let mut edges: BTreeMap<(String, String), usize> = BTreeMap::new();
    for f in &all {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().to_string();
        if rel == "main.rs" || rel == "lib.rs" {
            continue;
        }
        // The file's module path: plan/hook.rs → [plan, hook]; probe/mod.rs → [probe].
        let mut here: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
        if here.last().is_some_and(|l| l == "mod") {
            here.pop();
        }
        let from = here[0].clone();
        let text = std::fs::read_to_string(f).unwrap();
        let code = product(&text);
        for (line, to, path) in paths(code, &here) {
            if matches!(to.as_str(), "" | "Result" | "Error") {
                continue;
            }
            *edges.entry((from.clone(), to.clone())).or_default() += 1;
            if !allowed(&from, &to) {
                bad.push(format!("src/{rel}:{line}: {from} imports {to} ({path})"));
            }
            if from == "plan" && to == "probe" {
                let sub = path.split("::").nth(1).unwrap_or("");
                if PROBE_READERS.contains(&sub) {
                    bad.push(format!(
                        "src/{rel}:{line}: plan uses probe's reader {sub} ({path}); only the model is plan's"
                    ));
                }
            }
        }
        if from == "plan" && (code.contains("std::fs") || code.contains("File::open")) {
            bad.push(format!("src/{rel}: plan touches the filesystem"));
        }
    }
    assert!(bad.is_empty(), "imports against ARCHITECTURE.md's layers:\n{}", bad.join("\n"));
    // The test sees what it checks: the arrows the layers are made of are there.
    for e in [("cmd", "plan"), ("plan", "probe"), ("render", "plan"), ("probe", "nvsmi")] {
        assert!(
            edges.contains_key(&(e.0.to_string(), e.1.to_string())),
            "no {} → {} import found: the scan is broken",
            e.0,
            e.1
        );
    }
}

#[test]
fn the_checker_catches_a_wrong_arrow() {
    let p = paths(
        "use crate::render::sh;\nlet x = super::super::cmd::run();\nuse crate::{probe::sysroot::SysRoot, text};",
        &["plan".into(), "launch".into()],
    );
    let targets: Vec<&str> = p.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(targets, ["render", "cmd", "probe", "text"]);
    assert!(!allowed("plan", "render") && !allowed("plan", "cmd") && allowed("plan", "probe"));
    assert!(p[2].2.starts_with("probe::sysroot"), "{:?}", p[2]);
}

/// Every function outside `#[cfg(test)]` modules of `src/`, with its length in lines: from its
/// `fn` line to the first line after it that closes it at the same indentation (rustfmt puts a
/// function's closing brace there; `cargo fmt --check` runs in CI).
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, l) in lines[..end].iter().enumerate() {
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        let mut rest = t;
        for w in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe ", "extern \"C\" "] {
            rest = rest.strip_prefix(w).unwrap_or(rest);
        }
        let Some(sig) = rest.strip_prefix("fn ") else { continue };
        let name: String = sig.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let close = format!("{indent}}}");
        // a declaration without a body (a trait's) ends with `;` before any `{`
        let Some(open) = (i..end).find(|&j| lines[j].contains('{') || lines[j].trim_end().ends_with(';')) else {
            continue;
        };
        if !lines[open].contains('{') {
            continue;
        }
        if lines[open].trim_end().ends_with('}') && open == i {
            out.push((name, 1));
            continue;
        }
        if let Some(last) = (open + 1..end).find(|&j| lines[j] == close) {
            out.push((name, last - i + 1));
        }
    }
    out
}

/// Issue 43: functions that fit a screen. None over 100 lines, at most five over 60.
#[test]
fn functions_fit_a_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&root, &mut all);
    let (mut long, mut over_100) = (Vec::new(), Vec::new());
    for f in &all {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        for (name, n) in function_lengths(&text) {
            if n > 100 {
                over_100.push(format!("{rel}::{name} ({n} lines)"));
            } else if n > 60 {
                long.push(format!("{rel}::{name} ({n} lines)"));
            }
        }
    }
    assert!(over_100.is_empty(), "functions over 100 lines: {over_100:?}");
    assert!(long.len() <= 5, "{} functions over 60 lines (at most 5): {long:?}", long.len());
}

#[test]
fn the_length_counter_counts() {
    let text = "fn a() {\n    x();\n}\n\npub(crate) fn b(\n    y: u8,\n) -> u8 {\n    if y {\n    }\n    y\n}\ntrait T {\n    fn c(&self);\n    fn d(&self) {}\n}\n#[cfg(test)]\nmod tests {\n    fn e() {\n    }\n}\n";
    assert_eq!(function_lengths(text), vec![("a".to_string(), 3), ("b".to_string(), 7), ("d".to_string(), 1)]);
}
