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
    /// The highest rank index of the rank table, plus one: a table with fewer lines than this
    /// is an excerpt (`#  Rank 71 …` alone is not a one-node job).
    #[serde(default)]
    pub rank_span: usize,
    /// `# Avg bus bandwidth` lines: nccl-tests prints one per run, from rank 0 only.
    #[serde(default)]
    pub summaries: usize,
    /// Signs of several processes printing results at once (nccl-tests without MPI, where every
    /// process is its own rank 0): a summary straight after another with no row between, or a
    /// row no larger than the one before it in the same table.
    #[serde(default)]
    pub interleaved: usize,
    /// Distinct hosts the rank table puts a rank 0 on.
    #[serde(default)]
    pub rank0_hosts: usize,
    /// `# Out of bounds values : N FAILED`: values the test found wrong (summed over runs).
    #[serde(default)]
    pub out_of_bounds: u64,
    /// Results of the tables before `#wrong` (nccl-tests before 2.x) whose `error`, the largest
    /// deviation, is over the bound nccl-tests itself checks it against (common.cu's
    /// DeltaMaxValue): each such result is one nccl-tests counts as an error.
    #[serde(default)]
    pub old_errors: u64,
    /// The last run reached its end: a bounds check (common.cu prints `# Out of bounds values`
    /// once a run's sweep is done, just before `# Avg bus bandwidth`) or summary after its last
    /// table header
    /// (review 9: a first test that finished and a second that hung mid-sweep is not done).
    #[serde(default)]
    pub last_done: bool,
    /// The header's `step: N(factor)` or `step: N(bytes)`: (N, a factor).
    #[serde(default)]
    pub step: Option<(u64, bool)>,
    /// The largest size the test was asked for (its header's `maxBytes N`).
    #[serde(default)]
    pub max_bytes_asked: Option<u64>,
    /// A line came after the rank table: nccl-tests prints the table whole before anything
    /// else, so it was not cut.
    #[serde(default)]
    pub ranks_closed: bool,
    /// The last rank table had no row and no summary after it: the last test printed its
    /// header and no result (review 7: a second test of a script that hung after its init).
    #[serde(default)]
    pub last_silent: bool,
    /// The line (non-blank lines given to the parser, counted as the log reader counts its own)
    /// of the last run's bounds check or summary; 0: none.
    #[serde(skip)]
    pub done_at: usize,
    /// The tests run, by name (`all_gather_perf`): util.cu's `# Collective test starting: %s`
    /// (nccl-tests 2.17.1+), each once, at most eight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests_run: Vec<String>,
}

impl TestsOutput {
    /// The rank table, when it lists every rank (ranks 0..n-1 once each) and a line came
    /// after it: a header cut after its third rank line (held-out set 16, a page that stored
    /// ranks 0-2 of a 4-node job) lists 0..2 once each too.
    pub fn whole_rank_table(&self) -> Option<(usize, usize)> {
        (self.ranks > 0 && !self.hosts.is_empty() && self.ranks == self.rank_span && self.ranks_closed)
            .then_some((self.ranks, self.hosts.len()))
    }

    /// Each process ran its own test: two summaries with no table between, or one table whose
    /// rows come from two processes. Evidence in words.
    pub fn separate_runs(&self) -> Option<String> {
        if self.rank0_hosts >= 2 {
            return Some(format!(
                "the rank table lists rank 0 on {} hosts: each process is its own job",
                self.rank0_hosts
            ));
        }
        (self.summaries >= 2 && self.interleaved > 0).then(|| {
            format!(
                "{} result summaries ('# Avg bus bandwidth'), {} where the output of two processes meets",
                self.summaries, self.interleaved
            )
        })
    }

    /// The sweep stopped before the size it was asked for and printed no summary (`# Avg bus
    /// bandwidth`, printed once the sweep is done): the last size reached and the one asked.
    /// A test that hung at the next size, or a log cut there.
    pub fn unfinished(&self) -> Option<(u64, u64)> {
        let last = self.rows.last()?.size;
        let asked = self.max_bytes_asked?;
        // the size after the last row, by the header's step (review 9: 12024 MiB of 12 GiB by
        // 1 GiB steps is the sweep's last size)
        let next = match self.step {
            Some((f, true)) if f > 1 => last.saturating_mul(f),
            Some((b, false)) if b > 0 => last.saturating_add(b),
            _ => last.saturating_add(1),
        };
        (!self.sweep_done() && next <= asked).then_some((last, asked))
    }

    /// The last run's sweep reached its end: its bounds check or its summary was printed after
    /// its table began.
    pub fn sweep_done(&self) -> bool {
        self.last_done
    }

    /// The collective the table measured, where no `# Collective test starting:` line names it
    /// (nccl-tests before 2.17.1): all-reduce alone has a bus-bandwidth factor over one, every
    /// release's `AllReduceGetBw` (2(n−1)/n, 1.33 to 2 for three ranks or more); every other
    /// test's is 1 or (n−1)/n. So a table whose every row with a readable rate has busbw/algbw
    /// at all-reduce's factor (and at the rank table's own n where it is whole) is all-reduce.
    /// Rows of two tests, or two ranks (a factor of 1), name nothing.
    pub fn collective_from_factor(&self) -> Option<&'static str> {
        let want = self.whole_rank_table().map(|(n, _)| 2.0 * (n as f64 - 1.0) / n as f64);
        if want.is_some_and(|w| w < 1.3) {
            return None;
        }
        let mut read = 0;
        for b in self.rows.iter().flat_map(|r| std::iter::once(&r.out_of_place).chain(r.in_place.as_ref())) {
            // (a rate of two decimals: small ones are mostly rounding)
            if b.algbw < 1.0 {
                continue;
            }
            let f = b.busbw / b.algbw;
            let fits = match want {
                Some(w) => (f - w).abs() <= 0.02 * w + 0.01 / b.algbw.max(1.0),
                None => (1.3..=2.01).contains(&f),
            };
            if !fits {
                return None;
            }
            read += 1;
        }
        (read > 0).then_some("all_reduce")
    }

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

/// After `Rank `: `N [Group G] Pid P on HOST device D [`, the rank table's line exactly.
fn bare_rank_line(r: &str) -> bool {
    let w: Vec<&str> = r.split_whitespace().collect();
    let int = |i: usize| w.get(i).is_some_and(|x| x.parse::<u64>().is_ok());
    let at = if w.get(1) == Some(&"Group") && int(2) { 3 } else { 1 };
    int(0)
        && w.get(at) == Some(&"Pid")
        && int(at + 1)
        && w.get(at + 2) == Some(&"on")
        && w.get(at + 4) == Some(&"device")
        && int(at + 5)
        && w.get(at + 6).is_some_and(|x| x.starts_with('['))
}

/// A rank line's process as NCCL's prefix names it, `host:pid` (after `Rank `: `N [Group G]
/// Pid P on HOST device D [`).
pub(super) fn rank_proc(r: &str) -> Option<String> {
    if !bare_rank_line(r) {
        return None;
    }
    let w: Vec<&str> = r.split_whitespace().collect();
    let at = if w.get(1) == Some(&"Group") { 3 } else { 1 };
    Some(format!("{}:{}", w.get(at + 3)?, w.get(at + 1)?))
}

/// Reads nccl-tests output one line at a time (NCCL's own lines interleaved are skipped).
#[derive(Default)]
pub struct Parser {
    seen: std::collections::HashSet<(u8, String)>,
    /// Non-blank lines given so far.
    n: usize,
    t: TestsOutput,
    /// The last row's size since the table's header or a summary; whether a row came after the
    /// last summary.
    last_size: Option<u64>,
    rows_since_summary: bool,
    /// The table's header named its columns: `Some(true)` with `root` and `#wrong` (nccl-tests
    /// 2.x), `Some(false)` with `error` (before; `old_root_cols` says whether a root precedes it).
    wrong_cols: Option<bool>,
    /// The old table's header has a `root` column (broadcast, reduce, scatter, gather before
    /// 2.x: `size count type [redop] root time …`), and a `redop` one (review 22: read as a
    /// table without them, the root was taken for the time and every column after it shifted).
    old_root_cols: bool,
    old_redop_col: bool,
    /// Old tables' results over nccl-tests' bound since the last run's bounds check: kept only
    /// for a run cut before its own `Out of bounds values` line, which says better (review 22).
    old_pending: u64,
    /// nccl-tests' output came behind a wrapper no rule names (its `# nThread ` header after
    /// other text: journalctl, `kubectl logs --prefix`, docker compose; review 12): its header
    /// lines and rows are looked for inside each line from then on.
    wrapped: bool,
}

/// nccl-tests' type names (common.cu's `test_typenames`): a row is `size count type …`.
const TYPES: &[&str] =
    &["int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"];

/// A row of nccl-tests' table inside a line: from the `size` of `size count type`.
fn row_in(l: &str) -> Option<&str> {
    let b = l.as_bytes();
    let mut words = Vec::with_capacity(8);
    let mut at = 0;
    while words.len() < 64 {
        let start = at + b[at..].iter().position(|c| !c.is_ascii_whitespace())?;
        let end = start + b[start..].iter().position(|c| c.is_ascii_whitespace()).unwrap_or(b.len() - start);
        words.push((start, &l[start..end]));
        at = end;
        let n = words.len();
        if n >= 3 && TYPES.contains(&words[n - 1].1) {
            let int = |w: &str| !w.is_empty() && w.bytes().all(|c| c.is_ascii_digit());
            if int(words[n - 3].1) && int(words[n - 2].1) {
                return Some(&l[words[n - 3].0..]);
            }
        }
        if at >= b.len() {
            return None;
        }
    }
    None
}

const MAX_ROWS: usize = 100_000;

impl Parser {
    pub fn line(&mut self, raw: &str) {
        let cleaned = super::clean(raw);
        self.line_unwrapped(unwrap_line(&cleaned));
    }

    /// One line already cleaned and unwrapped.
    pub fn line_unwrapped(&mut self, l: &str) {
        self.n += usize::from(!l.is_empty());
        let l = self.table_text(l);
        self.table_or_skip(l);
    }

    /// A line with no wrapper to look for in it: NCCL's own (`host:pid:tid [dev] …` as it came,
    /// [`super::unwrap_line_fast`]), or one [`Parser::table_text`] took it from.
    pub fn line_nccl(&mut self, l: &str) {
        self.n += usize::from(!l.is_empty());
        self.table_or_skip(l);
    }

    fn table_or_skip(&mut self, l: &str) {
        // (what follows reads only lines that start with '#', `Rank ` or a digit: NCCL's own
        // lines, the bulk of a log, start with their host)
        // (`O`, `A`: the summary lines of nccl-tests before 2.x, without their `#`)
        if !matches!(l.as_bytes().first(), Some(b'#' | b'R' | b'0'..=b'9' | b'O' | b'A')) {
            self.t.ranks_closed |= self.t.ranks > 0;
            return;
        }
        self.table_line(l);
    }

    /// util.cu (2.17.1+): `# Collective test starting: %s`, the binary's name.
    fn test_started(&mut self, v: &str) {
        let name = v.split_whitespace().next().unwrap_or("");
        if !name.is_empty()
            && name.len() <= 64
            && self.t.tests_run.len() < 8
            && !self.t.tests_run.iter().any(|t| t == name)
        {
            self.t.tests_run.push(name.to_string());
        }
    }

    /// [`Parser::line_nccl`] of a line that may be nccl-tests' own.
    fn table_line(&mut self, l: &str) {
        // `#  Rank  0 Group  0 Pid 4766 on host device  0 [0x21] …`; before 2.x's groups,
        // `#   Rank  0 Pid 131398 on    host device  0 [0xaf] …`
        // Pasted into an issue outside a code block, Markdown takes a line starting with `#`
        // for a heading and the copy loses the `#`: a line of the rank table's exact shape
        // (`Rank N [Group G] Pid P on HOST device D [`) is taken without it too.
        let rank_line = l
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix("Rank "))
            .or_else(|| l.strip_prefix("Rank ").filter(|r| bare_rank_line(r)))
            .filter(|r| r.trim_start().starts_with(|c: char| c.is_ascii_digit()));
        if let Some(rest) = rank_line {
            self.rank_line(rest);
            return;
        }
        self.t.ranks_closed |= self.t.ranks > 0;
        if let Some(v) = l.strip_prefix("# Collective test starting: ") {
            self.test_started(v);
            return;
        }
        // `# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) …`
        if let Some(v) = l.strip_prefix("# nThread ").and_then(|v| v.split_once(" maxBytes ")) {
            self.run_header(v.1);
            return;
        }
        // common.cu: `# Out of bounds values : %d %s` (OK or FAILED); before 2.x without the `#`
        // (nccl#831), in its exact spacing only (review 22: a script's `echo "Avg bus bandwidth:"`)
        if let Some(v) = l.strip_prefix("# Out of bounds values").or_else(|| l.strip_prefix("Out of bounds values : "))
        {
            self.bounds_line(v);
            return;
        }
        if let Some(v) = l.strip_prefix("# Avg bus bandwidth").or_else(|| l.strip_prefix("Avg bus bandwidth    : ")) {
            self.t.avg_busbw = v.trim_start_matches([' ', ':']).split_whitespace().next().and_then(num);
            if self.t.summaries > 0 && !self.rows_since_summary {
                self.t.interleaved += 1;
            }
            self.t.summaries += 1;
            self.t.last_done = true;
            self.t.done_at = self.n;
            self.t.last_silent = false;
            self.rows_since_summary = false;
            self.last_size = None;
            return;
        }
        // the table's header (`#  size  count  type …`, `#  (B)  (elements) …`) starts a table
        if l.starts_with('#') && (l.contains(" size ") || l.contains("(B)")) {
            if l.contains("#wrong") {
                self.wrong_cols = Some(true);
            } else if l.contains(" error") {
                self.wrong_cols = Some(false);
                self.old_root_cols = l.contains(" root ");
                self.old_redop_col = l.contains(" redop ");
            }
            self.last_size = None;
            self.rows_since_summary = true;
            self.t.last_done = false;
            return;
        }
        if l.starts_with('#') || !l.starts_with(|c: char| c.is_ascii_digit()) || self.t.rows.len() >= MAX_ROWS {
            return;
        }
        self.row(l);
    }

    /// The line from where nccl-tests' text starts in it, behind a wrapper no rule names.
    fn table_text<'a>(&mut self, l: &'a str) -> &'a str {
        let b = l.as_bytes();
        if b.first() == Some(&b'#') {
            return l;
        }
        // (one byte search a line: NCCL's own lines hold no '#')
        // (or right after Open MPI's `--tag-output` `[1,0]<stdout>:` behind that wrapper: review 24)
        if let Some(i) =
            memchr::memchr(b'#', b).filter(|&i| i > 0 && (b[i - 1].is_ascii_whitespace() || b[..i].ends_with(b">:")))
        {
            // (its header, or — where the header came before the wrapper did — its table's
            // column header or its end: review 24)
            let t = &l[i..];
            self.wrapped |= t.starts_with("# nThread ")
                || t.starts_with("# Collective test starting: ")
                || t.starts_with("# Out of bounds values")
                || t.starts_with("# Avg bus bandwidth")
                || t.trim_start_matches(['#', ' ']).starts_with("size ");
            if self.wrapped {
                return &l[i..];
            }
        }
        // rows only inside a table (after its column header, before its summary): a table-shaped
        // line of another program's after a run that hung is no row (review 13)
        if self.wrapped && self.rows_since_summary {
            return row_in(l).unwrap_or(l);
        }
        l
    }

    /// common.cu's bounds check after `# Out of bounds values` (` : %d %s`, OK or FAILED): the
    /// run's end, and the values it found wrong.
    fn bounds_line(&mut self, v: &str) {
        self.t.last_done = true;
        self.t.done_at = self.n;
        self.old_pending = 0;
        let mut w = v.trim_start_matches([' ', ':']).split_whitespace();
        if let (Some(n), Some("FAILED")) = (w.next().and_then(|n| n.parse::<u64>().ok()), w.next()) {
            self.t.out_of_bounds = self.t.out_of_bounds.saturating_add(n.max(1));
        }
    }

    /// A run's header after ` maxBytes ` (`8589934592 step: 2(factor) …`): the size asked,
    /// the step, and a run not done yet.
    fn run_header(&mut self, v: &str) {
        self.t.max_bytes_asked = v.split_whitespace().next().and_then(|n| n.parse().ok());
        self.t.step = v.split_once("step: ").and_then(|(_, r)| {
            let (n, kind) = r.split_once('(')?;
            Some((n.trim().parse().ok()?, kind.starts_with("factor")))
        });
        self.t.last_done = false;
    }

    /// `#  Rank  N Group G Pid P on HOST device D [0x..] NAME`: a rank, its host and device.
    fn rank_line(&mut self, rest: &str) {
        let (seen, t) = (&mut self.seen, &mut self.t);
        t.ranks += 1;
        t.last_silent = true;
        if let Some(n) = rest.split_whitespace().next().and_then(|n| n.parse::<usize>().ok()) {
            t.rank_span = t.rank_span.max(n.saturating_add(1));
        }
        let w: Vec<&str> = rest.split_whitespace().collect();
        if let Some(i) = w.iter().position(|x| *x == "on") {
            if let Some(h) = w.get(i + 1) {
                if seen.len() < 65536 && seen.insert((0, h.to_string())) {
                    t.hosts.push(h.to_string());
                }
                // Rank 0 on two hosts: each process is a job of its own.
                if w.first() == Some(&"0") && seen.len() < 65536 && seen.insert((2, h.to_string())) {
                    t.rank0_hosts += 1;
                }
            }
        }
        if let Some(i) = rest.find(']') {
            let d = rest[i + 1..].trim().to_string();
            if !d.is_empty() && seen.len() < 65536 && seen.insert((1, d.clone())) {
                t.devices.push(d);
            }
        }
    }

    /// A row of the results table: its size, count, type, op, root and both blocks.
    fn row(&mut self, l: &str) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 8 {
            return;
        }
        let (Ok(size), Ok(count)) = (f[0].parse::<u64>(), f[1].parse::<u64>()) else {
            return;
        };
        let Some(Columns { redop, root, at, counts_wrong, no_redop }) = self.columns(&f) else { return };
        let t = &mut self.t;
        let Some(mut oop) = block(&f[at..]) else { return };
        if !counts_wrong {
            oop.wrong = None;
        }
        t.last_silent = false;
        let (last, rows) = (&mut self.last_size, &mut self.rows_since_summary);
        if last.is_some_and(|p| size <= p) {
            t.interleaved += 1;
        }
        *last = Some(size);
        *rows = true;
        let ip = if f.len() >= at + 7 { block(&f[at + 4..]) } else { None }.map(|mut b| {
            if !counts_wrong {
                b.wrong = None;
            }
            b
        });
        if f.len() < at + 8 {
            t.truncated_rows += 1;
        }
        t.wrong_total += oop.wrong.unwrap_or(0) + ip.as_ref().and_then(|b| b.wrong).unwrap_or(0);
        // an old table's `error` (its header named): over nccl-tests' bound for
        // DeltaMaxValue(type)×(nranks−1) — the rank table's count, else 4096, the bound no job
        // of fewer ranks exceeds; in-place results of tables without a reduction (alltoall,
        // sendrecv: `reportErrors = in_place ? 0 : 1`) are not counted
        if !counts_wrong && self.wrong_cols == Some(false) {
            let peers = if t.ranks > 1 { (t.ranks - 1) as f64 } else { 4096.0 };
            let over = |i: usize| f.get(i).is_some_and(|e| error_over_bound(f[2], e, peers));
            self.old_pending += over(at + 3) as u64 + if no_redop { 0 } else { over(at + 7) as u64 };
        }
        t.rows.push(Row {
            size,
            count,
            dtype: f[2].into(),
            redop: redop.into(),
            root,
            out_of_place: oop,
            in_place: ip,
        });
    }

    /// Where a row's columns are: the table's header says, else the row's own shape.
    fn columns<'a>(&self, f: &[&'a str]) -> Option<Columns<'a>> {
        // nccl-tests 2.x: `size count type redop root time algbw busbw #wrong …`; releases
        // before the root column and `#wrong` (2017–2020): `size count type redop time algbw
        // busbw error …`, `error` the largest deviation (a float), not a count of wrong values.
        // The header says which; without it, a root is a rank (-1 or a small index), where the
        // old format's time there can be an integer too (`179136` µs at 4 GiB).
        // The old tables of tests without a reduction (all_gather, broadcast's first releases):
        // `size count type time algbw busbw error …`, a number where the redop would be.
        // An old table whose header names a root column: the root after the type (or the
        // redop), the time after it.
        let old_root = self.wrong_cols == Some(false) && self.old_root_cols;
        let no_redop = !old_root && num(f[3]).is_some();
        // (the tables without a reduction have no redop column: broadcast's root, all_gather's
        // time stand there)
        let redop = if no_redop || (old_root && !self.old_redop_col) { "" } else { f[3] };
        let (root, at, counts_wrong) = match (self.wrong_cols, f[4].parse::<i64>()) {
            _ if old_root => {
                let (r, at) = if self.old_redop_col { (f[4], 5) } else { (f[3], 4) };
                (r.parse::<i64>().unwrap_or(-1), at, false)
            }
            _ if no_redop => (-1, 3, false),
            (Some(true) | None, Ok(r)) if self.wrong_cols.is_some() || (-1..65536).contains(&r) => (r, 5, true),
            (Some(true), Err(_)) => return None,
            _ if num(f[4]).is_some() && f.len() >= 8 => (-1, 4, false),
            _ => return None,
        };
        Some(Columns { redop, root, at, counts_wrong, no_redop })
    }

    pub fn finish(mut self) -> TestsOutput {
        self.t.old_errors = self.old_pending;
        self.t
    }
}

/// A row's layout ([`Parser::columns`]): its redop (empty where the table has none), root,
/// the index of its time, whether it counts wrong values (`#wrong`), and a table without a
/// reduction (alltoall, sendrecv, all_gather) whose in-place error nccl-tests does not count.
struct Columns<'a> {
    redop: &'a str,
    root: i64,
    at: usize,
    counts_wrong: bool,
    no_redop: bool,
}

/// An old table's `error` (`%6.0e` of the largest deviation) over the bound nccl-tests checks it
/// against: common.cu's DeltaMaxValue (half and bfloat16 1e-2 — 5e-2 in some releases, the
/// larger taken —, float 1e-5, double 1e-12, integers any deviation) times the peers, nranks−1.
/// `N/A` (no data check) and an unknown type are never over.
fn error_over_bound(dtype: &str, e: &str, peers: f64) -> bool {
    let bound = match dtype {
        "half" | "bfloat16" | "float16" => 5e-2,
        "float" | "float32" => 1e-5,
        "double" | "float64" => 1e-12,
        "char" | "int8" | "uint8" | "int32" | "uint32" | "int64" | "uint64" | "int" => 0.0,
        _ => return false,
    };
    // (`inf` is over, as in nccl-tests' own comparison; `nan` is not)
    e.parse::<f64>().is_ok_and(|v| v > bound * peers)
}

pub fn parse(text: &str) -> TestsOutput {
    let mut p = Parser::default();
    for l in text.lines() {
        p.line(l);
    }
    p.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong";
    fn row(size: u64) -> String {
        format!("   {size}      {}     float     sum      -1    27691    4.85    4.85      0    27634    4.86    4.86      0", size / 4)
    }

    /// The old tables' `error` over nccl-tests' own bound is an error (microsoft/msccl#27: LL
    /// results off by 9e-02 at 192 B in a float all-reduce); 5e-07 in a float sum is rounding.
    #[test]
    fn an_old_tables_error_over_its_bound_is_a_wrong_result() {
        let head = "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n";
        let p = parse(&format!("{head}         192            48     float     sum    29.73    0.01    0.01  9e-02\n        1536           384     float     sum    24.35    0.06    0.11  2e-07\n"));
        assert_eq!((p.old_errors, p.rows.len()), (1, 2));
        // the run's own bounds check says better: 0 OK clears what the rows seemed to say
        let p = parse(&format!("{head}         192            48     float     sum    29.73    0.01    0.01  9e-02\n# Out of bounds values : 0 OK\n"));
        assert_eq!(p.old_errors, 0);
        // the bound grows with the peers: 2e-05 over 64 ranks is within 1e-5×63
        let ranks: String =
            (0..64).map(|r| format!("#   Rank {r:2} Pid 1 on host{} device  0 [0x1a] Tesla V100\n", r / 8)).collect();
        let p = parse(&format!("{ranks}{head}        4096          1024     float     sum    29.73    0.01    0.01  2e-05    29.73    0.01    0.01  2e-05\n"));
        assert_eq!((p.ranks, p.old_errors), (64, 0));
        // a root column moves the time, the bandwidths and the error (broadcast before 2.x:
        // `size count type root time …`; reduce: `… redop root time …`)
        let root = "#       size         count      type    root     time   algbw   busbw  error     time   algbw   busbw  error\n";
        let p = parse(&format!("{root}     1048576        262144     float       0    100.0   10.49   19.66  0e+00    100.0   10.49   19.66  0e+00\n"));
        assert_eq!((p.old_errors, p.rows[0].root, p.rows[0].out_of_place.busbw), (0, 0, 19.66));
        let p = parse(&format!("{root}     1048576        262144     float       1    100.0   10.49   19.66  3e-01    100.0   10.49   19.66  0e+00\n"));
        assert_eq!(p.old_errors, 1);
        let reduce = "#       size         count      type   redop    root     time   algbw   busbw  error     time   algbw   busbw  error\n";
        let p = parse(&format!("{reduce}     1048576        262144     float     sum       0    100.0   10.49   19.66  0e+00    100.0   10.49   19.66  0e+00\n"));
        assert_eq!((p.old_errors, p.rows[0].redop.as_str(), p.rows[0].out_of_place.busbw), (0, "sum", 19.66));
        // alltoall's in-place error is printed, never counted
        let a2a =
            "#       size         count      type     time   algbw   busbw  error     time   algbw   busbw  error\n";
        let p = parse(&format!("{a2a}     1048576        262144     float    100.0   10.49   19.66  0e+00    100.0   10.49   19.66  1e+00\n"));
        assert_eq!(p.old_errors, 0);
        let p = parse(&format!("{head}  4294967296    1073741824   float     sum   179136   23.98   44.96  5e-07   179234   23.96   44.93  5e-07\n"));
        assert_eq!(p.old_errors, 0);
        let p = parse(&format!("{head}        1024           256     int32     sum    20.00    0.05    0.05  1e+00    20.00    0.05    0.05    N/A\n        1024           256     float     sum    20.00    0.05    0.05    inf    20.00    0.05    0.05    nan\n"));
        assert_eq!(p.old_errors, 2);
    }

    /// The factor nccl-tests' `*GetBw` puts between busbw and algbw names all-reduce (2(n−1)/n,
    /// over one from three ranks on) and nothing else: every other test's is 1 or (n−1)/n.
    #[test]
    fn all_reduce_is_known_by_its_bus_bandwidth_factor() {
        let table = |n: usize, rates: &[(f64, f64)]| {
            let ranks: String = (0..n)
                .map(|r| format!("#  Rank {r:2} Group  0 Pid 1 on host{} device {r} [0x1a] NVIDIA H100\n", r / 8))
                .collect();
            let rows: String = rates
                .iter()
                .map(|(a, b)| format!("   8589934592    2147483648     float     sum      -1    30000  {a:6.2}  {b:6.2}      0    30000  {a:6.2}  {b:6.2}      0\n"))
                .collect();
            parse(&format!("{ranks}#\n{HEAD}\n{rows}"))
        };
        // 16 ranks: AllReduceGetBw's 2·15/16 = 1.875, to two decimals
        let f = |a: f64, n: usize| (a, (a * 2.0 * (n as f64 - 1.0) / n as f64 * 100.0).round() / 100.0);
        assert_eq!(table(16, &[f(250.12, 16), f(1.07, 16)]).collective_from_factor(), Some("all_reduce"));
        // all-gather, reduce-scatter, all-to-all: (n−1)/n; send/receive, broadcast: 1
        assert_eq!(table(16, &[(250.0, 234.38)]).collective_from_factor(), None);
        assert_eq!(table(16, &[(250.0, 250.0)]).collective_from_factor(), None);
        // a log of two tests (all-reduce's rows beside all-to-all's) names neither
        assert_eq!(table(16, &[f(250.0, 16), (250.0, 234.38)]).collective_from_factor(), None);
        // two ranks: all-reduce's factor is 1, like send/receive's
        assert_eq!(table(2, &[(20.0, 20.0)]).collective_from_factor(), None);
        // the factor of 8 ranks in a table of 16: not this rank table's all-reduce
        assert_eq!(table(16, &[f(250.0, 8)]).collective_from_factor(), None);
        // no rank table: any all-reduce factor; rates under 1 GB/s are rounding only
        let rows = format!("{HEAD}\n      1024    256     float     sum      -1    30.0    0.03    0.06      0    30.0    0.03    0.06      0\n");
        assert_eq!(parse(&rows).collective_from_factor(), None);
        let rows = format!("{HEAD}\n   8589934592    2147483648     float     sum      -1    30000  100.00  175.00      0    30000  100.00  175.00      0\n");
        assert_eq!(parse(&rows).collective_from_factor(), Some("all_reduce"));
    }

    /// nccl-tests behind docker compose's `name  | ` (a wrapper no rule names) and Open MPI's
    /// `--tag-output` glued to its `#` (review 24); and behind a wrapper that began after the
    /// run's header had been printed.
    #[test]
    fn a_table_behind_a_wrapper_and_mpiruns_tag_is_read() {
        let w = "worker1-1  | [1,0]<stdout>:";
        let t = [
            "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
            "     1048576        262144     float     sum      -1    44.00   23.83   44.93     12    44.00   23.83   44.93     12",
            "# Out of bounds values : 24 FAILED",
            "# Avg bus bandwidth    : 44.93 ",
        ];
        let text: String = t.iter().map(|l| format!("{w}{l}\n")).collect();
        let p = parse(&text);
        assert_eq!((p.rows.len(), p.out_of_bounds, p.avg_busbw), (1, 24, Some(44.93)));
        let late: String = t.iter().enumerate().map(|(i, l)| format!("{}{l}\n", if i == 0 { "" } else { w })).collect();
        let p = parse(&late);
        assert_eq!((p.rows.len(), p.out_of_bounds, p.avg_busbw), (1, 24, Some(44.93)));
    }

    /// nccl-tests before 2.x printed its summary without the `#` (common.cu: `PRINT(" Out of
    /// bounds values : %d %s\n", …)`, `PRINT(" Avg bus bandwidth    : %g %s\n", …)`).
    #[test]
    fn the_summary_of_nccl_tests_before_2_x_is_read() {
        let rows = "       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n     8388608       2097152     float     sum   5729.5    1.46    1.46  0e+00   5477.3    1.53    1.53  1e+00\n";
        let p = parse(&format!("{rows}Out of bounds values : 2 FAILED\nAvg bus bandwidth    : 1.49781\n"));
        assert_eq!((p.out_of_bounds, p.avg_busbw, p.last_done), (2, Some(1.49781), true));
        let p = parse(&format!("{rows}Out of bounds values : 0 OK\nAvg bus bandwidth    : 1.49781 \n"));
        assert_eq!((p.out_of_bounds, p.last_done), (0, true));
        // a script's echo after a run is no summary of nccl-tests'
        let p = parse(&format!(
            "{rows}Out of bounds values : 0 OK\nAvg bus bandwidth    : 1.49781\nAvg bus bandwidth: 1.49781\n"
        ));
        assert_eq!(p.summaries, 1);
    }

    #[test]
    fn the_old_tables_error_column_is_no_count_of_wrong_values() {
        // nccl-tests before 2.x: `size count type redop time algbw busbw error …`; at 4 GiB the
        // time is an integer, which is no root (aws-efa-eks's README, NCCL 2.9.9)
        let p = parse("#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n  4294967296    1073741824   float     sum   179136   23.98   44.96  5e-07   179234   23.96   44.93  5e-07\n");
        assert_eq!((p.rows.len(), p.wrong_total), (1, 0));
        assert_eq!(p.rows[0].out_of_place.busbw, 44.96);
        let p = parse("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n     1048576        262144     float     sum      -1    100.0   10.49   19.66      3    100.0   10.49   19.66      0\n# Out of bounds values : 3 FAILED\n");
        assert_eq!((p.wrong_total, p.out_of_bounds), (3, 3));
        // and with no reduction column (nccl#340's table: `size count type time algbw busbw error`)
        let p = parse(
            "   134217728      16777216   float   3298.6   20.34   20.34  0e+00   3070.3   21.86   21.86  0e+00\n",
        );
        assert_eq!((p.rows.len(), p.wrong_total), (1, 0));
        assert_eq!((p.rows[0].out_of_place.busbw, p.rows[0].in_place.as_ref().map(|b| b.busbw)), (20.34, Some(21.86)));
    }

    #[test]
    fn the_bounds_check_ends_a_sweep_as_the_summary_does() {
        // common.cu prints `# Out of bounds values : %d %s` once the sweep is done, then
        // `# Avg bus bandwidth`: a log cut between the two (held-out nixpkgs#251856) finished
        let head = "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0";
        let rows = [head, HEAD, &row(1 << 20), &row(1 << 21)].join("\n");
        let p = parse(&format!("{rows}\n# Out of bounds values : 0 OK\n"));
        assert!(p.sweep_done() && p.unfinished().is_none());
        // without either line the same rows are a sweep not shown finishing only where the
        // header asked for more
        let p = parse(&rows);
        assert!(!p.sweep_done() && p.unfinished().is_none());
        let p = parse(&[head, HEAD, &row(1 << 20)].join("\n"));
        assert_eq!(p.unfinished(), Some((1 << 20, 1 << 21)));
    }

    #[test]
    fn the_last_run_decides_whether_the_sweep_finished() {
        // review 9: a first test that finished, then a second that stopped mid-sweep
        let head = "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0";
        let first = [
            head,
            HEAD,
            &row(1 << 20),
            &row(1 << 21),
            &row(1 << 22),
            "# Out of bounds values : 0 OK",
            "# Avg bus bandwidth    : 4.8",
        ]
        .join("\n");
        let p = parse(&format!("{first}\n{head}\n{HEAD}\n{}\n", row(1 << 20)));
        assert!(!p.sweep_done());
        assert_eq!(p.unfinished(), Some((1 << 20, 1 << 22)));
        // a step in bytes: 12024 MiB of 12 GiB by 1 GiB steps was the sweep's last size
        let bytes =
            "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 12884901888 step: 1073741824(bytes) warmup iters: 5";
        let p = parse(&[bytes, HEAD, &row(12608077824)].join("\n"));
        assert_eq!(p.unfinished(), None);
        let p = parse(&[bytes, HEAD, &row(11534336000)].join("\n"));
        assert_eq!(p.unfinished(), Some((11534336000, 12884901888)));
    }

    #[test]
    fn a_rank_table_is_whole_only_with_every_rank() {
        // nccl-tests' header lists every rank of the job; an excerpt of one line is not one node
        let p = parse("#  Rank 71 Group  0 Pid  14840 on slurm-gb200-207-171 device  3 [0x01] NVIDIA Graphics Device");
        assert_eq!((p.ranks, p.rank_span), (1, 72));
        assert_eq!(p.whole_rank_table(), None);
        let ranks = "#  Rank  0 Group  0 Pid 1 on a device  0 [0x01] H200\n#  Rank  1 Group  0 Pid 2 on b device  0 [0x01] H200\n";
        // a header cut after its rank lines (held-out set 16) may have lost the rest of them
        assert_eq!(parse(ranks).whole_rank_table(), None);
        let p = parse(&format!("{ranks}#\n"));
        assert_eq!(p.whole_rank_table(), Some((2, 2)));
    }

    #[test]
    fn a_rank_table_that_lost_its_hash_marks_and_rank_0_on_two_hosts() {
        // nccl-tests#136 as pasted: Markdown ate the `#` of the rank lines
        let p = parse(
            "Rank  0 Group  0 Pid 524323 on nlp-gpu-05 device  0 [0x21] NVIDIA A100-SXM4-80GB\n\
             Rank  0 Group  0 Pid  18325 on nlp-gpu-07 device  0 [0x51] NVIDIA A100-SXM4-80GB\n\
             Rank of the month: someone on call device 3 [x]\n",
        );
        assert_eq!((p.ranks, p.hosts.len(), p.rank0_hosts), (2, 2, 2));
        assert!(p.separate_runs().unwrap().contains("rank 0 on 2 hosts"));
        assert!(parse("#  Rank  0 Pid 1 on a device  0 [0x1] X\n#  Rank  0 Pid 1 on a device  0 [0x1] X\n")
            .separate_runs()
            .is_none());
    }

    #[test]
    fn rows_before_the_root_column_are_read() {
        // nccl-tests before 2.10: no root column, `error` a deviation, not a count
        let p = parse(
            "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n\
             \x20          4             1     float     sum    47.54    0.00    0.00  0e+00    49.35    0.00    0.00  4e-07\n\
             \x20  536870912     134217728     float     sum   5360.1  100.16  187.80  5e-07   5350.2  100.35  188.15  5e-07\n",
        );
        assert_eq!(p.rows.len(), 2, "{p:?}");
        assert_eq!(p.rows[1].root, -1);
        assert_eq!(p.rows[1].out_of_place.busbw, 187.80);
        assert_eq!(p.rows[1].in_place.as_ref().unwrap().busbw, 188.15);
        assert_eq!(p.wrong_total, 0);
        assert_eq!(p.rows[1].out_of_place.wrong, None);
        assert_eq!(p.truncated_rows, 0);
    }

    #[test]
    fn two_processes_printing_one_test_are_separate_runs() {
        // one run: header, rising sizes, one summary
        let one = [HEAD.to_string(), row(1 << 20), row(1 << 21), "# Avg bus bandwidth    : 4.8".into()].join("\n");
        assert_eq!(parse(&one).separate_runs(), None);
        // two runs one after the other (a script running the test twice) each print a header
        assert_eq!(parse(&format!("{one}\n{one}")).separate_runs(), None);
        // nccl-tests without MPI under `mpirun -np 2`: both processes are rank 0 and print
        let mixed = [HEAD.to_string(), row(1 << 27), row(1 << 27), row(1 << 28)].join("\n");
        let mixed = format!("{mixed}\n# Avg bus bandwidth    : 1.80\n{}\n# Avg bus bandwidth    : 1.66", row(1 << 28));
        assert!(parse(&mixed).separate_runs().is_some());
        // two summaries with nothing between them
        let p = parse("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 3.94145\n#\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 3.94156");
        assert_eq!((p.summaries, p.interleaved), (2, 1));
    }
}
