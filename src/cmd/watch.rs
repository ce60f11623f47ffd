//! `launch`'s watch: torchrun runs as a child instead of replacing ibwire, NCCL writes its init
//! log to files in a private directory, and the first lines that show the network NCCL chose
//! are judged (`plan::netguard`). A socket fallback where InfiniBand/RoCE was expected stops
//! the job within a poll interval of NCCL's "Using network" line; missing GPUDirect RDMA is a
//! warning (an error with `--require-gdr`). Every signal Slurm or a terminal sends is forwarded
//! to torchrun, and ibwire exits with torchrun's status.

use super::say;
use crate::nccl::log;
use crate::plan::netguard::{self, Verdict};
use crate::plan::Plan;
use crate::probe::Node;
use anyhow::{Context, Result};
use nix::sys::signal::{kill, killpg, SigSet, Signal};
use nix::unistd::Pid;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the log directory is looked at until the network is known.
pub const POLL: Duration = Duration::from_millis(100);
/// Bytes of a rank's log read at most: the init lines come first.
const MAX_LOG: u64 = 4 << 20;
/// Signals forwarded to torchrun: Slurm's (SIGCONT, SIGTERM, and --signal's SIGUSR1/2) and a
/// terminal's.
const FORWARDED: [Signal; 7] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGCONT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

pub struct Watch<'a> {
    pub node: &'a Node,
    pub plan: &'a Plan,
    /// Where NCCL writes its log (kept after the job: `launch::kept_dir_path`).
    pub dir: PathBuf,
    pub nnodes: usize,
    pub expect_rdma: bool,
    pub require_gdr: bool,
    /// Report a stop verdict as a warning and let the job run.
    pub allow_fallback: bool,
    /// How long torchrun gets to stop its workers after SIGTERM before its group is killed.
    pub grace: Duration,
    /// NCCL's RAS address and how often to ask it whether the job is hung (None: never).
    pub ras: Option<(String, Duration)>,
}

/// One `VERBOSE STATUS` from NCCL's RAS at `addr` (`host:port`, numeric or localhost), in
/// `limit` at most and 1 MiB at most. The text protocol of NCCL 2.24+: `CLIENT PROTOCOL 2`,
/// `TIMEOUT 5`, `VERBOSE STATUS`, then the answer until the server closes.
pub fn ras_status(addr: &str, limit: Duration) -> Result<String> {
    use std::io::Write;
    let (host, port) = addr.rsplit_once(':').context("NCCL_RAS_ADDR has no port")?;
    let host = if host == "localhost" { "127.0.0.1" } else { host.trim_matches(['[', ']']) };
    let ip: std::net::IpAddr = host.parse().with_context(|| format!("NCCL_RAS_ADDR {addr}: not an address"))?;
    let sa = std::net::SocketAddr::new(ip, port.parse().context("NCCL_RAS_ADDR: bad port")?);
    let deadline = Instant::now() + limit;
    let mut s = std::net::TcpStream::connect_timeout(&sa, limit.min(Duration::from_secs(2)))
        .with_context(|| format!("NCCL's RAS at {sa}"))?;
    s.set_write_timeout(Some(Duration::from_secs(1)))?;
    s.write_all(b"CLIENT PROTOCOL 2\nTIMEOUT 5\nVERBOSE STATUS\n")?;
    let mut out = Vec::new();
    let mut buf = [0u8; 16 << 10];
    while Instant::now() < deadline && out.len() < 1 << 20 {
        s.set_read_timeout(Some(deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(10))))?;
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// What RAS said the last time, to tell a hang (the same ranks stopped at the same operation
/// twice in a row) from a moment's difference, and what was reported already.
#[derive(Default)]
struct RasWatch {
    last: Vec<String>,
    told: std::collections::BTreeSet<String>,
    /// The first hang said, for the verdict at the end.
    hung: Option<String>,
}

impl RasWatch {
    /// Ask RAS; a hang seen twice in a row is said once, and its answer kept beside NCCL's log.
    fn ask(&mut self, w: &Watch, host: &str) {
        let Some((addr, every)) = &w.ras else { return };
        let Ok(text) = ras_status(addr, (*every / 2).clamp(Duration::from_millis(500), Duration::from_secs(10))) else {
            return;
        };
        let now: Vec<(String, String)> = crate::nccl::ras::mismatches(&text)
            .iter()
            .map(|m| {
                let key = m.lagging().iter().map(|r| format!("{}@{}", r.rank, r.op)).collect::<Vec<_>>().join(",");
                (format!("{}:{key}", m.comm), crate::nccl::ras::describe(m))
            })
            .collect();
        for (key, what) in &now {
            if self.last.contains(key) && self.told.insert(key.clone()) {
                say(&format!("ibwire launch: {host}: the job is hung, NCCL's RAS says: {what}"));
                self.hung.get_or_insert_with(|| crate::text::clip_to(what, 160));
                let f = w.dir.join(format!("ras.{}.txt", host.split('.').next().unwrap_or(host)));
                let _ = std::fs::write(&f, &text);
                say(&format!("  RAS's answer: {} (turn this off with --ras-every 0)", f.display()));
            }
        }
        self.last = now.into_iter().map(|(k, _)| k).collect();
    }
}

/// Signals that ask the job to end: torchrun gets them, then `grace`, then SIGKILL to its
/// group (a torchrun that ignores SIGTERM must not keep the allocation).
fn ends_the_job(s: Signal) -> bool {
    matches!(s, Signal::SIGTERM | Signal::SIGINT | Signal::SIGHUP | Signal::SIGQUIT)
}

/// The variables that make NCCL write what the watch reads, unless the user set them; or why
/// the watch cannot see NCCL's network choice with the user's settings.
pub fn debug_env(dir: &Path, user: impl Fn(&str) -> Option<String>) -> Result<Vec<(String, String)>, String> {
    if let Some(f) = user("NCCL_DEBUG_FILE") {
        return Err(format!("NCCL_DEBUG_FILE={f} is set: NCCL's log goes where the watch does not look"));
    }
    let mut v = Vec::new();
    match user("NCCL_DEBUG").map(|s| s.to_ascii_uppercase()) {
        None => v.push(("NCCL_DEBUG".into(), "INFO".into())),
        Some(l) if l == "INFO" || l == "TRACE" => {}
        Some(l) => return Err(format!("NCCL_DEBUG={l} is set: NCCL does not log its network choice below INFO")),
    }
    match user("NCCL_DEBUG_SUBSYS") {
        None => v.push(("NCCL_DEBUG_SUBSYS".into(), "INIT,NET".into())),
        Some(s) => {
            let up = s.to_ascii_uppercase();
            let has = |x: &str| up.split(',').any(|p| p.trim() == x || p.trim() == "ALL");
            if up.starts_with('^') || !(has("INIT") && has("NET")) {
                return Err(format!("NCCL_DEBUG_SUBSYS={s} is set without INIT and NET"));
            }
        }
    }
    v.push(("NCCL_DEBUG_FILE".into(), format!("{}/nccl.%h.%p.log", dir.display())));
    Ok(v)
}

/// Run `cmd` (torchrun, or enroot start … torchrun) under the watch and return its status.
pub fn run(cmd: Command, w: Watch) -> Result<ExitCode> {
    let mut set = SigSet::empty();
    for s in FORWARDED {
        set.add(s);
    }
    // Blocked here before any thread exists, so every thread inherits it and only the
    // forwarder, in sigwait, takes them; the child gets a clean mask back before exec.
    set.thread_block().context("cannot block signals for forwarding")?;
    let child = spawn(cmd, set)?;
    let pid = Pid::from_raw(child.id() as i32);
    let reaped = Arc::new(AtomicBool::new(false));
    let exited = wait_in_thread(child, reaped.clone());
    let stopping = Arc::new(AtomicBool::new(false));
    forward_signals(set, pid, reaped, stopping.clone(), w.grace);
    let host = w.node.hostname.clone().unwrap_or_else(|| "this node".into());
    let mut logs: BTreeMap<PathBuf, (u64, String)> = BTreeMap::new();
    let mut decided = false;
    let started = Instant::now();
    let mut ras = RasWatch::default();
    let mut ras_due = w.ras.as_ref().map(|(_, every)| Instant::now() + *every);
    let status = loop {
        let wait = if decided { Duration::from_secs(3600) } else { POLL };
        let wait = ras_due.map_or(wait, |d| wait.min(d.saturating_duration_since(Instant::now())));
        match exited.recv_timeout(wait) {
            Ok(st) => break st.context("waiting for torchrun")?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => anyhow::bail!("waiting for torchrun: {e}"),
        }
        if let (Some(due), Some((_, every))) = (ras_due, &w.ras) {
            if Instant::now() >= due {
                ras.ask(&w, &host);
                ras_due = Some(Instant::now() + *every);
            }
        }
        let written = if decided { None } else { read_new(&w.dir, &mut logs) };
        if let Some(written) = written {
            match on_verdict(judge_logs(&w, &logs), &w, &host, started, written) {
                Seen::Pending => {}
                Seen::Decided => decided = true,
                Seen::Stop => {
                    stop(&exited, pid, w.grace);
                    return Ok(ExitCode::from(1));
                }
            }
        }
    };
    if stopping.load(Ordering::SeqCst) {
        // The job was told to end: workers that outlived torchrun go with it, none orphaned.
        let _ = killpg(pid, Signal::SIGKILL);
    }
    // One verdict at the end of every job: verify's judgement of this node's ranks' log, and
    // the hang RAS named, if any.
    say(&final_verdict(&w, &host, started, ras.hung.as_deref()));
    say(&kept_line(&w.dir));
    Ok(exit_code(status))
}

/// torchrun started in its own process group (so that stopping the job reaches its workers),
/// with the forwarded signals unblocked again and told to stop if ibwire dies.
fn spawn(mut cmd: Command, child_mask: SigSet) -> Result<std::process::Child> {
    // SAFETY: only async-signal-safe calls (sigprocmask, prctl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            child_mask.thread_unblock().map_err(std::io::Error::from)?;
            // If ibwire is killed outright (SIGKILL), torchrun is told to stop, not orphaned.
            nix::libc::prctl(nix::libc::PR_SET_PDEATHSIG, nix::libc::SIGTERM as nix::libc::c_ulong, 0, 0, 0);
            Ok(())
        });
    }
    cmd.process_group(0);
    cmd.spawn().with_context(|| format!("cannot start {:?}", cmd.get_program()))
}

/// A waiter thread, so that torchrun's exit is seen at once, not at the next poll.
fn wait_in_thread(
    mut child: std::process::Child,
    reaped: Arc<AtomicBool>,
) -> std::sync::mpsc::Receiver<std::io::Result<std::process::ExitStatus>> {
    let (tx, exited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let st = child.wait();
        reaped.store(true, Ordering::SeqCst);
        let _ = tx.send(st);
    });
    exited
}

/// The forwarder thread: every blocked signal goes on to torchrun; one that ends the job
/// starts the grace period, after which torchrun's process group is killed.
fn forward_signals(set: SigSet, pid: Pid, reaped: Arc<AtomicBool>, stopping: Arc<AtomicBool>, grace: Duration) {
    std::thread::spawn(move || {
        while let Ok(sig) = set.wait() {
            if reaped.load(Ordering::SeqCst) {
                break;
            }
            let _ = kill(pid, sig);
            if ends_the_job(sig) && !stopping.swap(true, Ordering::SeqCst) {
                let reaped = reaped.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(grace);
                    if !reaped.load(Ordering::SeqCst) {
                        say(&format!(
                            "ibwire launch: torchrun did not stop within {}s of the signal: its process group is killed",
                            grace.as_secs()
                        ));
                        let _ = killpg(pid, Signal::SIGKILL);
                    }
                });
            }
        }
    });
}

/// The verdict on the init logs read so far (every rank's of this node, as one text).
fn judge_logs(w: &Watch, logs: &BTreeMap<PathBuf, (u64, String)>) -> Verdict {
    let text: String = logs.values().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join("\n");
    let facts = log::analyse(&text);
    netguard::judge(w.node, w.plan, &facts, w.nnodes, w.expect_rdma, w.require_gdr)
}

/// What the watch does after a verdict on the init log so far.
enum Seen {
    Pending,
    Decided,
    Stop,
}

/// A verdict said on stderr: a fine or warned init ends the watching, a stop ends the job
/// (unless --allow-socket-fallback).
fn on_verdict(v: Verdict, w: &Watch, host: &str, started: Instant, written: std::time::SystemTime) -> Seen {
    let lag = written.elapsed().unwrap_or_default().as_secs_f64();
    match v {
        Verdict::Pending | Verdict::Fine { done: false, .. } => Seen::Pending,
        Verdict::Fine { what, done: true } => {
            if std::env::var_os("IBWIRE_DEBUG").is_some() {
                say(&format!("ibwire launch: {host}: {what} ({:.1}s after start)", started.elapsed().as_secs_f64()));
            }
            Seen::Decided
        }
        Verdict::Warn(m) => {
            say(&report(&format!("ibwire launch: warning: {host}: "), &m, &[]));
            Seen::Decided
        }
        Verdict::Stop(m) if w.allow_fallback => {
            say(&report(
                &format!("ibwire launch: warning: {host}: "),
                &m,
                &["running on: --allow-socket-fallback".into()],
            ));
            Seen::Decided
        }
        Verdict::Stop(m) => {
            say(&report(
                &format!("ibwire launch: error: {host}: "),
                &m,
                &[
                    format!(
                        "job stopped {:.1}s after start, {lag:.2}s after NCCL logged it",
                        started.elapsed().as_secs_f64()
                    ),
                    "fix the cause; or --allow-socket-fallback to run anyway; or --expect-net socket if sockets are intended".into(),
                ],
            ));
            say(&kept_line(&w.dir));
            Seen::Stop
        }
    }
}

/// A verdict of the watch as a terminal reads it: the headline, then one indented line each
/// for what NCCL said, each likely cause and its fix, and `more`, every line wrapped at 100
/// columns.
fn report(lead: &str, m: &netguard::Said, more: &[String]) -> String {
    let mut lines = vec![format!("{lead}{}", m.headline)];
    if !m.nccl.is_empty() {
        lines.push(format!("  NCCL: \"{}\"", m.nccl.join("\", \"")));
    }
    for (cause, fix) in &m.causes {
        lines.push(format!("  likely: {cause}"));
        lines.extend(fix.as_ref().map(|f| format!("  fix: {f}")));
    }
    lines.extend(more.iter().map(|l| format!("  {l}")));
    crate::text::fit(&lines.join("\n"), 100)
}

/// The line that names the kept log; `verify --from-log` of the job's output follows it.
pub fn kept_line(dir: &Path) -> String {
    format!("{KEPT}{}", dir.display())
}

/// The start of [`kept_line`].
pub const KEPT: &str = "ibwire launch: NCCL's log: ";

/// verify's verdict on what this node's ranks logged (files `nccl.<host>.<pid>.log` written
/// since the job started), in one line with what to run for the whole job.
fn final_verdict(w: &Watch, host: &str, started: Instant, hung: Option<&str>) -> String {
    let v = transport_verdict(w, host, started);
    match hung {
        Some(h) => {
            format!("ibwire launch: {host}: NOT OK: the job hung ({h}); {}", v.trim_start_matches("ibwire launch: "))
        }
        None => v,
    }
}

fn transport_verdict(w: &Watch, host: &str, started: Instant) -> String {
    let short = host.split('.').next().unwrap_or(host);
    let since = std::time::SystemTime::now() - started.elapsed() - Duration::from_secs(2);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&w.dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
                .filter(|e| e.metadata().and_then(|m| m.modified()).map(|m| m >= since).unwrap_or(false))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    let mine: Vec<PathBuf> = files
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&format!("nccl.{short}."))))
        .cloned()
        .collect();
    if !mine.is_empty() {
        files = mine;
    }
    files.sort();
    if files.is_empty() {
        return format!("ibwire launch: {host}: no verdict: NCCL wrote no log in {}", w.dir.display());
    }
    let read = match super::verify::read_files(&files) {
        Ok(r) => r,
        Err(e) => return format!("ibwire launch: {host}: no verdict: {e:#}"),
    };
    let ci = crate::plan::verify::CeilingInputs {
        nodes: Some(w.nnodes.max(1)),
        node_known: true,
        expect: if w.expect_rdma { crate::plan::verify::Expect::Auto } else { crate::plan::verify::Expect::Any },
        socket_flag: Some("--expect-net socket"),
        one_node: true,
        ..Default::default()
    };
    let r = crate::plan::verify::judge(w.node, w.plan, &read.facts, None, &ci);
    let verdict = crate::text::clip_to(&r.verdict, 220);
    format!("ibwire launch: {host}: verdict on this node's {} NCCL log(s): {verdict}", files.len())
}

/// SIGTERM to torchrun's group (torchrun stops its workers), SIGKILL after the grace period.
fn stop(exited: &std::sync::mpsc::Receiver<std::io::Result<std::process::ExitStatus>>, pid: Pid, grace: Duration) {
    let _ = killpg(pid, Signal::SIGTERM);
    let on_time = exited.recv_timeout(grace).is_ok();
    let _ = killpg(pid, Signal::SIGKILL); // workers that outlived torchrun, or torchrun itself
    if !on_time {
        let _ = exited.recv_timeout(Duration::from_secs(5));
    }
}

fn exit_code(st: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
        (None, Some(s)) => ExitCode::from((128 + s).clamp(0, 255) as u8),
        _ => ExitCode::from(1),
    }
}

/// Append what each rank's log gained since the last look; the newest write time when anything
/// did (how long ago NCCL wrote what is being judged).
fn read_new(dir: &Path, logs: &mut BTreeMap<PathBuf, (u64, String)>) -> Option<std::time::SystemTime> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut grew: Option<std::time::SystemTime> = None;
    for e in rd.flatten() {
        let p = e.path();
        if !e.file_type().map(|t| t.is_file()).unwrap_or(false) {
            continue;
        }
        let (off, text) = logs.entry(p.clone()).or_default();
        let Ok(meta) = e.metadata() else { continue };
        let len = meta.len();
        if len <= *off || *off >= MAX_LOG {
            continue;
        }
        let Ok(mut f) = std::fs::File::open(&p) else { continue };
        if f.seek(SeekFrom::Start(*off)).is_err() {
            continue;
        }
        let mut buf = Vec::new();
        if f.take(MAX_LOG - *off).read_to_end(&mut buf).is_err() {
            continue;
        }
        // Only whole lines: NCCL may be mid-line.
        let Some(end) = buf.iter().rposition(|b| *b == b'\n') else { continue };
        text.push_str(&String::from_utf8_lossy(&buf[..=end]));
        *off += end as u64 + 1;
        let m = meta.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH);
        grew = Some(grew.map_or(m, |g| g.max(m)));
    }
    grew
}
