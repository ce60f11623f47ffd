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
pub fn run(mut cmd: Command, limit: Duration) -> Result<Captured> {
    let prog = format!("{:?}", cmd.get_program());
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().with_context(|| format!("cannot start {prog}"))?;
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    // Drain the pipes on threads so a chatty child never blocks on a full pipe.
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
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
    fn output_captured() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo hi; echo err >&2; exit 3"]);
        let r = run(c, Duration::from_secs(5)).unwrap();
        assert_eq!((r.status, r.stdout.as_str(), r.stderr.as_str()), (Some(3), "hi\n", "err\n"));
    }
}
