//! `ibwire verify`: run a short all-reduce through launch's path (or read existing logs), then
//! say whether the job is on the expected transport, with GPUDirect RDMA, and how close to the
//! hardware's ceiling it runs.

use super::printable;
use crate::nccl::bench::{Allreduce, Bench};
use crate::nccl::{log, tests_output};
use crate::plan::verify::{judge, CeilingInputs, Expect, Measured, Report};
use crate::plan::{self, Intent};
use crate::probe::Node;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

const ALLREDUCE_PY: &str = include_str!("../../examples/allreduce.py");

#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Analyse existing NCCL_DEBUG=INFO logs and/or nccl-tests output instead of running
    /// (`-` is stdin; a directory stands for the files in it, e.g. NCCL_DEBUG_FILE's per rank).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub from_log: Vec<PathBuf>,
    /// Print the verdict as JSON: network, gdr, hcas, bootstrap_if, busbw_gbps,
    /// ring_ceiling_gbps, hierarchical_ceiling_gbps, verdict, causes, …
    #[arg(long)]
    pub json: bool,
    /// HCAs per node for the ceiling (default: those NCCL listed, else the healthy set).
    #[arg(long, value_name = "N")]
    pub hcas: Option<usize>,
    /// Link rate of each HCA in Gb/s for the ceiling (default: the probed rate).
    #[arg(long, value_name = "GBIT")]
    pub hca_gbit: Option<f64>,
    /// Nodes in the job, when the log does not show them.
    #[arg(long, value_name = "N")]
    pub nodes: Option<usize>,
    /// Message size of the measured all-reduce, in MB.
    #[arg(long, default_value_t = 256.0)]
    pub size_mb: f64,
    /// Give up on the benchmark after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// Keep the benchmark's full output (NCCL's log) in FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Rendezvous host (default: Slurm's first node, else 127.0.0.1).
    #[arg(long, value_name = "HOST")]
    pub master_addr: Option<String>,
    /// Configuration file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The transport the job was meant to use between nodes. `auto`: from the job's node
    /// when given (--root, --snapshot, or this node for a live run), else from the log
    /// (RDMA across nodes: a multi-node job on TCP sockets is not ok unless `--expect socket`).
    /// A log read with --from-log is judged by its own evidence, never by the machine that
    /// reads it; pass `--root /` to judge it against this node.
    #[arg(long, value_enum, default_value_t = Expect::Auto, value_name = "FABRIC")]
    pub expect: Expect,
}

/// `# ibwire-allreduce size=… busbw_gbps=380.5 world=8` from examples/allreduce.py.
fn allreduce_line(l: &str) -> Option<Allreduce> {
    // examples/allreduce.py prints it at the start of a line; a launcher's prefix is short
    memchr::memchr(b'#', &l.as_bytes()[..l.len().min(64)])?;
    let r = l.split_once("# ibwire-allreduce ")?.1;
    let get = |k: &str| r.split_whitespace().find_map(|w| w.strip_prefix(k));
    // (its size is examples/allreduce.py's own, chosen to reach the bound: not judged as a sweep's)
    Some(Allreduce {
        busbw: get("busbw_gbps=")?.parse().ok()?,
        ranks: get("world=")?.parse().ok()?,
        bytes: None,
        model: None,
    })
}

/// examples/allreduce.py's result run onto the end of another line (`… Connected all tree#
/// ibwire-allreduce … world=2`): looked for only where the line ends ` world=N`.
fn allreduce_glued(l: &str) -> Option<Allreduce> {
    let b = l.as_bytes();
    let mut j = b.len();
    while j > 0 && b[j - 1].is_ascii_digit() {
        j -= 1;
    }
    if j == b.len() || !b[..j].ends_with(b" world=") {
        return None;
    }
    let i = l.rfind("# ibwire-allreduce ")?;
    allreduce_line(&l[i..])
}

/// Everything read from the inputs, one line at a time.
pub struct Read {
    pub facts: log::LogFacts,
    pub tests: tests_output::TestsOutput,
    pub allreduce: Option<Allreduce>,
}

impl Read {
    /// The two readers' results, nccl-tests' rank table (which ranks run on which hosts) told
    /// to the log's facts.
    fn of(mut facts: log::LogFacts, tests: tests_output::TestsOutput, allreduce: Option<Allreduce>) -> Read {
        facts.rank_table = tests.whole_rank_table();
        facts.separate_runs = tests.separate_runs().or(facts.separate_runs);
        facts.stalls_passed_by(tests.done_at);
        Read { facts, tests, allreduce }
    }
}

/// The longest line kept (a longer one is cut; NCCL's lines are far shorter).
const MAX_LINE: usize = 64 * 1024;

type Readers = (log::Analyser, tests_output::Parser, Option<Allreduce>, log::OwnLines, Bench);

fn reader() -> Readers {
    (log::Analyser::new(), tests_output::Parser::default(), None, log::OwnLines::default(), Bench::default())
}

fn feed(st: &mut Readers, raw: &str) {
    // Cleaned and unwrapped once for both readers; ibwire's own reports are no evidence.
    let cleaned = crate::nccl::clean(raw);
    if st.3.skip(&cleaned) {
        return;
    }
    let l = crate::nccl::unwrap_line(&cleaned);
    st.0.line_unwrapped(l);
    st.1.line_unwrapped(l);
    match allreduce_line(l) {
        Some(r) => Allreduce::keep(&mut st.2, Some(r)),
        None => st.4.line(l),
    }
}

pub fn read_text(text: &str) -> Read {
    let mut st = reader();
    for l in text.lines() {
        feed(&mut st, l);
    }
    Allreduce::keep(&mut st.2, st.4.finish());
    Read::of(st.0.finish(), st.1.finish(), st.2)
}

/// Open one input: `-` is stdin; anything else must be a regular file (a FIFO would block the
/// reader forever, `/dev/zero` would never end): opened without blocking, then checked.
fn open_input(f: &std::path::Path) -> Result<Box<dyn std::io::Read + Send>> {
    use std::os::unix::fs::OpenOptionsExt;
    if f.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdin()));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(f)
        .with_context(|| format!("cannot read {}", f.display()))?;
    let m = file.metadata().with_context(|| format!("cannot read {}", f.display()))?;
    if m.is_dir() {
        bail!("cannot read {}: it is a directory", f.display());
    }
    if !m.is_file() {
        bail!(
            "cannot read {}: not a regular file (a FIFO or device); pipe it through stdin: --from-log - < FILE",
            f.display()
        );
    }
    let mut head = [0u8; 8];
    let n = std::os::unix::fs::FileExt::read_at(&file, &mut head, 0).unwrap_or(0);
    if let Some((what, how)) = not_text(&head[..n]) {
        bail!("{}: {what}, not a log{how}", f.display());
    }
    Ok(Box::new(file))
}

/// A file whose first bytes are a binary format's magic number (review 4: an ELF file read as
/// text gave 25 causes), and how to read it where it holds a log (compressed).
fn not_text(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const MAGIC: [(&[u8], &str, &str); 7] = [
        (b"\x7fELF", "an ELF executable", ""),
        (b"\x1f\x8b", "gzip-compressed", ": zcat FILE | ibwire verify --from-log -"),
        (b"\x28\xb5\x2f\xfd", "zstd-compressed", ": zstdcat FILE | ibwire verify --from-log -"),
        (b"\xfd7zXZ\x00", "xz-compressed", ": xzcat FILE | ibwire verify --from-log -"),
        (b"PK\x03\x04", "a zip archive", ": unzip -p FILE | ibwire verify --from-log -"),
        (b"\x89PNG", "a PNG image", ""),
        (b"%PDF", "a PDF document", ""),
    ];
    if head.len() >= 4 && head.starts_with(b"BZh") && head[3].is_ascii_digit() {
        return Some(("bzip2-compressed", ": bzcat FILE | ibwire verify --from-log -"));
    }
    MAGIC.iter().find(|(m, ..)| head.starts_with(m)).map(|(_, what, how)| (*what, *how))
}

/// A directory stands for the regular files directly in it, by name (NCCL_DEBUG_FILE's one
/// file per rank, `launch`'s kept logs); links and subdirectories in it are passed over.
fn expand_dirs(files: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for f in files {
        let is_dir = f.as_os_str() != "-" && std::fs::symlink_metadata(f).map(|m| m.is_dir()).unwrap_or(false);
        if !is_dir {
            out.push(f.clone());
            continue;
        }
        let mut inside: Vec<PathBuf> = std::fs::read_dir(f)
            .with_context(|| format!("cannot read {}", f.display()))?
            .flatten()
            .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
            .map(|e| e.path())
            .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect();
        if inside.is_empty() {
            bail!("cannot read {}: the directory holds no log file", f.display());
        }
        inside.sort();
        out.extend(inside);
    }
    Ok(out)
}

/// Lines handed to the log reader's thread at a time: bounded (4 buffers of ~1 MiB in flight).
const BATCH: usize = 1 << 20;

/// The files, streamed: memory stays bounded whatever their size (a 512-rank INFO log is
/// gigabytes). `-` is stdin. Two threads: this one reads, cleans and unwraps each line and
/// feeds nccl-tests' reader; the other runs NCCL's log reader on batches of those lines, in
/// order. A progress line shows on a terminal for inputs over 64 MiB.
pub fn read_files(files: &[PathBuf]) -> Result<Read> {
    let files = expand_dirs(files)?;
    let files = &files[..];
    let mut inputs: Inputs = files.iter().map(|f| open_input(f).map(|r| (f.clone(), r))).collect::<Result<_>>()?;
    // `ibwire launch: NCCL's log: DIR` in a job's output: the log it kept is read too.
    let mut seen: std::collections::BTreeSet<PathBuf> = files.iter().cloned().collect();
    let bar = progress_bar(files);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
    // Batches read go back to be filled again: a fresh megabyte per batch costs its page faults
    // (zeroed pages, an eighth of the reading time).
    let (back, spare) = std::sync::mpsc::sync_channel::<Vec<u8>>(8);
    let queued = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let q = &queued;
        let worker = scope.spawn(move || analyse_batches(rx, back, q));
        let mut feed = Feed::new(&queued, bar.as_ref(), &spare, &tx);
        let mut own = log::OwnLines::default();
        let mut res = Ok(());
        // a line that needs cleaning is written here, the buffer kept from line to line
        let mut scratch = String::new();
        while let Some((f, r)) = inputs.pop_front() {
            let mut pointed: Vec<PathBuf> = Vec::new();
            let input = std::io::BufReader::with_capacity(1 << 20, r);
            let read = crate::nccl::for_each_line_marked(input, MAX_LINE, |raw, clean| {
                let cleaned = if clean { raw } else { crate::nccl::clean_in(raw, &mut scratch) };
                let (unwrapped, fast) = crate::nccl::unwrap_line_fast(cleaned);
                if let Some(d) = unwrapped.strip_prefix(super::watch::KEPT) {
                    if pointed.len() < 64 {
                        pointed.push(PathBuf::from(d.trim()));
                    }
                }
                // ibwire's own reports (launch's verdicts and stop messages) are no evidence
                if own.skip(cleaned) {
                    return;
                }
                feed.cleaned(cleaned, unwrapped, fast);
            });
            if let Err(e) = read {
                res = Err(anyhow::Error::new(e).context(format!("cannot read {}", f.display())));
                break;
            }
            follow_pointed(pointed, &mut seen, &mut inputs);
        }
        feed.settle();
        let (tests, mut allreduce, out) = (feed.tests, feed.allreduce, feed.out);
        Allreduce::keep(&mut allreduce, feed.bench.finish());
        last_batch(out, tx, bar.as_ref());
        let facts = worker.join().map_err(|_| anyhow::anyhow!("the log reader failed"))?;
        res?;
        Ok(Read::of(facts, tests.finish(), allreduce))
    })
}

/// What the reading thread does with each line: the nccl-tests and allreduce readers, then
/// the line into the batch for the log reader's thread.
struct Feed<'a> {
    tests: tests_output::Parser,
    allreduce: Option<Allreduce>,
    /// ml-engineering's all_reduce_bench, read so far.
    bench: Bench,
    out: Vec<u8>,
    slot: u8,
    /// Of each eight lines, how many get their tag and gate here rather than in the log
    /// reader's thread: moved a step per batch towards whichever thread waits for the other.
    share: u8,
    /// Batches sent and not yet taken by the log reader's thread.
    queued: &'a std::sync::atomic::AtomicUsize,
    /// A line in `out` whose [`log::Pre`] waits for the next line's, to be worked out with it
    /// ([`log::pre2`]): where its Pre goes, and where the line is.
    pending: Option<(usize, std::ops::Range<usize>)>,
    /// The line being fed is a segment of a flattened line after its first.
    segment: bool,
    bar: Option<&'a indicatif::ProgressBar>,
    spare: &'a std::sync::mpsc::Receiver<Vec<u8>>,
    tx: &'a std::sync::mpsc::SyncSender<Vec<u8>>,
}

impl Feed<'_> {
    /// One line cleaned and unwrapped (`nccl`: it began with NCCL's prefix as it came), or a
    /// flattened line's segments: those after the first begin mid-line, so their hosts are
    /// weaker evidence (two processes' writes glued together make false ones).
    fn cleaned(&mut self, cleaned: &str, unwrapped: &str, nccl: bool) {
        match crate::nccl::flattened(cleaned) {
            None => self.line(unwrapped, nccl),
            Some(lines) => {
                for (k, l) in lines.into_iter().enumerate() {
                    self.segment = k > 0;
                    self.line(crate::nccl::unwrap_line(l), false);
                }
                self.segment = false;
            }
        }
    }

    #[inline]
    fn line(&mut self, l: &str, nccl: bool) {
        if l.is_empty() {
            return;
        }
        if nccl {
            self.tests.line_nccl(l);
        } else {
            self.tests.line_unwrapped(l);
        }
        // (on an NCCL line only where another process's result line was run onto its end —
        // review 15: its own line break ends it, so it ends the line)
        match if nccl { allreduce_glued(l) } else { allreduce_line(l) } {
            Some(x) => Allreduce::keep(&mut self.allreduce, Some(x)),
            None if !nccl => self.bench.line(l),
            None => {}
        }
        // The tag and the gate's pass run here for `share` lines in eight and in the log
        // reader's thread for the rest, so that neither thread waits for the other.
        self.slot = (self.slot + 1) % 8;
        let seg = self.segment;
        if self.slot >= self.share {
            push_line(&mut self.out, log::Pre::NONE, l, seg);
        } else if let Some((at, r)) = self.pending.take() {
            // SAFETY: the bytes of a `&str`, copied whole into `out` (push_line).
            let a = unsafe { std::str::from_utf8_unchecked(&self.out[r]) };
            let (pa, pb) = log::pre2(a, l);
            self.out[at..at + log::Pre::BYTES].copy_from_slice(&pa.to_bytes());
            push_line(&mut self.out, pb, l, seg);
        } else {
            let at = self.out.len();
            push_line(&mut self.out, log::Pre::NONE, l, seg);
            self.pending = Some((at, at + LINE_HEAD..self.out.len()));
        }
        if self.out.len() >= BATCH {
            self.settle();
            // Nothing queued: the log reader waits for this thread, which then does less of
            // the shared work; two or more queued: this thread waits for it, and does more.
            match self.queued.load(std::sync::atomic::Ordering::Relaxed) {
                0 => self.share = self.share.saturating_sub(1),
                q if q >= 2 => self.share = (self.share + 1).min(8),
                _ => {}
            }
            // counted before it is sent: the log reader's thread may take it first
            self.queued.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            send_batch(&mut self.out, self.bar, self.spare, self.tx);
        }
    }
}

impl<'a> Feed<'a> {
    fn new(
        queued: &'a std::sync::atomic::AtomicUsize,
        bar: Option<&'a indicatif::ProgressBar>,
        spare: &'a std::sync::mpsc::Receiver<Vec<u8>>,
        tx: &'a std::sync::mpsc::SyncSender<Vec<u8>>,
    ) -> Self {
        Feed {
            tests: tests_output::Parser::default(),
            allreduce: None,
            bench: Bench::default(),
            out: Vec::with_capacity(BATCH + MAX_LINE),
            slot: 0,
            share: 4,
            pending: None,
            segment: false,
            queued,
            bar,
            spare,
            tx,
        }
    }

    /// The line waiting for a partner gets its [`log::Pre`] alone.
    fn settle(&mut self) {
        if let Some((at, r)) = self.pending.take() {
            // SAFETY: the bytes of a `&str`, copied whole into `out` (push_line).
            let a = unsafe { std::str::from_utf8_unchecked(&self.out[r]) };
            let p = log::pre(a);
            self.out[at..at + log::Pre::BYTES].copy_from_slice(&p.to_bytes());
        }
    }
}

/// A line's head in a batch: its Pre, then its length.
const LINE_HEAD: usize = log::Pre::BYTES + 4;

/// The files still to read, each with its (decompressing) reader.
type Inputs = std::collections::VecDeque<(PathBuf, Box<dyn std::io::Read + Send>)>;

/// One line into the batch for the reader thread: [pre: 16 bytes][length: 4 bytes][line].
#[inline]
fn push_line(out: &mut Vec<u8>, pre: log::Pre, l: &str, segment: bool) {
    out.extend_from_slice(&pre.to_bytes());
    // the length's top bit: a segment of a flattened line after its first (lines are < 2 GiB)
    out.extend_from_slice(&((l.len() as u32) | (u32::from(segment) << 31)).to_le_bytes());
    out.extend_from_slice(l.as_bytes());
}

/// The last batch sent and the channel closed: the reader thread then finishes.
fn last_batch(out: Vec<u8>, tx: std::sync::mpsc::SyncSender<Vec<u8>>, bar: Option<&indicatif::ProgressBar>) {
    if !out.is_empty() {
        let _ = tx.send(out);
    }
    drop(tx);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// A full batch to the reader thread, a spare one (or a new one) in its place.
fn send_batch(
    out: &mut Vec<u8>,
    bar: Option<&indicatif::ProgressBar>,
    spare: &std::sync::mpsc::Receiver<Vec<u8>>,
    tx: &std::sync::mpsc::SyncSender<Vec<u8>>,
) {
    if let Some(b) = bar {
        b.inc(out.len() as u64);
    }
    let next = spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH + MAX_LINE));
    let _ = tx.send(std::mem::replace(out, next));
}

/// A progress line on a terminal, for inputs over 64 MiB.
fn progress_bar(files: &[PathBuf]) -> Option<indicatif::ProgressBar> {
    let total: u64 =
        files.iter().filter_map(|f| std::fs::metadata(f).ok()).filter(|m| m.is_file()).map(|m| m.len()).sum();
    (total > 64 << 20 && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
        let b = indicatif::ProgressBar::new(total);
        b.set_style(
            indicatif::ProgressStyle::with_template("reading {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    })
}

/// The log reader's thread: batches of lines (each with its tag's pass, or none yet) into
/// the analyser; emptied batches go back to be filled again.
fn analyse_batches(
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
    back: std::sync::mpsc::SyncSender<Vec<u8>>,
    queued: &std::sync::atomic::AtomicUsize,
) -> log::LogFacts {
    let mut a = log::Analyser::new();
    for mut batch in rx {
        // counted by the reading thread before it sent it; the last batch comes without a
        // count (`last_batch`), when every counted one was taken
        let _ = queued.fetch_update(std::sync::atomic::Ordering::Relaxed, std::sync::atomic::Ordering::Relaxed, |q| {
            q.checked_sub(1)
        });
        // [pre: 16 bytes][length: 4 bytes][line], each line whole `&str` (below)
        let mut at = 0;
        while at + LINE_HEAD <= batch.len() {
            let pre = log::Pre::from_bytes(&batch[at..at + log::Pre::BYTES]);
            let raw = u32::from_le_bytes(batch[at + LINE_HEAD - 4..at + LINE_HEAD].try_into().unwrap_or([0; 4]));
            let (n, segment) = ((raw & !(1 << 31)) as usize, raw >> 31 == 1);
            let end = (at + LINE_HEAD + n).min(batch.len());
            // SAFETY: the bytes of a `&str`, copied whole.
            let l = unsafe { std::str::from_utf8_unchecked(&batch[at + LINE_HEAD..end]) };
            a.line_segment(l, pre, segment);
            at = end;
        }
        batch.clear();
        let _ = back.try_send(batch);
    }
    a.finish()
}

/// `ibwire launch: NCCL's log: DIR` lines: the kept log's files join the inputs (each once);
/// a directory that is not here is said.
fn follow_pointed(pointed: Vec<PathBuf>, seen: &mut std::collections::BTreeSet<PathBuf>, inputs: &mut Inputs) {
    for d in pointed {
        // A directory that is gone (another machine's /tmp) is said, not fatal.
        match expand_dirs(std::slice::from_ref(&d)).ok().filter(|_| d.is_dir()) {
            Some(more) => {
                for m in more.into_iter().filter(|m| seen.insert(m.clone())) {
                    if let Ok(r) = open_input(&m) {
                        inputs.push_back((m, r));
                    }
                }
            }
            None if seen.insert(d.clone()) => {
                eprintln!("ibwire verify: the job's output names NCCL's log in {}, which is not here", d.display())
            }
            None => {}
        }
    }
}

pub fn analyse(node: &Node, node_known: bool, plan: &plan::Plan, input: &Read, a: &Args) -> Report {
    let (facts, tests) = (&input.facts, &input.tests);
    // The table's best row; where no row was readable (rows broken by lines printed between
    // them), its summary: an average over every size.
    let table = tests.peak_busbw().map(|b| (b, false)).or(tests.avg_busbw.map(|b| (b, true)));
    let measured = if let Some((b, average)) = table {
        Some(Measured {
            busbw_gbps: b,
            nranks: tests.whole_rank_table().map_or(facts.nranks.unwrap_or(0), |(r, _)| r),
            nodes: tests.whole_rank_table().map_or(facts.hosts.len(), |(_, h)| h),
            // one model for the job: every rank's device the same (a mixed job has none)
            gpu_model: tests.devices.first().filter(|m| tests.devices.iter().all(|d| d == *m)).cloned(),
            max_bytes: tests.rows.iter().map(|r| r.size).max(),
            unfinished: tests.unfinished(),
            wrong: tests.wrong_total.saturating_add(tests.out_of_bounds).saturating_add(tests.old_errors),
            average,
            finished: tests.sweep_done(),
            // every test the output names (the table's best row is any of theirs); where it
            // names none, the one its rates' factor shows
            collectives: if tests.tests_run.is_empty() {
                tests.collective_from_factor().map(str::to_string).into_iter().collect()
            } else {
                tests
                    .tests_run
                    .iter()
                    .map(|t| t.trim_end_matches("_mpi").trim_end_matches("_perf").to_string())
                    .collect()
            },
        })
    } else {
        input.allreduce.clone().map(|r| Measured {
            busbw_gbps: r.busbw,
            nranks: r.ranks,
            nodes: facts.hosts.len(),
            gpu_model: r.model,
            // (a payload too small to reach the bandwidth bound is judged as a table's is)
            max_bytes: r.bytes,
            unfinished: None,
            wrong: 0,
            average: false,
            finished: true,
            collectives: vec!["all_reduce".to_string()],
        })
    };
    let ci = CeilingInputs {
        hcas: a.hcas,
        hca_gbit: a.hca_gbit,
        nodes: a.nodes,
        expect: a.expect,
        node_known,
        socket_flag: None,
        one_node: false,
        benchmark_silent: tests.last_silent,
    };
    judge(node, plan, facts, measured.as_ref(), &ci)
}

/// What each node's NCCL reported, nodes grouped by it (hostlist-compressed), the majority first;
/// empty when the log is one node's.
pub fn per_node(facts: &log::LogFacts) -> Vec<(String, String, usize)> {
    if facts.per_host.len() < 2 {
        return Vec::new();
    }
    let mut by: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (h, v) in &facts.per_host {
        by.entry(log::node_summary(v)).or_default().push(h.clone());
    }
    let mut v: Vec<(String, String, usize)> =
        by.into_iter().map(|(k, hs)| (k, crate::slurm::compress_hostlist(&hs), hs.len())).collect();
    v.sort_by_key(|g| std::cmp::Reverse(g.2));
    v
}

pub fn render(r: &Report, facts: &log::LogFacts, json: bool) -> Result<String> {
    let nodes = per_node(facts);
    if json {
        let mut v = serde_json::to_value(r)?;
        v["schema"] = crate::render::JSON_SCHEMA.into();
        v["log"] = serde_json::to_value(facts)?;
        v["per_node"] = nodes
            .iter()
            .map(|(what, hosts, n)| serde_json::json!({"nccl": what, "nodes": hosts, "count": n}))
            .collect();
        return Ok(serde_json::to_string_pretty(&v)? + "\n");
    }
    let mut s = String::new();
    s.push_str(&format!("{}\n", printable(&r.verdict, 4000)));
    if nodes.len() > 1 {
        s.push_str("  per node, NCCL reported:\n");
        for (what, hosts, n) in &nodes {
            s.push_str(&format!("    {}: {} ({n})\n", printable(what, 4000), printable(hosts, 4000)));
        }
    }
    facts_lines(&mut s, r, facts);
    for w in facts.warns.iter().take(5) {
        s.push_str(&format!("  NCCL WARN {}\n", printable(w, 4000)));
    }
    causes_and_notes(&mut s, r);
    Ok(s)
}

/// The facts under the verdict: nodes, network, GPUDirect, NCCL, the expectation, HCAs,
/// bootstrap, channels and bandwidths.
fn facts_lines(s: &mut String, r: &Report, facts: &log::LogFacts) {
    let f = |o: Option<f64>| o.map(|v| format!("{v:.1} GB/s")).unwrap_or_else(|| "-".into());
    s.push_str(&format!(
        "  nodes: {}   network: {}   GPUDirect RDMA: {}   NCCL {}\n  expected: {} ({})\n",
        match r.nodes {
            Some(n) => format!("{n} ({})", r.nodes_evidence),
            None => "unknown".into(),
        },
        printable(r.network.as_deref().unwrap_or("unknown"), 4000),
        match r.gdr {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        },
        printable(facts.version.as_deref().unwrap_or("?"), 4000),
        r.expected_network,
        printable(&r.expected_from, 4000),
    ));
    if !r.hcas.is_empty() {
        s.push_str(&format!("  HCAs: {}\n", printable(&r.hcas.join(" "), 4000)));
    }
    s.push_str(&format!(
        "  bootstrap: {}   OOB: {}\n",
        printable(r.bootstrap_if.as_deref().unwrap_or("-"), 4000),
        printable(facts.oob_if.as_deref().unwrap_or("-"), 4000)
    ));
    // A plugin's channels (`NET/AWS Libfabric/0/GDRDMA`) by its name; GDRDMA counts every RDMA one.
    let other = match (facts.channels.net_other, facts.net_other_name.as_deref()) {
        (0, _) => String::new(),
        (k, name) => format!("  NET/{} {k}", printable(name.unwrap_or("?"), 64)),
    };
    s.push_str(&format!(
        "  channels: NET/IB {}{other} (GDRDMA {})  NET/Socket {}  P2P {}  SHM {}\n",
        facts.channels.net_ib,
        facts.channels.net_ib_gdr,
        facts.channels.net_socket,
        facts.channels.p2p,
        facts.channels.shm
    ));
    s.push_str(&format!(
        "  busbw: {}   ceiling: {}   ring bound: {}{}\n",
        f(r.busbw_gbps),
        f(r.ceiling_gbps),
        f(r.ring_ceiling_gbps),
        match (r.nvlink_ceiling_gbps, r.nccl_nvlink_model_gbps) {
            (Some(n), Some(m)) => format!("   NVLink: {n:.0} GB/s (NCCL's model without NVLS: {m:.0} GB/s)"),
            (Some(n), None) => format!("   NVLink: {n:.0} GB/s"),
            _ => String::new(),
        }
    ));
}

/// The causes, most likely first, each with its evidence and fix; then the notes.
fn causes_and_notes(s: &mut String, r: &Report) {
    if !r.findings.is_empty() {
        s.push_str("Causes, most likely first:\n");
        for (i, c) in r.findings.iter().enumerate() {
            s.push_str(&format!("  {}. [{}] {}\n", i + 1, c.id, printable(&c.cause, 4000)));
            if let Some(e) = &c.evidence {
                s.push_str(&format!("     evidence: {}\n", printable(e, 4000)));
            }
            s.push_str(&format!("     fix: {}\n", c.fix));
        }
    }
    if !r.notes.is_empty() {
        s.push_str("Notes:\n");
        for n in &r.notes {
            s.push_str(&format!("  - {}\n", printable(n, 4000)));
        }
    }
}

/// `node`: the job's node (`--root`, `--snapshot`, or this one for a live run); `None` for a
/// log read on its own, which is then judged by its own evidence only.
pub fn run(node: Option<&Node>, a: &Args) -> Result<ExitCode> {
    if a.from_log.is_empty() {
        // a run here, maybe inside a container the hook started
        super::say_hook_warnings("verify");
    }
    let env = super::job_env();
    let unknown = Node::default();
    let input = match node {
        _ if !a.from_log.is_empty() => read_files(&a.from_log)?,
        Some(n) => read_text(&benchmark(n, a, env.clone())?),
        None => bail!("nothing to judge: give --from-log FILE, or run verify on the job's node"),
    };
    let mut cfg = crate::config::load(a.config.as_deref())?;
    cfg.hca.on_empty = None;
    let master = match node {
        Some(_) => crate::cmd::env::master(a.master_addr.as_deref(), &env, Duration::from_secs(5)).ok().flatten(),
        None => None,
    };
    let n = node.unwrap_or(&unknown);
    let p = plan::decide(n, &Intent { master, config: cfg, env });
    let r = analyse(n, node.is_some(), &p, &input, a);
    // nccl-tests' header (`# Using devices`, its rank lines) is its output, even with no row
    let table =
        !input.tests.rows.is_empty() || input.tests.summaries > 0 || input.tests.ranks > 0 || input.allreduce.is_some();
    // a log that names NCCL without any of its lines is thin (judged inconclusive), not "not a log"
    let thin = !a.from_log.is_empty() && (input.facts.names_nccl.is_some() || input.facts.launcher.is_some());
    if input.facts.nccl_lines == 0 && !table && !thin {
        if a.from_log.is_empty() {
            bail!(
                "the benchmark ran but NCCL did not: its output has no NCCL line (without a GPU, torch runs the all-reduce on gloo); run verify on a GPU node"
            );
        }
        bail!(
            "{}: no NCCL log line (`NCCL INFO`/`NCCL WARN`, channel or NCCL error lines) and no nccl-tests or allreduce table: not an NCCL log (set NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET for the run)",
            a.from_log.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    let out = render(&r, &input.facts, a.json)?;
    if a.json {
        print!("{out}");
    } else {
        print!("{}", crate::text::for_stdout(&out));
    }
    Ok(ExitCode::from(r.outcome.exit_code()))
}

/// all_reduce_perf when it is on PATH and the job is one node; else examples/allreduce.py via
/// torchrun, prepared exactly as `ibwire launch` would.
/// torchrun's launch for the benchmark: what NCCL does on its own (no NCCL_NET pin, no watch).
fn launch_args(a: &Args, script: String) -> crate::cmd::launch::Args {
    crate::cmd::launch::Args {
        nnodes: None,
        node_rank: None,
        master_addr: a.master_addr.clone(),
        master_port: None,
        nproc_per_node: None,
        rdzv: None,
        torchrun_args: None,
        env: vec![],
        container: None,
        mounts: vec![],
        rw: false,
        remap_root: false,
        allow_socket_fallback: true,
        // verify observes what NCCL does on its own: no NCCL_NET pin, no watch.
        expect_net: crate::plan::netguard::ExpectNet::Socket,
        require_gdr: false,
        stop_grace: 15,
        ras_every: 0,
        dry_run: false,
        explain: false,
        config: a.config.clone(),
        bootstrap_if: None,
        script: vec![script, "--size-mb".into(), a.size_mb.to_string()],
    }
}

fn benchmark(node: &Node, a: &Args, env: std::collections::BTreeMap<String, String>) -> Result<String> {
    // Private (mkdtemp, 0700) and removed on every way out: a predictable /tmp path could be
    // planted by another user, and its script swapped before torchrun runs it.
    let dir = crate::input::Scratch::new("ibwire-verify")?;
    let script = dir.write("allreduce.py", ALLREDUCE_PY.as_bytes())?;
    let largs = launch_args(a, script.display().to_string());
    let prepared = crate::cmd::launch::prepare(node, &largs, env.clone(), None)?;
    let l = prepared.launch.map_err(|r| anyhow::anyhow!("{}; fix: {}", r.reason, r.fix))?;
    let single = !l.argv.iter().any(|x| x.starts_with("--nnodes=") && x != "--nnodes=1");
    let mut cmd = match which::which("all_reduce_perf") {
        Ok(p) if single && !node.gpus.is_empty() => {
            let mut c = Command::new(p);
            c.args([
                "-b",
                "8M",
                "-e",
                &format!("{}M", a.size_mb as u64),
                "-f",
                "4",
                "-g",
                &prepared.plan.nproc_per_node.to_string(),
            ]);
            c
        }
        _ => {
            if which::which(&l.argv[0]).is_err() && !std::path::Path::new(&l.argv[0]).exists() {
                bail!(
                    "{} not found: install PyTorch (torchrun) or nccl-tests (all_reduce_perf), or use --from-log",
                    l.argv[0]
                );
            }
            let mut c = Command::new(&l.argv[0]);
            c.args(&l.argv[1..]);
            c
        }
    };
    cmd.envs(l.env.iter().map(|(k, v)| (k, v)));
    cmd.env("NCCL_DEBUG", "INFO").env("NCCL_DEBUG_SUBSYS", "INIT,NET,ENV,BOOTSTRAP,GRAPH");
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_message(format!("running {} (NCCL_DEBUG=INFO)…", cmd.get_program().to_string_lossy()));
    pb.enable_steady_tick(Duration::from_millis(120));
    let out = crate::subprocess::run(cmd, Duration::from_secs(a.timeout));
    pb.finish_and_clear();
    drop(dir);
    let out = out?;
    let text = format!("{}\n{}", out.stdout, out.stderr);
    if let Some(p) = &a.log {
        std::fs::write(p, &text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if out.status != Some(0) {
        let tail: Vec<&str> = text.lines().rev().take(5).collect();
        eprintln!("ibwire verify: the benchmark exited with {:?}; last lines:", out.status);
        for l in tail.iter().rev() {
            eprintln!("  {}", crate::text::printable(l, 2000));
        }
    }
    Ok(text)
}
