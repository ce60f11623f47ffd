//! Running helper programs (nvidia-smi, torchrun for verify) with a hard deadline.
//!
//! A wedged GPU driver makes nvidia-smi hang for minutes; nothing we run may block the probe or
//! a container start, so every child gets a deadline and is killed (with its process group)
//! when it passes.

use anyhow::{bail, Context, Result};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Captured {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Run `cmd` to completion or until `limit` passes; output is captured (bounded by what the
/// pipes hold before the child ends, which is ample for the tools we call).
/// What is kept of a child's stream: its first and its last `KEEP` bytes (NCCL's init lines
/// come first, the bandwidth table last); the middle of a runaway log is dropped, so memory stays
/// bounded whatever the child prints.
const KEEP: usize = 4 << 20;

/// What a stream gave so far: its first `KEEP` bytes, its last ones, and how many between
/// were dropped. Shared with the thread that reads the stream, so that a reader still blocked
/// (a detached grandchild holds the pipe open) does not hold the output back.
#[derive(Default)]
struct Kept {
    head: Vec<u8>,
    tail: Vec<u8>,
    skipped: usize,
}

impl Kept {
    fn add(&mut self, mut chunk: &[u8]) {
        if self.head.len() < KEEP {
            let k = chunk.len().min(KEEP - self.head.len());
            self.head.extend_from_slice(&chunk[..k]);
            chunk = &chunk[k..];
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > 2 * KEEP {
            let cut = self.tail.len() - KEEP;
            self.skipped += cut;
            self.tail.drain(..cut);
        }
    }

    fn text(&self) -> String {
        let mut out = self.head.clone();
        let (mut skipped, mut tail) = (self.skipped, &self.tail[..]);
        if tail.len() > KEEP {
            skipped += tail.len() - KEEP;
            tail = &tail[tail.len() - KEEP..];
        }
        if skipped > 0 {
            out.extend_from_slice(format!("\n[ibwire: {skipped} bytes of output not kept]\n").as_bytes());
        }
        out.extend_from_slice(tail);
        String::from_utf8_lossy(&out).into_owned()
    }
}

type Shared = std::sync::Arc<std::sync::Mutex<Kept>>;

/// Read `r` into `kept` until end of file; `done` is sent then.
fn drain(mut r: impl Read + Send + 'static, kept: Shared, done: std::sync::mpsc::Sender<()>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 64 << 10];
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => kept.lock().unwrap_or_else(|p| p.into_inner()).add(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = done.send(());
    });
}

/// After the child exits, how long its output may take to reach end of file: a grandchild that
/// left the process group and holds the pipes open is not waited for beyond this.
const AFTER_EXIT: Duration = Duration::from_millis(500);

pub fn run(mut cmd: Command, limit: Duration) -> Result<Captured> {
    let prog = format!("{:?}", cmd.get_program());
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().with_context(|| format!("cannot start {prog}"))?;
    let (out, err): (Shared, Shared) = Default::default();
    let (tx, rx) = std::sync::mpsc::channel();
    // Drained on threads so a chatty child never blocks on a full pipe.
    if let Some(o) = child.stdout.take() {
        drain(o, out.clone(), tx.clone());
    }
    if let Some(e) = child.stderr.take() {
        drain(e, err.clone(), tx);
    }
    let start = Instant::now();
    let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if start.elapsed() >= limit {
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            bail!("{prog} did not finish within {:.1}s and was killed", limit.as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // What the child left behind in its group goes with it; a reader still blocked after that
    // (a grandchild that left the group) is waited for AFTER_EXIT at most.
    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    let until = Instant::now() + AFTER_EXIT;
    for _ in 0..2 {
        if rx.recv_timeout(until.saturating_duration_since(Instant::now())).is_err() {
            break;
        }
    }
    let text = |k: &Shared| k.lock().unwrap_or_else(|p| p.into_inner()).text();
    Ok(Captured { status: status.code(), stdout: text(&out), stderr: text(&err) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hang_is_killed() {
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 30"]);
        let t = Instant::now();
        let e = run(c, Duration::from_millis(200)).err().unwrap();
        assert!(e.to_string().contains("did not finish"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn runaway_output_is_bounded() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo first; head -c 20000000 /dev/zero | tr '\\0' x; echo; echo last"]);
        let r = run(c, Duration::from_secs(20)).unwrap();
        assert!(r.stdout.len() < 2 * KEEP + 100, "{}", r.stdout.len());
        assert!(r.stdout.starts_with("first\n") && r.stdout.ends_with("last\n"));
        assert!(r.stdout.contains("bytes of output not kept"));
    }

    #[test]
    fn a_detached_grandchild_holding_the_pipes_is_not_waited_for() {
        // hostile round 4 #11: the child exits at once, a grandchild in its own session keeps
        // stdout open for 30 s; run returned after 30 s.
        let mut c = Command::new("sh");
        c.args(["-c", "echo hi; setsid sleep 30 & exit 0"]);
        let t = Instant::now();
        let r = run(c, Duration::from_secs(3)).unwrap();
        assert_eq!((r.status, r.stdout.as_str()), (Some(0), "hi\n"));
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    #[test]
    fn output_captured() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo hi; echo err >&2; exit 3"]);
        let r = run(c, Duration::from_secs(5)).unwrap();
        assert_eq!((r.status, r.stdout.as_str(), r.stderr.as_str()), (Some(3), "hi\n", "err\n"));
    }
}
