//! The all-reduce benchmark of Stas Bekman's ml-engineering (network/benchmarks/
//! all_reduce_bench.py, copied into many repositories), in every print format of its history
//! (read from its git, 2024-02 to 2026-08):
//! - 2024: `The average bandwidth of all_reduce with a {payload}GB payload ({trials} trials,
//!   {n} ranks):`, then within a few lines ` busbw: {busbw:.3f} GBps ({Gbps} Gbps)`;
//! - 2025 on: `Device info: {props}` or `- hardware: {props}` (torch's
//!   `_CudaDeviceProperties(name='NVIDIA H100 80GB HBM3', …)`), then `The average bandwidth of
//!   all_reduce over {n} ranks ({w} warmups / {t} trials):` and a Markdown table of
//!   `| {payload:>7} | {busbw:6.2f}GBps | {algbw:6.2f}GBps |` rows (payload `32KiB` … `16GiB`,
//!   rising), then `Legend: 1KiB = 2**10 Bytes, …`;
//! - its `--profile_stability` (2025-12 on): `The {g}GiB payload bandwidth of all_reduce over {n}
//!   ranks (…):` and a `| {busbw:6.2f}GBps | {algbw:6.2f}GBps |` row per trial.
//!
//! Its lines are found inside any prefix (pdsh's `host: `, torchrun's `[default0]:`, a
//! timestamp), and other processes' lines between a table's rows do not end it (review 28).
//! A table's result is the busbw of its largest payload (a stray fast row at a small one is not
//! the job's bandwidth), a profile's the lower quartile of its trials (a run that collapses half
//! the time is not healthy on average). Where a log holds several results, the one of the most
//! ranks and then the largest payload is the job's; between equals, the slower. (Its builds of
//! 2025-01-15 to 01-22 printed GiB/s as "GBps": 7 % under the decimal figure, not told apart.)

use memchr::memmem;

/// A measured all-reduce: its busbw (GB/s), its ranks and, where the output gives them, its
/// size in bytes and the GPU's model.
#[derive(Debug, Clone, PartialEq)]
pub struct Allreduce {
    pub busbw: f64,
    pub ranks: usize,
    pub bytes: Option<u64>,
    pub model: Option<String>,
}

impl Allreduce {
    /// Keep in `cur` the result that stands for the job: more ranks, then a larger payload;
    /// between equals, the slower.
    pub fn keep(cur: &mut Option<Allreduce>, new: Option<Allreduce>) {
        let Some(n) = new else { return };
        let key = |a: &Allreduce| (a.ranks, a.bytes.unwrap_or(0));
        let better = match cur {
            None => true,
            Some(c) => key(&n) > key(c) || (key(&n) == key(c) && n.busbw < c.busbw),
        };
        if better {
            *cur = Some(n);
        }
    }
}

/// Lines without a row that a table or profile waits through before it is taken as ended.
const IDLE: u16 = 256;
/// A profile's trials kept (its lower quartile is taken from these).
const TRIALS: usize = 1 << 16;
/// A busbw over this (GB/s) is no measurement: a glitch or garbage.
const MAX_GBPS: f64 = 1e5;

/// A header read, waiting for its result lines.
#[derive(Debug, Clone, Copy)]
enum Open {
    /// 2024's: its ranks and payload, and the lines left to look at for its busbw line.
    Line { ranks: usize, bytes: Option<u64>, left: u8 },
    /// A table: the last row read (its payload and busbw), the lines since a row.
    Table { ranks: usize, last: Option<(u64, f64)>, idle: u16 },
    /// A profile (a payload the header gives): the lines since a row.
    Profile { ranks: usize, bytes: Option<u64>, idle: u16 },
}

#[derive(Debug, Default)]
pub struct Bench {
    /// The GPU the benchmark named.
    model: Option<String>,
    open: Option<Open>,
    /// The open profile's trials.
    trials: Vec<f64>,
    /// The result kept so far ([`Allreduce::keep`]).
    done: Option<Allreduce>,
}

impl Bench {
    /// One line (any prefix): a header, a row, the GPU's name, or another program's.
    pub fn line(&mut self, l: &str) {
        if let Some(h) = header(l) {
            self.close();
            self.open = Some(h);
            return;
        }
        match self.open {
            None => {
                if let Some(m) = torch_device_name(l) {
                    self.model = Some(m);
                }
            }
            Some(Open::Line { ranks, bytes, left }) => match busbw_line(l) {
                Some(b) => {
                    self.open = None;
                    self.put(b, ranks, bytes);
                }
                None => self.open = (left > 1).then_some(Open::Line { ranks, bytes, left: left - 1 }),
            },
            Some(Open::Table { ranks, last, idle }) => self.table_line(l, ranks, last, idle),
            Some(Open::Profile { ranks, bytes, idle }) => match row(l).filter(|c| c.len() == 2) {
                Some(c) => {
                    if let Some(b) = gbps(c[0]).filter(|_| self.trials.len() < TRIALS) {
                        self.trials.push(b);
                    }
                    self.open = Some(Open::Profile { ranks, bytes, idle: 0 });
                }
                None => self.idle(l, Open::Profile { ranks, bytes, idle: idle + 1 }, idle),
            },
        }
    }

    /// The result that stands for the job, the open table or profile closed.
    pub fn finish(mut self) -> Option<Allreduce> {
        self.close();
        self.done
    }

    fn table_line(&mut self, l: &str, ranks: usize, last: Option<(u64, f64)>, idle: u16) {
        match row(l).and_then(|c| table_row(&c)) {
            // the payloads rise: a row that does not is another table's
            Some((size, b)) if last.is_none_or(|(s, _)| size > s) => {
                self.open = Some(Open::Table { ranks, last: Some((size, b)), idle: 0 });
            }
            Some(_) => {}
            None => self.idle(l, Open::Table { ranks, last, idle: idle + 1 }, idle),
        }
    }

    /// A line without a row: the legend after the rows, or too many lines, ends them.
    fn idle(&mut self, l: &str, next: Open, idle: u16) {
        if idle >= IDLE || find(&LEGEND, l).is_some() {
            self.close();
        } else {
            self.open = Some(next);
        }
    }

    fn close(&mut self) {
        match self.open.take() {
            Some(Open::Table { ranks, last: Some((size, b)), .. }) => self.put(b, ranks, Some(size)),
            Some(Open::Profile { ranks, bytes, .. }) if !self.trials.is_empty() => {
                let mut t = std::mem::take(&mut self.trials);
                t.sort_unstable_by(f64::total_cmp);
                self.put(t[(t.len() - 1) / 4], ranks, bytes);
            }
            _ => {}
        }
        self.trials.clear();
    }

    fn put(&mut self, busbw: f64, ranks: usize, bytes: Option<u64>) {
        let a = Allreduce { busbw, ranks, bytes, model: self.model.clone() };
        Allreduce::keep(&mut self.done, Some(a));
    }
}

/// The searchers for the literals every line is looked through for, built once: `memmem::find`
/// builds its searcher at each call, which cost verify 3 % of its time on a large log (every
/// line of the log comes here).
type Lit = std::sync::LazyLock<memmem::Finder<'static>>;
static LEGEND: Lit = Lit::new(|| memmem::Finder::new("Legend: 1K"));
static HEADER: Lit = Lit::new(|| memmem::Finder::new("bandwidth of all_reduce "));
static BUSBW: Lit = Lit::new(|| memmem::Finder::new("busbw: "));
static DEVICE: Lit = Lit::new(|| memmem::Finder::new("_CudaDeviceProperties(name='"));

fn find(f: &memmem::Finder<'static>, l: &str) -> Option<usize> {
    f.find(l.as_bytes())
}

/// A header inside `l`: which result lines follow, for how many ranks.
fn header(l: &str) -> Option<Open> {
    let i = find(&HEADER, l)?;
    let t = l[l[..i].rfind("The ")?..].trim_end();
    let ranks = |r: &str| r.split_once(" ranks")?.0.trim().parse::<usize>().ok().filter(|n| *n > 0);
    if let Some(r) = t.strip_prefix("The average bandwidth of all_reduce with a ") {
        let bytes = r.split_once("GB payload (").and_then(|(g, _)| g.trim().parse::<f64>().ok()).map(|g| g * 1e9);
        let n = r.split_once(" trials, ")?.1.strip_suffix(" ranks):")?.trim().parse().ok()?;
        let bytes = bytes.filter(|b| b.is_finite() && *b >= 0.0).map(|b| b as u64);
        return Some(Open::Line { ranks: n, bytes, left: 4 });
    }
    if let Some(r) = t.strip_prefix("The average bandwidth of all_reduce over ") {
        return Some(Open::Table { ranks: ranks(r)?, last: None, idle: 0 });
    }
    let (g, r) = t.strip_prefix("The ")?.split_once("GiB payload bandwidth of all_reduce over ")?;
    let g: f64 = g.trim().parse().ok().filter(|g: &f64| g.is_finite() && *g >= 0.0)?;
    Some(Open::Profile { ranks: ranks(r)?, bytes: Some((g * (1u64 << 30) as f64) as u64), idle: 0 })
}

/// 2024's ` busbw: {busbw:.3f} GBps (…)` inside `l`.
fn busbw_line(l: &str) -> Option<f64> {
    let i = find(&BUSBW, l)?;
    rate(l[i + "busbw: ".len()..].split_once(" GBps")?.0)
}

/// torch's `_CudaDeviceProperties(name='NVIDIA H100 80GB HBM3', …)` after the benchmark's
/// `Device info: ` or `- hardware: `: the model.
fn torch_device_name(l: &str) -> Option<String> {
    let i = find(&DEVICE, l)?;
    let before = &l[..i];
    if !(before.ends_with("Device info: ") || before.ends_with("- hardware: ")) {
        return None;
    }
    let n = l[i + "_CudaDeviceProperties(name='".len()..].split_once('\'')?.0.trim();
    (!n.is_empty()).then(|| n.to_string())
}

/// A Markdown row inside `l` (from its first `|` to the line's last, a `|`): its cells, trimmed.
fn row(l: &str) -> Option<Vec<&str>> {
    let r = l[l.find('|')?..].trim_end();
    Some(r.strip_prefix('|')?.strip_suffix('|')?.split('|').map(str::trim).collect())
}

/// A table row's payload in bytes (`fmt_bytes`: `512iB`, `32KiB` … `16GiB`) and busbw.
fn table_row(c: &[&str]) -> Option<(u64, f64)> {
    let [size, busbw, _algbw] = c[..] else { return None };
    let n = size.strip_suffix("iB")?;
    let (digits, shift) = match n.as_bytes().last()? {
        b'K' => (&n[..n.len() - 1], 10),
        b'M' => (&n[..n.len() - 1], 20),
        b'G' => (&n[..n.len() - 1], 30),
        b'T' => (&n[..n.len() - 1], 40),
        _ => (n, 0),
    };
    let v: u64 = digits.parse().ok()?;
    Some((v.checked_shl(shift).filter(|x| x >> shift == v)?, gbps(busbw)?))
}

/// A `{busbw:6.2f}GBps` cell.
fn gbps(cell: &str) -> Option<f64> {
    rate(cell.strip_suffix("GBps")?)
}

/// A rate the benchmark printed: finite, not negative, not beyond any link.
fn rate(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|b| b.is_finite() && (0.0..MAX_GBPS).contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<Allreduce> {
        let mut b = Bench::default();
        text.lines().for_each(|l| b.line(l));
        b.finish()
    }

    #[test]
    fn payloads_and_cells_of_its_format() {
        assert_eq!(table_row(&["512iB", "0.01GBps", "0.01GBps"]), Some((512, 0.01)));
        assert_eq!(table_row(&["16GiB", "60.00GBps", "32.00GBps"]), Some((16 << 30, 60.0)));
        assert_eq!(table_row(&["1TiB", "1.00GBps", "1.00GBps"]), Some((1 << 40, 1.0)));
        for bad in [
            ["16Gi", "1GBps", "1GBps"],
            ["xGiB", "1GBps", "1GBps"],
            ["1GiB", "nanGBps", "1GBps"],
            ["1GiB", "1e9GBps", "1GBps"],
        ] {
            assert_eq!(table_row(&bad), None, "{bad:?}");
        }
        assert_eq!(table_row(&["99999999999999999GiB", "1GBps", "1GBps"]), None);
    }

    #[test]
    fn the_largest_payload_the_lower_quartile_and_the_job_of_most_ranks() {
        let head = "The average bandwidth of all_reduce over 16 ranks (5 warmups / 20 trials):\n\n| payload | busbw | algbw |\n| ------: | ---: | ---: |\n";
        let t = format!("{head}|   64KiB | 390.00GBps | 1.00GBps |\n[rank3]: a warning\n|   16GiB |  60.00GBps | 32.00GBps |\nLegend: 1KiB = 2**10 Bytes\n");
        let r = read(&format!("gpu-a01: {}", t.replace('\n', "\ngpu-a01: "))).unwrap();
        assert_eq!((r.busbw, r.ranks, r.bytes), (60.0, 16, Some(16 << 30)));
        // a one-node table after the job's: the job's result stays
        let one = "The average bandwidth of all_reduce over 8 ranks (5 warmups / 20 trials):\n|   16GiB | 480.00GBps | 1.00GBps |\n";
        assert_eq!(read(&format!("{t}{one}")).unwrap().busbw, 60.0);
        // half the trials collapsed: the lower quartile
        let mut p = String::from("The 4.0GiB payload bandwidth of all_reduce over 16 ranks (5 warmups / 8 trials):\n");
        for b in [370.0, 5.0, 370.0, 5.0, 370.0, 5.0, 370.0, 5.0] {
            p += &format!("| {b:6.2}GBps | 1.00GBps |\n");
        }
        let r = read(&p).unwrap();
        assert_eq!((r.busbw, r.bytes), (5.0, Some(4 << 30)));
        // the model the bench named, behind a prefix
        let hw = "2026-01-12T10:11:12Z - hardware: _CudaDeviceProperties(name='NVIDIA H100 80GB HBM3', major=9)\n";
        assert_eq!(read(&format!("{hw}{t}")).unwrap().model.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        // no header: nothing
        assert_eq!(read("|   16GiB |  60.00GBps | 32.00GBps |\n"), None);
    }
}
