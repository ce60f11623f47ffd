//! `ibwire hook`: run by enroot before every container start (hooks.d/90-ibwire.sh, a link to
//! the binary; or hooks/90-ibwire.sh, the sh form).
//!
//! It binds the right /dev/infiniband nodes when the container's /dev is restricted and appends
//! the decided NCCL settings to the container's environment. It must never break a container
//! start: on a node without RDMA it does nothing and says nothing; any error is one warning line
//! and exit 0, unless strict mode (IBWIRE_STRICT=1 or hook.strict) asked for a failure.

use super::{one_line, printable, say};
use crate::config::Config;
use crate::enroot::{environ, fstab};
use crate::plan::{self, hook, netguard, visible, Intent, Master};
use crate::probe::Node;
use crate::render;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// What the hook decided to write, and what it has to say, for tests and for IBWIRE_DEBUG.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    pub mounts: Vec<String>,
    pub environ: Vec<String>,
    /// Information: printed, never a failed start.
    pub warnings: Vec<String>,
    /// What kept the hook from doing its job: printed, and in strict mode a failed start
    /// decided before anything is written.
    pub problems: Vec<(hook::Problem, String)>,
    pub devices: Vec<String>,
    /// Nodes in the job (SLURM_JOB_NUM_NODES in the job's or the image's environment; 1 when
    /// unset): which problems break it in strict mode.
    pub nnodes: usize,
    /// Where the lines go, and what the environ file held (to see whether it ends open).
    mounts_path: PathBuf,
    environ_path: PathBuf,
    environ_bytes: Vec<u8>,
}

/// enroot's rule for its ENROOT_* flags (spec §1.4): set and non-empty is true, `0` included;
/// only n/no/f/false in their spellings are unset by enroot's configuration loader.
fn enroot_flag(v: Option<&String>) -> bool {
    match v.map(|s| s.trim()) {
        None | Some("") => false,
        Some(s) => !matches!(s, "n" | "no" | "N" | "No" | "NO" | "f" | "F" | "false" | "False" | "FALSE"),
    }
}

/// The hook's default time budget per container start (`hook.deadline_ms`).
const DEADLINE_MS: u64 = 10_000;
/// At most this much text on stderr per start (it lands in every job's log).
const MAX_STDERR: usize = 8 << 10;

/// Set by whichever comes first: the hook, once it has decided and goes on to say and write it,
/// or the deadline's handler, giving up. The other one then stands aside, so a start never gets
/// half of ibwire's lines, nor a warning that it gave up after all of them.
static DECIDED: AtomicBool = AtomicBool::new(false);

/// What the deadline's handler says and how it exits, made before it is armed: a signal handler
/// may not allocate or format.
static GAVE_UP: OnceLock<(Vec<u8>, i32)> = OnceLock::new();
/// The line once the configuration re-armed the deadline (its own value and strictness); the
/// handler takes it over GAVE_UP when set. Each is set once, before the timer that reads it.
static GAVE_UP_CONFIGURED: OnceLock<(Vec<u8>, i32)> = OnceLock::new();

/// After the deadline's signal, this long for a hook that cannot take it (a wait only a fatal
/// signal ends, on an NFS home's config file, say) before the kernel kills the process. enroot
/// then fails the start, naming the hook and its status (137): better than a start that hangs.
/// The sh form of the hook (hooks/90-ibwire.sh) says so and lets the container start instead
/// (fails it in strict mode).
const KILL_GRACE_MS: u64 = 1_000;

/// The one line said when the deadline passed; nothing is written.
fn gave_up_line(ms: u64, strict: bool) -> String {
    let what = if strict {
        "error: strict mode: the container does not start"
    } else {
        "warning: the container starts without ibwire's settings"
    };
    format!("ibwire-hook: {what} (gave up after hook.deadline_ms = {ms} ms)")
}

fn gave_up(ms: u64, strict: bool) -> u8 {
    say(&gave_up_line(ms, strict));
    u8::from(strict)
}

/// SIGALRM: past the deadline, unless the hook has decided: one line, and exit 0 (1 in strict
/// mode) with nothing written. Only async-signal-safe calls (write, _exit).
extern "C" fn on_deadline(_: nix::libc::c_int) {
    // The line first: taking DECIDED without it would leave the hook parked for nothing.
    let Some((line, code)) = GAVE_UP_CONFIGURED.get().or_else(|| GAVE_UP.get()) else { return };
    if DECIDED.swap(true, Ordering::SeqCst) {
        return;
    }
    // SAFETY: write(2) and _exit(2) are async-signal-safe; `line` lives for the process.
    unsafe {
        nix::libc::write(2, line.as_ptr().cast(), line.len());
        nix::libc::_exit(*code);
    }
}

/// How a crash ends the hook: 1 in strict mode, else 0. The environment's IBWIRE_STRICT until
/// the configuration is read, then the decision `run` takes.
static CRASH_STRICT: AtomicBool = AtomicBool::new(false);

/// The signals a crash raises: an abort (a failed allocation, a panic while panicking), a stack
/// overflow or a bad access (SIGSEGV, SIGBUS), an intrinsic abort (SIGILL: `ud2`), a system
/// call a seccomp filter traps (SIGSYS), a file-size limit on enroot's files (SIGXFSZ). Rust
/// code raises no SIGFPE (division is checked) nor SIGTRAP.
const CRASH_SIGNALS: [nix::libc::c_int; 6] = [
    nix::libc::SIGABRT,
    nix::libc::SIGSEGV,
    nix::libc::SIGBUS,
    nix::libc::SIGILL,
    nix::libc::SIGSYS,
    nix::libc::SIGXFSZ,
];

/// A crash: one line, and exit 0 (1 in strict mode), as for a panic. What hooks/90-ibwire.sh
/// did for a binary killed by a signal, now that enroot runs the binary itself (a link in
/// hooks.d). Only async-signal-safe calls (write, _exit), on the alternate stack std sets up for
/// the main thread, so a stack overflow gets its line too. SIGKILL cannot be caught: the
/// deadline's last resort and the OOM killer fail the start (enroot names the hook and its
/// status, 137); the sh form of the hook lets the container start even then.
extern "C" fn on_crash(sig: nix::libc::c_int) {
    let strict = CRASH_STRICT.load(Ordering::SeqCst);
    let mut buf = [0u8; 160];
    let mut n = 0;
    let mut put = |b: &[u8]| {
        let k = b.len().min(buf.len() - n);
        buf[n..n + k].copy_from_slice(&b[..k]);
        n += k;
    };
    put(if strict {
        b"ibwire-hook: error: ibwire crashed (signal "
    } else {
        b"ibwire-hook: warning: ibwire crashed (signal "
    });
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    let mut v = sig.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    put(&digits[i..]);
    let name: &[u8] = match sig {
        nix::libc::SIGABRT => b", SIGABRT",
        nix::libc::SIGSEGV => b", SIGSEGV",
        nix::libc::SIGBUS => b", SIGBUS",
        nix::libc::SIGILL => b", SIGILL",
        nix::libc::SIGSYS => b", SIGSYS",
        nix::libc::SIGXFSZ => b", SIGXFSZ",
        _ => b"",
    };
    put(name);
    put(if strict {
        b"); strict mode: the container does not start\n"
    } else {
        b"); the container starts without ibwire's settings\n"
    });
    // SAFETY: write(2) and _exit(2) are async-signal-safe; `buf` is this frame's.
    unsafe {
        nix::libc::write(2, buf.as_ptr().cast(), n);
        nix::libc::_exit(i32::from(strict));
    }
}

/// Catch the crash signals for the rest of the process (`on_crash`). `strict`: the environment's
/// IBWIRE_STRICT; `run` updates it once the configuration is read.
pub fn guard_crashes(strict: bool) {
    use nix::libc;
    CRASH_STRICT.store(strict, Ordering::SeqCst);
    // SAFETY: sigaction on a zero-initialised struct; the handler is async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_crash as *const () as libc::sighandler_t;
        // On the alternate stack (a stack overflow has none left); a crash inside the handler
        // gets the default action.
        sa.sa_flags = libc::SA_ONSTACK | libc::SA_RESETHAND;
        libc::sigfillset(&mut sa.sa_mask);
        for sig in CRASH_SIGNALS {
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The kernel's own timer that ends the process `KILL_GRACE_MS` after the deadline.
struct KillTimer(nix::libc::timer_t);

/// Past `ms`, unless the hook has decided: `on_deadline`. enroot runs hooks without a timeout:
/// a hook that hangs holds the start forever. Two timers, no thread: SIGALRM at the deadline
/// (interrupts a blocked read; its handler gives up), and SIGKILL `KILL_GRACE_MS` later for a
/// wait that only a fatal signal ends. A watchdog thread did this until it was measured: 0.2 ms
/// of CPU at every container start (clone, its stack and its allocator arena), 7 % of the hook
/// live on the story node. The main thread checks the same deadline when it has decided, so the
/// outcome does not depend on when the signal lands.
fn arm_deadline(ms: u64, strict: bool) -> Option<KillTimer> {
    arm_deadline_with_line(ms, ms, strict)
}

/// As `arm_deadline`, firing after `ms` with the line of a `said_ms` deadline (re-armed after
/// the configuration is read, for what is left of it).
fn arm_deadline_with_line(ms: u64, said_ms: u64, strict: bool) -> Option<KillTimer> {
    use nix::libc;
    let mut line = gave_up_line(said_ms, strict);
    line.push('\n');
    let said = (crate::text::for_terminal(&line).into_owned().into_bytes(), i32::from(strict));
    if GAVE_UP.get().is_none() {
        let _ = GAVE_UP.set(said);
    } else {
        let _ = GAVE_UP_CONFIGURED.set(said);
    }
    let at = |ms: u64| {
        // A deadline of 0 still arms (setitimer takes 0 as "disarm"); past a day is a day.
        let ms = ms.clamp(1, 86_400_000);
        // `as _`: time_t's width differs between libcs (musl's is 64-bit on every target).
        libc::timespec { tv_sec: (ms / 1000) as _, tv_nsec: ((ms % 1000) * 1_000_000) as _ }
    };
    // SAFETY: plain system calls on zero-initialised C structs; the handler is async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_deadline as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigfillset(&mut sa.sa_mask);
        if libc::sigaction(libc::SIGALRM, &sa, std::ptr::null_mut()) != 0 {
            return None;
        }
        // A mask inherited from whoever started the hook must not hold the signal back.
        let mut alrm: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut alrm);
        libc::sigaddset(&mut alrm, libc::SIGALRM);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &alrm, std::ptr::null_mut());
        let t = at(ms);
        let it = libc::itimerval {
            it_interval: libc::timeval { tv_sec: 0, tv_usec: 0 },
            it_value: libc::timeval { tv_sec: t.tv_sec, tv_usec: (t.tv_nsec / 1000) as _ },
        };
        libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut());
        let mut ev: libc::sigevent = std::mem::zeroed();
        ev.sigev_notify = libc::SIGEV_SIGNAL;
        ev.sigev_signo = libc::SIGKILL;
        let mut id: libc::timer_t = std::mem::zeroed();
        if libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, &mut id) != 0 {
            return None;
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: at(ms.saturating_add(KILL_GRACE_MS)),
        };
        libc::timer_settime(id, 0, &spec, std::ptr::null_mut());
        Some(KillTimer(id))
    }
}

impl KillTimer {
    /// Decided: from here the hook writes, and a wait in a write is enroot's to see (a start
    /// never gets half of ibwire's lines).
    fn disarm(self) {
        // SAFETY: `self.0` came from timer_create and is deleted once.
        unsafe { nix::libc::timer_delete(self.0) };
    }
}

/// Tests only (debug builds): stand for a HOME that stops answering while the configuration is
/// read (`IBWIRE_TEST_STALL_CONFIG=MS`).
#[cfg(debug_assertions)]
fn test_stall_config(env: &BTreeMap<String, String>) {
    if let Some(ms) = env.get("IBWIRE_TEST_STALL_CONFIG").and_then(|v| v.parse::<u64>().ok()) {
        let end = std::time::Instant::now() + Duration::from_millis(ms);
        while std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Debug builds only (the tests'): `IBWIRE_TEST_STALL=MS` makes the hook hang MS ms before it
/// reads the node, as a sysfs read stuck in a driver would; `MS,deaf` also blocks SIGALRM, as a
/// wait that only a fatal signal ends would. Release builds do not read it.
#[cfg(debug_assertions)]
fn test_stall(env: &BTreeMap<String, String>) {
    let Some(v) = env.get("IBWIRE_TEST_STALL") else { return };
    let (ms, deaf) = v.split_once(',').map_or((v.as_str(), false), |(m, d)| (m, d == "deaf"));
    if deaf {
        let mut set = nix::sys::signal::SigSet::empty();
        set.add(nix::sys::signal::Signal::SIGALRM);
        let _ = set.thread_block();
    }
    // A sleep the signal interrupts (SA_RESTART does not restart nanosleep), in a loop as a
    // stuck read would be.
    let end = std::time::Instant::now() + Duration::from_millis(ms.parse().unwrap_or(0));
    while std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Debug builds only (the tests'): `IBWIRE_TEST_CRASH=abort|overflow|segv` crashes the hook
/// before it reads the node: std's abort, a real stack overflow, a SIGSEGV raised.
#[cfg(debug_assertions)]
fn test_crash(env: &BTreeMap<String, String>) {
    #[inline(never)]
    #[allow(unconditional_recursion)]
    fn deeper(n: u64) -> u64 {
        let pad = std::hint::black_box([n; 64]);
        deeper(n + 1) + pad[(n % 64) as usize]
    }
    match env.get("IBWIRE_TEST_CRASH").map(String::as_str) {
        Some("abort") => std::process::abort(),
        Some("overflow") => {
            std::hint::black_box(deeper(0));
        }
        // SAFETY: raise(3) sends this process a signal; the crash handler ends it.
        Some("segv") => unsafe {
            nix::libc::raise(nix::libc::SIGSEGV);
        },
        _ => {}
    }
}

/// This process's peak resident memory (VmHWM), for the debug output.
fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse().ok()
}

/// stderr lines within `MAX_STDERR` in all, then one line saying how many were left out.
struct Said {
    bytes: usize,
    left_out: usize,
}

impl Said {
    fn say(&mut self, line: &str) {
        if self.bytes + line.len() > MAX_STDERR {
            self.left_out += 1;
            return;
        }
        self.bytes += line.len() + 1;
        say(line);
    }

    fn finish(&self) {
        if self.left_out > 0 {
            say(&format!(
                "ibwire-hook: {} more line(s) not shown ({} KiB of messages at most per start)",
                self.left_out,
                MAX_STDERR >> 10
            ));
        }
    }
}

pub fn run(env: &BTreeMap<String, String>, src: &super::NodeSource) -> ExitCode {
    let root = src.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    // The deadline is armed before the first file a user controls is opened: a HOME on a file
    // system that stops answering (NFS, FUSE) must not hang the start in
    // open(~/.config/ibwire.yaml) (hostile round 4 #2). The default first; the configuration's
    // own deadline and strictness, once read, re-arm it from the same start.
    let started = std::time::Instant::now();
    let strict_env = crate::config::truthy(env.get("IBWIRE_STRICT").map(String::as_str));
    let mut kill_timer = arm_deadline(DEADLINE_MS, strict_env);
    #[cfg(debug_assertions)]
    test_stall_config(env);
    let (cfg, admin_err, cfg_warnings) = crate::config::load_hook();
    let said_before: Vec<String> = admin_err
        .iter()
        .map(|e| format!("{}; the defaults stand in for it", one_line(&format!("{e:#}"))))
        .chain(cfg_warnings.iter().cloned())
        .collect();
    let strict = strict_env || cfg.hook.strict.unwrap_or(false);
    CRASH_STRICT.store(strict, Ordering::SeqCst);
    let deadline_ms = cfg.hook.deadline_ms.unwrap_or(DEADLINE_MS);
    if deadline_ms != DEADLINE_MS || strict != strict_env {
        if let Some(t) = kill_timer.take() {
            t.disarm();
        }
        let left = deadline_ms.saturating_sub(started.elapsed().as_millis() as u64);
        kill_timer = arm_deadline_with_line(left, deadline_ms, strict);
    }
    let debug = crate::config::truthy(env.get("IBWIRE_DEBUG").map(String::as_str));
    let mut o = decide_guarded(env, src, &cfg, &root, &said_before);
    if let Some(e) = admin_err {
        o.problems.insert(
            0,
            (hook::Problem::Config, format!("{}; the defaults stand in for it", one_line(&format!("{e:#}")))),
        );
    }
    o.warnings.splice(0..0, cfg_warnings);
    // Decided: from here the deadline's handler stands aside, and a deadline already past is
    // honoured here — all of the lines are written, or none.
    if DECIDED.swap(true, Ordering::SeqCst) {
        // The deadline's handler has taken it (it runs on whichever thread the signal lands on:
        // the hook has one, but a handler is process-wide): it says so and ends the process.
        loop {
            std::thread::park();
        }
    }
    if let Some(t) = kill_timer {
        t.disarm();
    }
    if started.elapsed() >= Duration::from_millis(deadline_ms) {
        return ExitCode::from(gave_up(deadline_ms, strict));
    }
    if let Some(code) = report(&o, env, strict, debug) {
        return code;
    }
    write_saying(&o, strict)
}

/// The outcome written into enroot's files; a failure to write is said, and fails the start in
/// strict mode only.
fn write_saying(o: &Outcome, strict: bool) -> ExitCode {
    if let Err(e) = write(o) {
        let m = one_line(&format!("{e:#}"));
        if strict {
            say(&format!("ibwire-hook: error: {}", printable(&m, 2000)));
            return ExitCode::from(1);
        }
        say(&format!("ibwire-hook: warning: {}", printable(&m, 2000)));
    }
    ExitCode::SUCCESS
}

/// The decision, a panic or an error in it turned into an internal problem: the container
/// starts without ibwire's settings, never fails for ibwire's own fault.
fn decide_guarded(
    env: &BTreeMap<String, String>,
    src: &super::NodeSource,
    cfg: &Config,
    root: &Path,
    said_before: &[String],
) -> Outcome {
    let res = std::panic::catch_unwind(|| -> Result<Outcome> {
        #[cfg(debug_assertions)]
        test_stall(env);
        #[cfg(debug_assertions)]
        test_crash(env);
        // umad/issm owners are one link per RDMA function: read only when they are used.
        let mad = cfg.hook.hide_sysfs.unwrap_or(false) || (cfg.hook.mad.unwrap_or(false) && real_root(env));
        let node = src.load_with_mad(mad)?;
        let out = decide_saying(&node, env, cfg, root, said_before);
        // The process ends next: freeing a 512-function node one string at a time cost a
        // twentieth of the hook's instructions there.
        std::mem::forget(node);
        out
    });
    match res {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            Outcome { problems: vec![(hook::Problem::Internal, one_line(&format!("{e:#}")))], ..Default::default() }
        }
        Err(_) => Outcome {
            problems: vec![(
                hook::Problem::Internal,
                "internal error (panic); the container starts without ibwire's settings".into(),
            )],
            ..Default::default()
        },
    }
}

/// What the hook says on stderr; in strict mode, a problem that breaks this job's shape ends
/// the start (its exit code), decided before anything is written, each problem said once.
fn report(o: &Outcome, env: &BTreeMap<String, String>, strict: bool, debug: bool) -> Option<ExitCode> {
    let mut said = Said { bytes: 0, left_out: 0 };
    // Strict: decided before anything is written, each problem reported once. Only what
    // breaks this job's shape fails its start (a one-node job needs no verbs, no HCA).
    // An outcome that never got that far (a crash, an unreadable config): the job's own count.
    let nnodes = if o.nnodes > 0 { o.nnodes } else { crate::slurm::num_nodes(|k| env.get(k).cloned()) };
    if strict && o.problems.iter().any(|(k, _)| k.breaks(nnodes)) {
        for (k, p) in &o.problems {
            let level = if k.breaks(nnodes) { "error" } else { "warning" };
            said.say(&format!("ibwire-hook: {level}: {}", printable(p, 2000)));
        }
        said.finish();
        say("ibwire-hook: error: strict mode (IBWIRE_STRICT or hook.strict): the container does not start");
        return Some(ExitCode::from(1));
    }
    for w in o.problems.iter().map(|(_, p)| p).chain(&o.warnings) {
        said.say(&format!("ibwire-hook: warning: {}", printable(w, 2000)));
    }
    if debug {
        said.say(&format!(
            "ibwire-hook: environ: {} bytes, {} look-ups by scan; peak memory {} KiB",
            o.environ_bytes.len(),
            environ::scans(),
            peak_rss_kib().map_or("?".into(), |k| k.to_string())
        ));
        said.say(&format!("ibwire-hook: devices: {}", printable(&o.devices.join(","), 2000)));
        for l in o.mounts.iter().chain(&o.environ) {
            said.say(&format!("ibwire-hook: + {}", printable(l, 2000)));
        }
    }
    said.finish();
    None
}

/// Append what was decided to enroot's files.
/// The hook's lines, each file written whole or not at all: a write cut short (a full disk, the
/// job's `ulimit -f`) is taken back, and when the second file fails the first is taken back too,
/// so a start never gets the device binds without the settings or half a line (hostile round 4
/// #3). The settings go first: without them the binds are harmless.
fn write(o: &Outcome) -> Result<()> {
    if o.mounts.is_empty() && o.environ.is_empty() {
        return Ok(());
    }
    // A size limit then fails the write (EFBIG), which is taken back, instead of killing the
    // hook between two writes (SIGXFSZ).
    // SAFETY: setting a signal's disposition to ignore; no handler runs.
    unsafe {
        let _ = nix::sys::signal::signal(nix::sys::signal::Signal::SIGXFSZ, nix::sys::signal::SigHandler::SigIgn);
    }
    let environ_len = append(&o.environ_path, &o.environ, Some(&o.environ_bytes))?;
    if let Err(e) = append(&o.mounts_path, &o.mounts, None) {
        if let Some(len) = environ_len {
            let _ = std::fs::OpenOptions::new().write(true).open(&o.environ_path).and_then(|f| f.set_len(len));
        }
        return Err(anyhow::anyhow!(
            "{}; {} taken back: the start goes on without ibwire's lines",
            one_line(&format!("{e:#}")),
            o.environ_path.display()
        ));
    }
    Ok(())
}

/// A variable from the hook's environment, else its last value in the container's environ
/// file (the stock hook's precedence for MELLANOX_*).
fn lookup(env: &BTreeMap<String, String>, file: &environ::Environ, k: &str) -> Option<String> {
    env.get(k).cloned().or_else(|| file.get(k).map(str::to_string))
}

/// Is the container's /dev its own (restricted by 10-devices.sh), or the host's?
fn dev_restricted(env: &BTreeMap<String, String>, rootfs: Option<&Path>, root: &Path) -> bool {
    if enroot_flag(env.get("ENROOT_RESTRICT_DEV")) || enroot_flag(env.get("ENROOT_UNSHARE_IPC")) {
        return true;
    }
    match (rootfs.map(|r| std::fs::metadata(r.join("dev"))), std::fs::metadata(root.join("dev"))) {
        (Some(Ok(a)), Ok(b)) => a.dev() != b.dev(),
        _ => false,
    }
}

/// The master address as launch and env find it (Slurm's first node, else MASTER_ADDR), from the
/// hook's environment over the container's environ file; any failure falls back to the default
/// route with a warning. The deadline is short: this is every container start.
fn master(env: &BTreeMap<String, String>, file: &environ::Environ, warnings: &mut Vec<String>) -> Option<Master> {
    // Only what names the master (Slurm's node list, MASTER_ADDR), not the whole image's
    // environment: that can be 4 MiB.
    let mut merged: BTreeMap<String, String> = file
        .indexed()
        .filter(|(k, _)| k.starts_with("SLURM_") || *k == "MASTER_ADDR")
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    merged.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    match super::env::master(None, &merged, Duration::from_secs(2)) {
        Ok(m) => m,
        Err(e) => {
            warnings.push(format!("{e:#}; bootstrap interface from the default route"));
            None
        }
    }
}

pub fn decide(node: &Node, env: &BTreeMap<String, String>, cfg: &Config, root: &Path) -> Result<Outcome> {
    decide_saying(node, env, cfg, root, &[])
}

/// As `decide`, with what the hook has to say from before the node was read (the
/// configuration's warnings) at the front of IBWIRE_HOOK_WARNINGS: a pyxis user sees none of the
/// hook's stderr on a start that succeeds, and a broken `IBWIRE_CONFIG` loses their own
/// settings (hostile round 4).
pub fn decide_saying(
    node: &Node,
    env: &BTreeMap<String, String>,
    cfg: &Config,
    root: &Path,
    said_before: &[String],
) -> Result<Outcome> {
    let mut out = Outcome::default();
    if node.rdma.is_empty() && said_before.is_empty() {
        return Ok(out);
    }
    let (mounts_path, environ_path, rootfs, environ_bytes) = hook_files(env)?;
    if node.rdma.is_empty() {
        return no_rdma(out, env, said_before, mounts_path, environ_path, environ_bytes);
    }
    let environ_text = String::from_utf8_lossy(&environ_bytes);
    let file_env = environ::parse(&environ_text);

    let mut boot_warnings = Vec::new();
    let intent = Intent { master: master(env, &file_env, &mut boot_warnings), config: cfg.clone(), env: env.clone() };
    out.problems.extend(boot_warnings.into_iter().map(|w| (hook::Problem::Bootstrap, w)));
    let p = plan::decide(node, &intent);
    // What the plan could not decide (a configured interface that does not exist, no route to
    // the master) is the hook not doing its job: a warning, and a failure in strict mode.
    for f in p.findings.iter().filter(|f| f.severity == plan::Severity::Error) {
        out.problems.push((hook::Problem::Bootstrap, f.headline()));
    }
    let healthy: Vec<String> = p.hcas.iter().map(|(d, _)| d.clone()).collect();
    let (var, value, mellanox) = hook::visibility(|k| lookup(env, &file_env, k), cfg.hook.visible_devices.as_deref());
    let sel = visible::select(node, var, &value, mellanox, &healthy);
    let restricted = dev_restricted(env, rootfs.as_deref(), root);
    let mad = cfg.hook.mad.unwrap_or(false) && real_root(env);
    let mut d = hook::decide(node, &p, &sel, restricted, mad, |k| env.contains_key(k) || file_env.contains_key(k));
    let var = |k: &str| lookup(env, &file_env, k);
    // The job's own NCCL_IB_HCA is kept (the user set it), but if it lets NCCL take a port
    // ibwire excluded, say which and what it will do.
    if let Some(why) = var("NCCL_IB_HCA").and_then(|v| hook::job_hca_problem(node, &p, &v)) {
        d.problems.push((hook::Problem::JobHcaExcluded, why));
    }
    let exposure = hook::exposure(&p, &sel, restricted, &value);
    // An image that cannot use verbs cannot use the HCAs it is given (looked up inside the
    // image, bounded, as the plugin look-up).
    let image = rootfs.as_deref().map(crate::probe::sysroot::SysRoot::new);
    let lacks = |r: &crate::probe::sysroot::SysRoot| image_lacks_verbs(node, &p, r, file_env.get("LD_LIBRARY_PATH"));
    if let Some(why) = image.as_ref().filter(|_| exposure == netguard::Exposure::Usable).and_then(lacks) {
        d.problems.push((hook::Problem::ImageNoVerbs, why));
    }
    let pin = pin_nccl_net(&p, exposure, env, &file_env, cfg, image.as_ref());
    pin_net(&mut d, pin, exposure, env, || {
        format!("{}={value}: a {}-node job with no healthy HCA exposed; NCCL_NET=IB makes NCCL fail at init instead of running on TCP sockets (set {}=none to run on sockets on purpose)", sel.var, crate::slurm::num_nodes(var), sel.var)
    });
    out.nnodes = crate::slurm::num_nodes(var);
    emit(&mut out, d, env, cfg, node, &sel.devices, &mounts_path, root, said_before)?;
    out.mounts_path = mounts_path;
    out.environ_path = environ_path;
    out.environ_bytes = environ_bytes;
    Ok(out)
}

/// enroot's files for this container: ENROOT_MOUNTS, ENROOT_ENVIRON (its bytes, read once and
/// bounded: a non-UTF-8 byte in the image's environment must not cost the settings, which would
/// be the silent socket fallback again) and the rootfs.
fn hook_files(env: &BTreeMap<String, String>) -> Result<(PathBuf, PathBuf, Option<PathBuf>, Vec<u8>)> {
    let mounts_path =
        env.get("ENROOT_MOUNTS").map(PathBuf::from).context("ENROOT_MOUNTS is not set (not run by enroot?)")?;
    let environ_path =
        env.get("ENROOT_ENVIRON").map(PathBuf::from).context("ENROOT_ENVIRON is not set (not run by enroot?)")?;
    let rootfs = env.get("ENROOT_ROOTFS").map(PathBuf::from);
    let environ_bytes = match crate::input::read_bytes(&environ_path, crate::input::MAX_INPUT) {
        Ok(b) => b,
        Err(e) if crate::input::is_absent(&e) => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", environ_path.display())),
    };
    Ok((mounts_path, environ_path, rootfs, environ_bytes))
}

/// Nothing to expose or decide on a node without RDMA devices; but a configuration that could
/// not be read (the admin's, or the user's IBWIRE_CONFIG: their settings lost) is said where a
/// pyxis user looks, as on any node (found under real pyxis 0.24).
fn no_rdma(
    mut out: Outcome,
    env: &BTreeMap<String, String>,
    said_before: &[String],
    mounts_path: PathBuf,
    environ_path: PathBuf,
    environ_bytes: Vec<u8>,
) -> Result<Outcome> {
    if !env.contains_key("IBWIRE_HOOK_WARNINGS") {
        let l = render::environ_line("IBWIRE_HOOK_WARNINGS", &warnings_value(said_before))?;
        out.environ.push(l);
    }
    out.mounts_path = mounts_path;
    out.environ_path = environ_path;
    out.environ_bytes = environ_bytes;
    Ok(out)
}

/// The socket-fallback guard applied: NCCL_NET=IB where `pin_nccl_net` decided it; with every
/// healthy HCA hidden from the container, the problem `emptied` says.
fn pin_net(
    d: &mut hook::Decision,
    pin: Option<String>,
    exposure: netguard::Exposure,
    env: &BTreeMap<String, String>,
    emptied: impl FnOnce() -> String,
) {
    if let Some(why) = pin {
        d.env.push(("NCCL_NET".into(), "IB".into()));
        if exposure == netguard::Exposure::Emptied {
            // NCCL then fails at init with "Failed to initialize any NET plugin" (what `ibwire
            // verify` explains) instead of crawling on TCP sockets without a word.
            d.problems.push((hook::Problem::SelectionEmpty, emptied()));
        }
        if crate::config::truthy(env.get("IBWIRE_DEBUG").map(String::as_str)) {
            say(&format!("ibwire-hook: NCCL_NET=IB: {}", printable(&why, 2000)));
        }
    }
}

/// The decision written as the hook's outcome: devices, binds, the sysfs mask, and the
/// environment lines (with what the hook has to say).
#[allow(clippy::too_many_arguments)]
fn emit(
    out: &mut Outcome,
    d: hook::Decision,
    env: &BTreeMap<String, String>,
    cfg: &Config,
    node: &Node,
    devices: &[String],
    out_mounts: &Path,
    root: &Path,
    said_before: &[String],
) -> Result<()> {
    out.devices = d.devices;
    out.warnings.extend(d.warnings);
    out.problems.extend(d.problems);
    for b in &d.binds {
        out.mounts.push(fstab::device_bind(b)?);
    }
    if cfg.hook.hide_sysfs.unwrap_or(false) {
        let runtime = env
            .get("ENROOT_RUNTIME_PATH")
            .map(PathBuf::from)
            .or_else(|| out_mounts.parent().map(Path::to_path_buf))
            .context("no ENROOT_RUNTIME_PATH for the sysfs mask")?;
        out.mounts.extend(sysfs_mask(node, devices, &runtime.join("ibwire-sysfs"), root)?);
    }
    // What the hook has to say reaches a pyxis user too, whose start succeeded and whose hook
    // stderr pyxis drops: one variable in the container's environment (`ibwire doctor` inside
    // prints it), never a file in the image, never the job's stdout.
    let mut env_out = d.env;
    let said_all: Vec<String> = said_before
        .iter()
        .cloned()
        .chain(out.problems.iter().map(|(_, p)| p.clone()))
        .chain(out.warnings.iter().cloned())
        .collect();
    if !said_all.is_empty() && !env.contains_key("IBWIRE_HOOK_WARNINGS") {
        env_out.push(("IBWIRE_HOOK_WARNINGS".into(), warnings_value(&said_all)));
    }
    for (k, v) in &env_out {
        match render::environ_line(k, v) {
            Ok(l) => out.environ.push(l),
            Err(e) => out.warnings.push(format!("{e:#}")),
        }
    }
    Ok(())
}

/// IBWIRE_HOOK_WARNINGS' value: the lines joined by ` | `, at most 4000 bytes, no controls.
fn warnings_value(said: &[String]) -> String {
    let mut joined = said.iter().map(|w| one_line(w)).collect::<Vec<_>>().join(" | ");
    if joined.len() > 4000 {
        let mut cut = 4000;
        while !joined.is_char_boundary(cut) {
            cut -= 1;
        }
        joined.truncate(cut);
        joined.push('…');
    }
    joined.chars().filter(|c| !c.is_control()).collect()
}

/// Why the image cannot use verbs, if it cannot: no `libibverbs.so.1` in its library
/// directories, or no provider for the exposed HCAs' driver in `libibverbs/`. Looked up inside
/// the image (`SysRoot`: symlinks resolved within it), a bounded number of directories.
fn image_lacks_verbs(
    node: &Node,
    p: &plan::Plan,
    rootfs: &crate::probe::sysroot::SysRoot,
    ld_library_path: Option<&str>,
) -> Option<String> {
    use crate::probe::host::{find_lib, lib_dirs};
    let dirs = lib_dirs(ld_library_path);
    if find_lib(rootfs, &dirs, &["libibverbs.so.1".into()]).is_none() {
        return Some(
            "the image has no libibverbs.so.1: NCCL cannot use InfiniBand/RoCE in it and will use TCP sockets; install rdma-core in the image (libibverbs1 ibverbs-providers)".into(),
        );
    }
    let providers: std::collections::BTreeSet<&str> =
        p.hcas.iter().filter_map(|(d, _)| node.rdma_device(d)).filter_map(|d| hook::verbs_provider(&d.name)).collect();
    for prov in providers {
        let names = [
            format!("libibverbs/lib{prov}-rdmav34.so"),
            format!("libibverbs/lib{prov}-rdmav25.so"),
            format!("lib{prov}.so.1"),
        ];
        if find_lib(rootfs, &dirs, &names).is_none() {
            return Some(format!(
                "the image has libibverbs but no verbs provider for {prov} (lib{prov}-rdmav34.so): NCCL will find no device and use TCP sockets; install rdma-core's providers (ibverbs-providers) in the image"
            ));
        }
    }
    None
}

/// NCCL_NET=IB for a multi-node job with healthy HCAs exposed and no net plugin in the image
/// (pyxis starts containers with only the hook in the loop: this is what turns a socket
/// fallback there into a failed NCCL init). The image's plugin is looked for by lstat in its
/// library directories (LD_LIBRARY_PATH from the image's environment, then the usual ones).
fn pin_nccl_net(
    p: &plan::Plan,
    exposure: netguard::Exposure,
    env: &BTreeMap<String, String>,
    file_env: &environ::Environ,
    cfg: &Config,
    rootfs: Option<&crate::probe::sysroot::SysRoot>,
) -> Option<String> {
    let var = |k: &str| lookup(env, file_env, k);
    let plugin = rootfs.and_then(|r| {
        crate::probe::host::find_net_plugin_in(r, file_env.get("LD_LIBRARY_PATH"), var("NCCL_NET_PLUGIN").as_deref())
    });
    netguard::pin_for_job(p, exposure, cfg, var, plugin.as_deref()).ok()
}

/// umad/issm nodes only for real root, as the stock hook: the uid map's outside uid is 0.
fn real_root(env: &BTreeMap<String, String>) -> bool {
    enroot_flag(env.get("ENROOT_ALLOW_SUPERUSER"))
        && std::fs::read_to_string("/proc/self/uid_map")
            .map(|m| m.split_whitespace().nth(1) == Some("0"))
            .unwrap_or(false)
}

/// A directory per sysfs class holding only the selected devices' links, bound over
/// /sys/class/infiniband* so NCCL cannot even see the others (the stock hook's masking, done
/// with binds of prepared directories instead of immediate mounts).
fn sysfs_mask(node: &Node, selected: &[String], dir: &Path, root: &Path) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    // A `--root` tree is read as the probe reads it (hostile round 4 #6): its class directories
    // resolved inside the tree, no link followed out of it, only regular files copied, without
    // blocking (a FIFO in the tree would stall the start to its deadline).
    let tree = (root != Path::new("/")).then(|| crate::probe::sysroot::SysRoot::new(root));
    for class in ["infiniband", "infiniband_verbs", "infiniband_mad"] {
        let rel = Path::new("sys/class").join(class);
        let host = match &tree {
            Some(t) => match t.resolve(&rel) {
                Some(r) => root.join(r),
                None => continue,
            },
            None => root.join(&rel),
        };
        if !std::fs::symlink_metadata(&host).map(|m| m.is_dir()).unwrap_or(false) {
            continue;
        }
        let d = dir.join(class);
        std::fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
        for ent in std::fs::read_dir(&host).with_context(|| format!("cannot list {}", host.display()))?.flatten() {
            let name = ent.file_name().to_string_lossy().into_owned();
            let keep = if name == "abi_version" {
                true
            } else {
                let owner = match class {
                    "infiniband" => Some(name.clone()),
                    _ => node
                        .rdma
                        .iter()
                        .find(|x| x.uverbs.as_deref() == Some(&name) || x.mad.contains(&name))
                        .map(|x| x.name.clone()),
                };
                owner.map(|o| selected.contains(&o)).unwrap_or(false)
            };
            if !keep {
                continue;
            }
            let link = std::fs::read_link(ent.path()).ok();
            let at = d.join(&name);
            let _ = std::fs::remove_file(&at);
            match link {
                // Relative class links point to ../../devices/…; from the mask they must be absolute.
                Some(t) => {
                    let abs = Path::new("/sys/class").join(class).join(t);
                    std::os::unix::fs::symlink(normalize(&abs), &at)
                }
                // `abi_version`: a small regular file, read without blocking and bounded; any
                // other kind of entry is left out of the mask.
                None => match crate::input::read_bytes(&ent.path(), 4096) {
                    Ok(b) => std::fs::write(&at, b),
                    Err(_) => continue,
                },
            }
            .with_context(|| format!("cannot prepare {}", at.display()))?;
        }
        lines.push(fstab::dir_bind(&d.to_string_lossy(), &format!("/sys/class/{class}")));
    }
    Ok(lines)
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Append `lines`; `known` is the file's content already read (to see whether it ends open).
/// Append `lines` to `path` whole, or leave it as it was. The length it had before, when
/// something was written (to take it back).
fn append(path: &Path, lines: &[String], known: Option<&[u8]>) -> Result<Option<u64>> {
    if lines.is_empty() {
        return Ok(None);
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("cannot append to {}", path.display()))?;
    let before = f.metadata().map(|m| m.len()).with_context(|| format!("cannot append to {}", path.display()))?;
    // A file whose last line lacks its newline (an image's environment, an earlier hook) must
    // not have our first line glued onto it.
    let ends_open = match known {
        Some(b) => b.last().is_some_and(|c| *c != b'\n'),
        None => {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            len > 0 && {
                use std::io::{Read, Seek, SeekFrom};
                let mut last = [0u8; 1];
                let mut r = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
                r.seek(SeekFrom::Start(len - 1)).is_ok() && r.read_exact(&mut last).is_ok() && last[0] != b'\n'
            }
        }
    };
    let mut text = if ends_open { String::from("\n") } else { String::new() };
    text.push_str(&lines.join("\n"));
    text.push('\n');
    if text.contains('\0') {
        bail!("refusing to write a NUL byte to {}", path.display());
    }
    if let Err(e) = f.write_all(text.as_bytes()) {
        // Cut short: what was written goes again (shrinking is allowed under any size limit).
        let _ = f.set_len(before);
        return Err(anyhow::Error::new(e).context(format!("cannot append to {} (left as it was)", path.display())));
    }
    Ok(Some(before))
}
