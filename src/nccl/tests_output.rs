//! nccl-tests output (`all_reduce_perf` and friends): header, rank lines, the table, the footer.

use super::unwrap_line;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Block {
    pub time_us: f64,
    pub algbw: f64,
    pub busbw: f64,
    /// None when `N/A` (no check) or cut off.
    pub wrong: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub size: u64,
    pub count: u64,
    pub dtype: String,
    pub redop: String,
    pub root: i64,
    pub out_of_place: Block,
    pub in_place: Option<Block>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestsOutput {
    pub ranks: usize,
    pub hosts: Vec<String>,
    pub devices: Vec<String>,
    pub rows: Vec<Row>,
    pub avg_busbw: Option<f64>,
    /// Rows whose in-place block is incomplete (a cut-off last line).
    pub truncated_rows: usize,
    pub wrong_total: u64,
}

impl TestsOutput {
    /// The best bus bandwidth of the sweep, in or out of place (what a ceiling is compared with).
    pub fn peak_busbw(&self) -> Option<f64> {
        self.rows
            .iter()
            .flat_map(|r| std::iter::once(r.out_of_place.busbw).chain(r.in_place.as_ref().map(|b| b.busbw)))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    }
}

fn num(s: &str) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

fn block(f: &[&str]) -> Option<Block> {
    if f.len() < 3 {
        return None;
    }
    Some(Block {
        time_us: num(f[0])?,
        algbw: num(f[1])?,
        busbw: num(f[2])?,
        wrong: f.get(3).and_then(|w| w.parse().ok()),
    })
}

/// Reads nccl-tests output one line at a time (NCCL's own lines interleaved are skipped).
#[derive(Default)]
pub struct Parser {
    seen: std::collections::HashSet<(u8, String)>,
    t: TestsOutput,
}

const MAX_ROWS: usize = 100_000;

impl Parser {
    pub fn line(&mut self, raw: &str) {
        let cleaned = super::clean(raw);
        self.line_unwrapped(unwrap_line(&cleaned));
    }

    /// One line already cleaned and unwrapped.
    pub fn line_unwrapped(&mut self, l: &str) {
        let (seen, t) = (&mut self.seen, &mut self.t);
        // `#  Rank  0 Group  0 Pid 4766 on host device  0 [0x21] …`; before 2.x's groups,
        // `#   Rank  0 Pid 131398 on    host device  0 [0xaf] …`
        let rank_line = l
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix("Rank "))
            .filter(|r| r.trim_start().starts_with(|c: char| c.is_ascii_digit()));
        if let Some(rest) = rank_line {
            t.ranks += 1;
            let w: Vec<&str> = rest.split_whitespace().collect();
            if let Some(i) = w.iter().position(|x| *x == "on") {
                if let Some(h) = w.get(i + 1) {
                    if seen.len() < 65536 && seen.insert((0, h.to_string())) {
                        t.hosts.push(h.to_string());
                    }
                }
            }
            if let Some(i) = rest.find(']') {
                let d = rest[i + 1..].trim().to_string();
                if !d.is_empty() && seen.len() < 65536 && seen.insert((1, d.clone())) {
                    t.devices.push(d);
                }
            }
            return;
        }
        if let Some(v) = l.strip_prefix("# Avg bus bandwidth") {
            t.avg_busbw = v.trim_start_matches([' ', ':']).split_whitespace().next().and_then(num);
            return;
        }
        if l.starts_with('#') || !l.starts_with(|c: char| c.is_ascii_digit()) || t.rows.len() >= MAX_ROWS {
            return;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 8 {
            return;
        }
        let (Ok(size), Ok(count), Ok(root)) = (f[0].parse::<u64>(), f[1].parse::<u64>(), f[4].parse::<i64>()) else {
            return;
        };
        let Some(oop) = block(&f[5..]) else { return };
        let ip = if f.len() >= 12 { block(&f[9..]) } else { None };
        if f.len() < 13 {
            t.truncated_rows += 1;
        }
        t.wrong_total += oop.wrong.unwrap_or(0) + ip.as_ref().and_then(|b| b.wrong).unwrap_or(0);
        t.rows.push(Row { size, count, dtype: f[2].into(), redop: f[3].into(), root, out_of_place: oop, in_place: ip });
    }

    pub fn finish(self) -> TestsOutput {
        self.t
    }
}

pub fn parse(text: &str) -> TestsOutput {
    let mut p = Parser::default();
    for l in text.lines() {
        p.line(l);
    }
    p.finish()
}
