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
        match p.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            _ => Format::Yaml,
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

/// Parse either format; the error text starts with `LINE:COLUMN: `.
pub fn parse(text: &str) -> Result<Node> {
    let node: Node = if text.trim_start().starts_with('{') {
        serde_json::from_str(text)
            .map_err(|e| anyhow!("{}:{}: {}", e.line(), e.column(), strip_json_pos(&e.to_string())))?
    } else {
        crate::input::yaml_guard(text)?;
        serde_yaml::from_str(text).map_err(|e| match e.location() {
            Some(l) => anyhow!("{}:{}: {}", l.line(), l.column(), strip_yaml_pos(&e.to_string())),
            None => anyhow!("0:0: {}", e),
        })?
    };
    if node.schema != SCHEMA {
        bail!("1:1: snapshot schema {} is not supported (this ibwire reads schema {})", node.schema, SCHEMA);
    }
    Ok(node)
}

fn strip_json_pos(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

fn strip_yaml_pos(s: &str) -> String {
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("schema: 1\nsource: x\nrdma: [\n").unwrap_err().to_string();
        assert!(e.starts_with("4:1:") || e.starts_with("3:"), "{e}");
        let e = parse("{\"schema\": 1,\n \"bogus\": 2}").unwrap_err().to_string();
        assert!(e.starts_with("2:"), "{e}");
        assert!(e.contains("unknown field `bogus`"), "{e}");
        let e = parse("- just\n- a list\n").unwrap_err().to_string();
        assert!(e.contains("1:1"), "{e}");
    }
}
