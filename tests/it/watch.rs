//! The socket-fallback watch of `ibwire launch` (issue 16), without a GPU: a stand-in torchrun
//! writes real NCCL log lines (tests/fixtures) into NCCL_DEBUG_FILE at a controlled moment,
//! then trains (sleeps). The watch must stop a Socket job within its promise, let an IB job
//! run, warn when GPUDirect RDMA is missing, forward signals, and keep torchrun's status.

use crate::common;
use common::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const STANDIN: &str = r#"#!/bin/bash
# stand-in torchrun: NCCL's log lines at a chosen moment, then a training loop
f=${NCCL_DEBUG_FILE//%h/$(hostname)}; f=${f//%p/$$}
trap 'echo USR1 >> "$STANDIN_MARK"' USR1
trap 'echo TERM >> "$STANDIN_MARK"; exit ${STANDIN_TERM_EXIT:-143}' TERM
trap 'echo INT >> "$STANDIN_MARK"; exit 130' INT
trap 'echo HUP >> "$STANDIN_MARK"; exit 129' HUP
if [ -n "${STANDIN_DEAF:-}" ]; then
  # a torchrun that ignores the request to stop, and a worker of its that does too
  trap 'echo TERM-ignored >> "$STANDIN_MARK"' TERM; (trap '' TERM INT HUP; exec sleep 300) &
fi
echo $$ > "$STANDIN_MARK.pid" # the traps are set
echo "argv: $*" > "$STANDIN_MARK.env"; env | grep -E '^NCCL_' | sort >> "$STANDIN_MARK.env"
sleep "${STANDIN_DELAY:-0.3}"
if [ -n "${STANDIN_LOG:-}" ]; then cat "$STANDIN_LOG" >> "$f"; fi
end=$((SECONDS + ${STANDIN_RUN:-1})); while [ $SECONDS -lt $end ]; do sleep 0.1; done
exit "${STANDIN_EXIT:-0}"
"#;

struct Job {
    _t: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
    mark: PathBuf,
}

fn job() -> Job {
    let t = tree_dir();
    let root = t.path().join("node");
    ibwire_fixture::story(&root);
    let bin = t.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let tr = bin.join("torchrun");
    fs::write(&tr, STANDIN).unwrap();
    fs::set_permissions(&tr, fs::Permissions::from_mode(0o755)).unwrap();
    let mark = t.path().join("mark");
    Job { _t: t, root, bin, mark }
}

fn fixture(rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel);
    assert!(p.exists(), "{}", p.display());
    p
}

/// A real 2-node RoCE job's init (its windows end at `Connected all rings`) and the `Init
/// COMPLETE` its eight ranks print next: the log of a job whose init finished.
fn ran_ib_log(j: &Job) -> std::path::PathBuf {
    let src = fixture("real/nccl-logs/h100-roce-2node-tpgds-aihub0008-aws-ofi-plugin-fallback-to-ib.log");
    let mut text = fs::read_to_string(src).unwrap();
    for r in 0..8 {
        text.push_str(&format!(
            "tpgds-aihub0008:{}:{} [{r}] NCCL INFO comm 0x5555{r} rank {r} nranks 16 cudaDev {r} nvmlDev {r} busId {r}1000 commId 0x1234 - Init COMPLETE\n",
            207007 + r,
            207007 + r
        ));
    }
    let p = j.root.parent().unwrap().join("ran-ib.log");
    fs::write(&p, text).unwrap();
    p
}

fn launch(j: &Job, log: Option<&Path>, extra: &[&str], vars: &[(&str, &str)]) -> Child {
    let mut c = Command::new(bin());
    c.args(["launch", "--root", j.root.to_str().unwrap(), "--nnodes", "2", "--node-rank", "0"])
        .args(["--master-addr", "198.21.151.17"])
        .args(extra)
        .args(["--", "train.py"])
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", j.bin.display()))
        .env("HOME", j.root.parent().unwrap())
        .env("TMPDIR", j.root.parent().unwrap())
        .current_dir(j.root.parent().unwrap())
        .env("STANDIN_MARK", &j.mark)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(l) = log {
        c.env("STANDIN_LOG", l);
    }
    // Signals ignored where the tests run (nohup ignores SIGHUP, a background job SIGINT) stay
    // ignored across exec, and a shell cannot trap them: launch and the stand-in start with
    // the defaults, as under Slurm.
    // SAFETY: only signal(2), async-signal-safe, between fork and exec.
    unsafe {
        c.pre_exec(|| {
            for s in [nix::libc::SIGHUP, nix::libc::SIGINT, nix::libc::SIGTERM, nix::libc::SIGQUIT] {
                nix::libc::signal(s, nix::libc::SIG_DFL);
            }
            Ok(())
        });
    }
    for (k, v) in vars {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

fn finish(c: Child) -> (i32, String, Duration) {
    let t = Instant::now();
    let o = c.wait_with_output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned(), t.elapsed())
}

#[test]
fn a_socket_fallback_stops_the_job_at_init() {
    let j = job();
    let t = Instant::now();
    let c = launch(
        &j,
        Some(&fixture("real/nccl-logs/dgx-a100-forced-net-socket-nccl-676.excerpt.log")),
        &[],
        &[("STANDIN_RUN", "60")],
    );
    let (rc, err, _) = finish(c);
    let took = t.elapsed();
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("gpu-001: NCCL chose Socket where InfiniBand/RoCE was expected"), "{err}");
    assert!(err.contains("--allow-socket-fallback"), "{err}");
    // verify's fixes name launch's own flag (set by the caller, not rewritten from the text)
    assert!(!err.contains("`--expect socket`"), "{err}");
    // a headline and indented lines (NCCL's words, each cause, the fix) that fit a terminal
    let report: Vec<&str> = err.lines().skip_while(|l| !l.contains("NCCL chose Socket")).collect();
    assert!(report.len() >= 4 && report[1].starts_with("  NCCL: \"Using network Socket\""), "{err}");
    assert!(report.iter().any(|l| l.starts_with("  fix: ")), "{err}");
    for l in report.iter().take_while(|l| !l.starts_with("ibwire launch: NCCL's log: ")) {
        assert!(l.chars().count() <= 100, "{} columns: {l}", l.chars().count());
    }
    // 0.3 s until NCCL's line, one poll, SIGTERM honoured at once: well under the 60 s job.
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
    assert!(fs::read_to_string(&j.mark).unwrap_or_default().contains("TERM"), "torchrun was told to stop");
    // What the child saw: the watch's variables and the pin (no plugin on this machine).
    let env = fs::read_to_string(j.mark.with_extension("env")).unwrap();
    assert!(env.contains("NCCL_DEBUG=INFO") && env.contains("NCCL_DEBUG_SUBSYS=INIT,NET"), "{env}");
    assert!(env.contains("NCCL_NET=IB"), "{env}");
}

/// The same, replaying NCCL 2.28.9's own lines from the 2×H200 device run (guard.sh): the
/// unpinned fallback, and the pinned init failure.
#[test]
fn real_nccl_lines_from_the_device_are_judged_the_same() {
    for (log, words) in [
        ("h200-2gpu-guard/1-expect-ib-plugin-nccl.log", "NCCL chose Socket where InfiniBand/RoCE was expected"),
        ("h200-2gpu-guard/2-expect-ib-pinned-nccl.log", "could not start its InfiniBand transport"),
    ] {
        let j = job();
        let (rc, err, _) = finish(launch(&j, Some(&fixture(log)), &[], &[("STANDIN_RUN", "60")]));
        assert_eq!(rc, 1, "{log}: {err}");
        assert!(err.contains(words), "{log}: {err}");
    }
    // The completed socket run: real NET/Socket channel lines, as verify reads them.
    let f =
        ibwire::nccl::log::analyse(&fs::read_to_string(fixture("h200-2gpu-guard/3-expect-socket-nccl.log")).unwrap());
    assert_eq!(f.observed().as_deref(), Some("Socket"));
    assert_eq!((f.channels.net_socket, f.channels.net_ib), (8, 0));
    assert_eq!(f.version.as_deref(), Some("2.28.9+cuda13.0"));
}

#[test]
fn allow_socket_fallback_warns_and_runs() {
    let j = job();
    let c = launch(
        &j,
        Some(&fixture("h200-1gpu/nccl-allreduce-1gpu.log")),
        &["--allow-socket-fallback"],
        &[("STANDIN_EXIT", "0")],
    );
    let (rc, err, _) = finish(c);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: gpu-001: NCCL chose Socket"), "{err}");
    let env = fs::read_to_string(j.mark.with_extension("env")).unwrap();
    assert!(!env.contains("NCCL_NET=IB"), "no pin when fallback is allowed: {env}");
}

#[test]
fn an_ib_job_with_gpudirect_runs_and_keeps_its_status() {
    let j = job();
    let c = launch(&j, Some(&ran_ib_log(&j)), &[], &[("STANDIN_EXIT", "7")]);
    let (rc, err, _) = finish(c);
    assert_eq!(rc, 7, "torchrun's status: {err}");
    assert!(!err.contains("error"), "{err}");
    // One verdict at the end, and the kept log named: `verify --from-log` of the job's output
    // (here, launch's stderr as a Slurm job's output file holds it) reads that log (issue 39).
    assert!(err.contains("gpu-001: verdict on this node's 1 NCCL log(s): OK: IB with GPUDirect RDMA"), "{err}");
    let out = j.root.parent().unwrap().join("slurm-1234.out");
    fs::write(&out, format!("step 1 loss 2.3\n{err}")).unwrap();
    let o = ibwire(&["verify", "--from-log", out.to_str().unwrap()]);
    // The kept log holds this node's lines only, of a job over 2: GPUDirect on its channels
    // says nothing of the other node (nccl-tests#350), but NCCL 2.27's `Connected all rings,
    // use ring PXN 0 GDR 1` is every rank's flag ANDed (transport/generic.cc): ok on its word.
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).starts_with("OK: IB with GPUDirect RDMA over 8 HCA(s) on every rank by NCCL's own word"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn ib_without_gpudirect_is_a_warning_or_with_require_gdr_a_stop() {
    let j = job();
    let log = fixture("real/nccl-logs/net-ib-without-gdrdma-gid0-nccl-1657.excerpt.log");
    let (rc, err, _) = finish(launch(&j, Some(&log), &[], &[]));
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("warning: gpu-001: NCCL uses IB without GPUDirect RDMA"), "{err}");
    let (rc, err, _) = finish(launch(&j, Some(&log), &["--require-gdr"], &[("STANDIN_RUN", "60")]));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("error: gpu-001: NCCL uses IB without GPUDirect RDMA"), "{err}");
}

#[test]
fn signals_reach_torchrun_and_its_status_comes_back() {
    let j = job();
    let log = fixture("real/nccl-logs/h100-roce-2node-tpgds-aihub0008-aws-ofi-plugin-fallback-to-ib.log");
    let c = launch(&j, Some(&log), &[], &[("STANDIN_RUN", "60"), ("STANDIN_TERM_EXIT", "42")]);
    let pid = nix::unistd::Pid::from_raw(c.id() as i32);
    wait_for_traps(&j);
    for s in [nix::sys::signal::Signal::SIGUSR1, nix::sys::signal::Signal::SIGCONT] {
        nix::sys::signal::kill(pid, s).unwrap();
    }
    std::thread::sleep(Duration::from_millis(500));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let (rc, err, _) = finish(c);
    let marks = fs::read_to_string(&j.mark).unwrap_or_default();
    assert!(marks.contains("USR1") && marks.contains("TERM"), "{marks}");
    assert_eq!(rc, 42, "{err}");
}

/// The process group `pgid` has no process left (no orphaned worker). A killed worker that
/// was reparented stays a zombie until init reaps it: up to 10 s are allowed for that.
fn group_gone(pgid: i32) -> bool {
    for _ in 0..100 {
        if nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None) == Err(nix::errno::Errno::ESRCH) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Wait until the stand-in has set its traps (it writes its pid after them): a signal sent
/// before would meet bash's default action, not the trap, on a loaded machine.
fn wait_for_traps(j: &Job) {
    for _ in 0..300 {
        if fs::read_to_string(j.mark.with_extension("pid")).is_ok_and(|s| s.trim().parse::<i32>().is_ok()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the stand-in torchrun did not start within 30 s");
}

fn scratch_dirs(j: &Job) -> Vec<String> {
    fs::read_dir(j.root.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ibwire"))
        .collect()
}

#[test]
fn interrupt_hangup_and_terminate_end_the_job_with_its_status() {
    use nix::sys::signal::Signal::*;
    for (sig, mark, code) in [(SIGINT, "INT", 130), (SIGHUP, "HUP", 129), (SIGTERM, "TERM", 143)] {
        let j = job();
        let c = launch(&j, None, &["--stop-grace", "30"], &[("STANDIN_RUN", "60")]);
        let pid = nix::unistd::Pid::from_raw(c.id() as i32);
        wait_for_traps(&j);
        nix::sys::signal::kill(pid, sig).unwrap();
        let (rc, err, _) = finish(c);
        assert_eq!(rc, code, "{sig}: {err}");
        assert_eq!(fs::read_to_string(&j.mark).unwrap().trim(), mark);
        let pgid: i32 = fs::read_to_string(j.mark.with_extension("pid")).unwrap().trim().parse().unwrap();
        assert!(group_gone(pgid), "{sig}: processes of the job outlived launch");
        // NCCL's log is kept for `verify`, in one directory the job's output names (issue 39).
        assert_eq!(scratch_dirs(&j).len(), 1, "{sig}: {:?}", scratch_dirs(&j));
        assert!(err.contains("ibwire launch: NCCL's log: "), "{sig}: {err}");
    }
}

#[test]
fn a_torchrun_that_ignores_sigterm_is_killed_after_the_grace() {
    let j = job();
    let c = launch(&j, None, &["--stop-grace", "1"], &[("STANDIN_RUN", "300"), ("STANDIN_DEAF", "1")]);
    let pid = nix::unistd::Pid::from_raw(c.id() as i32);
    wait_for_traps(&j);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let (rc, err, _) = finish(c);
    assert_eq!(rc, 128 + 9, "{err}");
    assert!(err.contains("did not stop within 1s") && err.contains("process group is killed"), "{err}");
    assert!(fs::read_to_string(&j.mark).unwrap().contains("TERM-ignored"));
    let pgid: i32 = fs::read_to_string(j.mark.with_extension("pid")).unwrap().trim().parse().unwrap();
    assert!(group_gone(pgid), "the deaf worker outlived launch");
    assert_eq!(scratch_dirs(&j).len(), 1, "{:?}", scratch_dirs(&j));
}

#[test]
fn sockets_declared_or_a_plugin_present_change_what_is_done() {
    let j = job();
    // --expect-net socket: no watch, no pin; torchrun replaces ibwire as before.
    let (rc, err, _) =
        finish(launch(&j, Some(&fixture("h200-1gpu/nccl-allreduce-1gpu.log")), &["--expect-net", "socket"], &[]));
    assert_eq!(rc, 0, "{err}");
    let env = fs::read_to_string(j.mark.with_extension("env")).unwrap();
    assert!(!env.contains("NCCL_NET=IB") && !env.contains("NCCL_DEBUG_FILE"), "{env}");
    // A net plugin on LD_LIBRARY_PATH: no pin (it would skip the plugin), the watch stays.
    let lib = j.root.parent().unwrap().join("lib");
    fs::create_dir(&lib).unwrap();
    fs::write(lib.join("libnccl-net.so"), "").unwrap();
    let c = launch(&j, None, &["--dry-run"], &[("LD_LIBRARY_PATH", lib.to_str().unwrap())]);
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success());
    let c = launch(&j, None, &["--dry-run", "--explain"], &[("LD_LIBRARY_PATH", lib.to_str().unwrap())]);
    let (_, err, _) = finish(c);
    assert!(err.contains("NCCL_NET not pinned: net plugin") && err.contains("libnccl-net.so"), "{err}");
    // The user's NCCL_DEBUG=WARN hides NCCL's choice: said, since nothing else guards the job…
    let (_, err, _) = finish(launch(&j, None, &["--dry-run"], &[("NCCL_DEBUG", "WARN"), ("NCCL_NET_PLUGIN", "ofi")]));
    assert!(err.contains("NCCL_DEBUG=WARN is set") && err.contains("would go unnoticed"), "{err}");
}

#[test]
fn a_hung_job_is_named_by_ncclss_ras() {
    // A stand-in for NCCL's RAS on an ephemeral port, answering VERBOSE STATUS with what a real
    // 2-rank hang on NCCL 2.28.9 answered (tests/fixtures/nccl-ras/): rank 1 stopped at
    // operation 1 while rank 0 reached 4. Asked every second, named once, after two answers.
    use std::io::{BufRead, BufReader, Write};
    let answer = fs::read_to_string(fixture("nccl-ras/hang-2.28.9-verbose-status.txt")).unwrap();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = asked.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let mut r = BufReader::new(c.try_clone().unwrap());
            let mut line = String::new();
            while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                if line.contains("VERBOSE STATUS") {
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let _ = (&c).write_all(answer.as_bytes());
                    break;
                }
                line.clear();
            }
        }
    });
    let j = job();
    let c = launch(
        &j,
        Some(&fixture("real/nccl-logs/h100-roce-2node-tpgds-aihub0008-aws-ofi-plugin-fallback-to-ib.log")),
        &["--ras-every", "1"],
        &[("STANDIN_RUN", "4"), ("NCCL_RAS_ADDR", &addr)],
    );
    let (rc, err, _) = finish(c);
    assert_eq!(rc, 0, "{err}");
    assert!(asked.load(std::sync::atomic::Ordering::SeqCst) >= 2, "RAS asked fewer than twice: {err}");
    assert_eq!(err.matches("the job is hung").count(), 1, "{err}");
    assert!(
        err.contains("gpu-001: the job is hung, NCCL's RAS says: rank 1 on 192.0.2.2 (GPU 0, process 930) stopped at operation 1 while other ranks reached 4"),
        "{err}"
    );
    assert!(
        err.contains("gpu-001: NOT OK: the job hung (rank 1 on 192.0.2.2"),
        "the verdict at the end says so: {err}"
    );
    let kept: Vec<_> = scratch_dirs(&j);
    let ras = j.root.parent().unwrap().join(&kept[0]).join("ras.gpu-001.txt");
    assert!(fs::read_to_string(&ras).unwrap().contains("MISMATCH"), "{}", ras.display());
    // Off: never asked.
    let before = asked.load(std::sync::atomic::Ordering::SeqCst);
    let j = job();
    let c = launch(&j, Some(&ran_ib_log(&j)), &["--ras-every", "0"], &[("STANDIN_RUN", "2"), ("NCCL_RAS_ADDR", &addr)]);
    let (_, err, _) = finish(c);
    assert!(!err.contains("hung"), "{err}");
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), before);
}
