//! Saving and replaying node snapshots (YAML or JSON), with errors that point at the line.

use crate::probe::{Node, SCHEMA};
use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

impl Format {
    pub fn for_path(p: &Path) -> Format {
        // JSON unless asked for YAML by name: `fleet` parses 1 024 JSON snapshots in ~0.2 s of
        // CPU and YAML ones in ~2 s (libyaml's scanner; bench/run.sh measures both).
        match p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("yaml" | "yml") => Format::Yaml,
            _ => Format::Json,
        }
    }
}

pub fn to_string(node: &Node, f: Format) -> Result<String> {
    Ok(match f {
        Format::Json => serde_json::to_string_pretty(node)? + "\n",
        Format::Yaml => serde_yaml::to_string(node)?,
    })
}

pub fn save(node: &Node, path: &Path) -> Result<()> {
    let text = to_string(node, Format::for_path(path))?;
    std::fs::write(path, text).with_context(|| format!("cannot write snapshot {}", path.display()))
}

pub fn load(path: &Path) -> Result<Node> {
    let text = crate::input::read_text(path, crate::input::MAX_INPUT)
        .with_context(|| format!("cannot read snapshot {}", path.display()))?;
    parse(&text).map_err(|e| anyhow!("snapshot {}:{}", path.display(), e))
}

/// Only the version, read leniently, to say why a snapshot of another version does not load.
#[derive(serde::Deserialize)]
struct Head {
    schema: u32,
}

/// Parse either format; the error text starts with `LINE:COLUMN: `. Schema 1 (before the P_Key
/// at index 0 was recorded) loads with that fact unknown; anything else but the current schema
/// is refused with the version named.
const MIGRATED_2: &str =
    "migrated from snapshot schema 2: ACS on PCIe bridges, the IOMMU, the kernel and the NVIDIA module kind are unknown";

pub fn parse(text: &str) -> Result<Node> {
    use crate::input::parse_error_text;
    let json = text.trim_start().starts_with('{');
    if !json {
        crate::input::yaml_guard(text)?;
    }
    let parsed: Result<Node> = if json {
        serde_json::from_str(text)
            .map_err(|e| anyhow!("{}:{}: {}", e.line(), e.column(), parse_error_text(&e.to_string())))
    } else {
        serde_yaml::from_str(text).map_err(|e| match e.location() {
            Some(l) => anyhow!("{}:{}: {}", l.line(), l.column(), parse_error_text(&e.to_string())),
            None => anyhow!("0:0: {}", parse_error_text(&e.to_string())),
        })
    };
    // The version is read again, leniently, only to explain a snapshot that did not parse.
    let head = || -> Option<Head> {
        if json {
            serde_json::from_str(text).ok()
        } else {
            serde_yaml::from_str(text).ok()
        }
    };
    let mut node = match parsed.map_err(|e| (e, head())) {
        Ok(n) => n,
        Err((e, Some(h))) if h.schema != SCHEMA && h.schema != 1 && h.schema != 2 => bail!(
            "1:1: snapshot schema {} is not supported (this ibwire reads schemas 1 to {SCHEMA}); re-run `ibwire probe --save` with this version ({e:#})",
            h.schema
        ),
        Err((e, Some(_))) => {
            bail!("{e:#} (not a snapshot this version wrote, or one from a development build; re-run `ibwire probe --save`)")
        }
        Err((e, None)) => bail!("{e:#} (not an ibwire snapshot: `ibwire probe --save FILE` writes one)"),
    };
    match node.schema {
        SCHEMA => {}
        1 => {
            node.schema = SCHEMA;
            node.notes.push("migrated from snapshot schema 1: the P_Key at index 0 of each port is unknown".into());
            node.notes.push(MIGRATED_2.into());
        }
        2 => {
            node.schema = SCHEMA;
            node.notes.push(MIGRATED_2.into());
        }
        n => bail!("1:1: snapshot schema {n} is not supported (this ibwire reads schemas 1 to {SCHEMA})"),
    }
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_file_is_not_dumped_into_the_error() {
        let text = "This is a README.\nIt has many lines of prose that are not a snapshot at all. ".repeat(50);
        let e = parse(&text).unwrap_err().to_string();
        assert!(e.len() < 300 && !e.contains('\n'), "{e}");
        assert!(e.contains("not an ibwire snapshot"), "{e}");
        let e = parse("{\"schema\": 7, \"x\": 1}").unwrap_err().to_string();
        assert!(e.contains("schema 7 is not supported"), "{e}");
    }

    #[test]
    fn every_snapshot_shipped_in_the_repository_loads() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
        let mut n = 0;
        for d in std::fs::read_dir(dir).unwrap().flatten() {
            let f = d.path().join("ibwire-probe.json");
            if f.exists() {
                load(&f).unwrap_or_else(|e| panic!("{e:#}"));
                n += 1;
            }
        }
        assert!(n >= 2);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("schema: 1\nsource: x\nrdma: [\n").unwrap_err().to_string();
        assert!(e.starts_with("4:1:") || e.starts_with("3:"), "{e}");
        let e = parse("{\"schema\": 1,\n \"bogus\": 2}").unwrap_err().to_string();
        assert!(e.starts_with("2:"), "{e}");
        assert!(e.contains("unknown field (not shown), expected one of `schema`"), "{e}");
        assert!(!e.contains("bogus"), "{e}");
        let e = parse("- just\n- a list\n").unwrap_err().to_string();
        assert!(e.contains("1:1"), "{e}");
    }
}
