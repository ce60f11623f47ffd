//! Fault injection: files that vanish while being read, an nvidia-smi that hangs or prints
//! garbage, names that do not resolve, garbage everywhere under the hook. Each ends in a clear
//! one-line error or a documented fallback; the hook never fails a start outside strict mode.

use crate::common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn sysfs_vanishing_mid_read() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("n");
    ibwire_fixture::story(&root);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (r2, s2) = (root.clone(), stop.clone());
    // Another thread keeps removing and rebuilding whole device directories.
    let churn = std::thread::spawn(move || {
        let mut n = 0u32;
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            let d = r2.join("sys/devices/pci0000:26");
            let _ = std::fs::rename(&d, r2.join("gone"));
            let _ = std::fs::rename(r2.join("gone"), &d);
            let _ = std::fs::remove_dir_all(r2.join("sys/devices/virtual/net/bond0.3102"));
            n += 1;
        }
        n
    });
    for _ in 0..60 {
        let node = ibwire::probe::probe(&ibwire::probe::ProbeOptions::at(&root));
        assert!(node.rdma.len() >= 8, "the stable devices are always read");
        let _ = ibwire::plan::decide(&node, &ibwire::plan::Intent::default());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(churn.join().unwrap() > 0, "faults were injected");
}

fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn nvidia_smi_that_hangs_or_prints_garbage() {
    let t = tempfile::tempdir().unwrap();
    ibwire_fixture::story(&t.path().join("n"));
    let base = ibwire::probe::probe(&ibwire::probe::ProbeOptions::at(&t.path().join("n")));
    let hang = script(t.path(), "hang", "sleep 60");
    let mut node = base.clone();
    let start = Instant::now();
    let notes = ibwire::probe::nvidia_smi(&mut node, &hang, Duration::from_millis(300));
    // a hang guard, not a speed bound: the stand-in sleeps 60 s
    assert!(start.elapsed() < Duration::from_secs(30), "a hang is cut off");
    assert!(notes.iter().any(|n| n.contains("did not finish")), "{notes:?}");
    assert_eq!(node, base, "facts unchanged");
    let garbage =
        script(t.path(), "garbage", "printf '\\377\\376,,,\\n00000000:zz:00.0, GPU-x\\nGPU0\\tNVX\\tNV\\n'; exit 0");
    let mut node = base.clone();
    ibwire::probe::nvidia_smi(&mut node, &garbage, Duration::from_secs(5));
    assert!(node.gpus.iter().all(|g| g.uuid.is_none()));
    assert!(node.nvlinks.is_empty());
    let failing = script(
        t.path(),
        "fail",
        "echo 'NVIDIA-SMI has failed because it couldn'\"'\"'t communicate with the NVIDIA driver' >&2; exit 9",
    );
    let mut node = base.clone();
    let notes = ibwire::probe::nvidia_smi(&mut node, &failing, Duration::from_secs(5));
    assert!(notes[0].contains("exited with Some(9)"), "{notes:?}");
}

#[test]
fn master_that_does_not_resolve_is_one_line() {
    let t = tempfile::tempdir().unwrap();
    ibwire_fixture::story(t.path());
    let root = t.path().to_str().unwrap();
    for args in [
        vec!["launch", "--root", root, "--dry-run", "--master-addr", "no-such-host.invalid", "--", "x.py"],
        vec!["env", "--root", root, "--master-addr", "no-such-host.invalid"],
    ] {
        let o = ibwire(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("no-such-host.invalid"), "{e}");
    }
    let o = std::process::Command::new(bin())
        .args(["launch", "--root", root, "--dry-run", "--", "x.py"])
        .env("SLURM_JOB_NODELIST", "gpu-[001-")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("malformed node list"), "{}", stderr(&o));
}

#[test]
fn hook_survives_a_garbage_tree() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("n");
    ibwire_fixture::story(&root);
    // Overwrite every regular file under sys/ and proc/ with hostile bytes.
    let mut n = 0;
    let mut stack = vec![root.join("sys"), root.join("proc")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                let junk: &[u8] = match n % 4 {
                    0 => b"\xff\xfe\x00",
                    1 => b"4: ACTIVE\n\n\n$(reboot)\n",
                    2 => b"0x\n",
                    _ => b"-99999999999999999999999",
                };
                std::fs::write(e.path(), junk).unwrap();
                n += 1;
            }
        }
    }
    assert!(n > 300, "faults injected: {n}");
    let (f, e) = (t.path().join("fstab"), t.path().join("env"));
    let o = std::process::Command::new(bin())
        .arg("hook")
        .env_clear()
        .arg("--root")
        .arg(&root)
        .env("ENROOT_MOUNTS", &f)
        .env("ENROOT_ENVIRON", &e)
        .env("ENROOT_RESTRICT_DEV", "y")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for p in [&f, &e] {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        assert!(!text.contains("$(reboot)") && !text.contains('\u{fffd}'), "{text}");
    }
    // probe and doctor on the same tree: no panic, exit 0/1, never a crash code
    for cmd in [vec!["probe"], vec!["doctor"], vec!["topo"], vec!["env"]] {
        let o = ibwire(&[cmd.clone(), vec!["--root", root.to_str().unwrap()]].concat());
        assert!(matches!(o.status.code(), Some(0) | Some(1)), "{cmd:?}: {:?} {}", o.status, stderr(&o));
    }
}
