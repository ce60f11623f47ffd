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

fn drain(r: &mut impl Read) -> Vec<u8> {
    let (mut head, mut tail, mut skipped) = (Vec::new(), Vec::new(), 0usize);
    let mut buf = [0u8; 64 << 10];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut chunk = &buf[..n];
        if head.len() < KEEP {
            let k = chunk.len().min(KEEP - head.len());
            head.extend_from_slice(&chunk[..k]);
            chunk = &chunk[k..];
        }
        tail.extend_from_slice(chunk);
        if tail.len() > 2 * KEEP {
            let cut = tail.len() - KEEP;
            skipped += cut;
            tail.drain(..cut);
        }
    }
    if tail.len() > KEEP {
        skipped += tail.len() - KEEP;
        tail.drain(..tail.len() - KEEP);
    }
    if skipped > 0 {
        head.extend_from_slice(format!("\n[ibwire: {skipped} bytes of output not kept]\n").as_bytes());
    }
    head.extend_from_slice(&tail);
    head
}

pub fn run(mut cmd: Command, limit: Duration) -> Result<Captured> {
    let prog = format!("{:?}", cmd.get_program());
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().with_context(|| format!("cannot start {prog}"))?;
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    // Drain the pipes on threads so a chatty child never blocks on a full pipe.
    let t_out = std::thread::spawn(move || drain(&mut out));
    let t_err = std::thread::spawn(move || drain(&mut err));
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if start.elapsed() >= limit {
            let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            bail!("{prog} did not finish within {:.1}s and was killed", limit.as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned();
    Ok(Captured { status: status.code(), stdout, stderr })
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
    fn output_captured() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo hi; echo err >&2; exit 3"]);
        let r = run(c, Duration::from_secs(5)).unwrap();
        assert_eq!((r.status, r.stdout.as_str(), r.stderr.as_str()), (Some(3), "hi\n", "err\n"));
    }
}
