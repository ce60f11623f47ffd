//! Reading `nvidia-smi topo -m` text: old (mlx5_N columns) and new (NIC# + legend) layouts,
//! tabs or spaces, ANSI underline codes around the header, leading whitespace or none.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// GPUs `a` and `b` (bus-order indices) joined by `links` NVLinks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvLink {
    pub a: usize,
    pub b: usize,
    pub links: u32,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TopoText {
    /// Column labels of the device block (GPU0…, NIC0… or mlx5_0…).
    pub columns: Vec<String>,
    /// Row label → cells in column order (device block only).
    pub rows: BTreeMap<String, Vec<String>>,
    /// `NIC0` → `mlx5_0` from the NIC Legend, when present.
    pub nic_legend: BTreeMap<String, String>,
    /// Row label → CPU affinity and NUMA affinity, when present.
    pub affinity: BTreeMap<String, (String, String)>,
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\u{1b}' {
            if it.peek() == Some(&'[') {
                it.next();
                for d in it.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn is_device_label(s: &str) -> bool {
    let numbered =
        |p: &str| s.strip_prefix(p).map(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit())).unwrap_or(false);
    numbered("GPU") || numbered("NIC") || (!s.contains(' ') && (s.starts_with("mlx") || s.starts_with("ib")))
}

pub fn parse_topo(text: &str) -> TopoText {
    let mut t = TopoText::default();
    let mut in_legend = false;
    for raw in text.lines() {
        let line = strip_ansi(raw);
        let l = line.trim();
        if l.starts_with("NIC Legend") {
            in_legend = true;
            continue;
        }
        if in_legend {
            if let Some((k, v)) = l.split_once(':') {
                if k.trim().starts_with("NIC") {
                    t.nic_legend.insert(k.trim().to_string(), v.trim().to_string());
                }
            }
            continue;
        }
        if l.starts_with("Legend") || l.starts_with('#') || l.is_empty() {
            continue;
        }
        // Affinity headers contain spaces ("CPU Affinity"), so split on tabs when there are any.
        let cells: Vec<String> = if line.contains('\t') {
            line.split('\t').map(|c| c.trim().to_string()).collect()
        } else {
            // Space-aligned: cells are separated by two or more spaces, except single-space "X".
            let mut v = Vec::new();
            for part in line.split("  ") {
                let p = part.trim();
                if !p.is_empty() {
                    v.push(p.to_string());
                }
            }
            if line.starts_with(char::is_whitespace) {
                v.insert(0, String::new());
            }
            v
        };
        if t.columns.is_empty() {
            let labels: Vec<String> = cells.iter().filter(|c| is_device_label(c)).cloned().collect();
            if labels.first().map(|c| c == "GPU0" || c == "NIC0").unwrap_or(false) {
                t.columns = labels;
            }
            continue;
        }
        let label = cells.first().cloned().unwrap_or_default();
        if !is_device_label(&label) {
            continue;
        }
        let rest: Vec<String> = cells.iter().skip(1).filter(|c| !c.is_empty()).cloned().collect();
        let n = t.columns.len();
        let dev: Vec<String> = rest.iter().take(n).map(|c| if c == "X" { "X".into() } else { c.clone() }).collect();
        if rest.len() >= n + 2 {
            t.affinity.insert(label.clone(), (rest[n].clone(), rest[n + 1].clone()));
        }
        t.rows.insert(label, dev);
    }
    t
}

impl TopoText {
    pub fn cell(&self, row: &str, col: &str) -> Option<&str> {
        let j = self.columns.iter().position(|c| c == col)?;
        self.rows.get(row)?.get(j).map(String::as_str)
    }

    /// NVLink counts between GPUs (by index), from `NV#` cells.
    pub fn nvlinks(&self) -> Vec<NvLink> {
        let mut out = Vec::new();
        for (r, cells) in &self.rows {
            let Some(a) = r.strip_prefix("GPU").and_then(|i| i.parse::<usize>().ok()) else { continue };
            for (j, c) in cells.iter().enumerate() {
                let Some(b) =
                    self.columns.get(j).and_then(|h| h.strip_prefix("GPU")).and_then(|i| i.parse::<usize>().ok())
                else {
                    continue;
                };
                if let Some(n) = c.strip_prefix("NV").and_then(|n| n.parse::<u32>().ok()) {
                    if a < b {
                        out.push(NvLink { a, b, links: n });
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_header_from_a_real_h200() {
        let t = parse_topo(include_str!("../tests/fixtures/h200-1gpu/nvidia-smi-topo-m.txt"));
        assert_eq!(t.columns, vec!["GPU0"]);
        assert_eq!(t.cell("GPU0", "GPU0"), Some("X"));
        assert_eq!(t.affinity["GPU0"], ("0-15".to_string(), "0".to_string()));
    }

    #[test]
    fn nvlinks() {
        let t = parse_topo("\tGPU0\tGPU1\tNIC0\tCPU Affinity\nGPU0\t X \tNV18\tPIX\t0-1\nGPU1\tNV18\t X \tSYS\t0-1\n");
        assert_eq!(t.nvlinks(), vec![NvLink { a: 0, b: 1, links: 18 }]);
    }
}
