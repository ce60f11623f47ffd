//! Regression tests for the security review (issue 13): each finding, reproduced as a user or an
//! attacker would, then checked for its fix.

mod common;
use common::*;
use ibwire::probe::{self, Detail, ProbeOptions};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The hook as enroot runs it, on the story node through --root.
fn hook_cmd(root: &Path, dir: &Path, environ: &[u8]) -> Command {
    let rootfs = dir.join("rootfs");
    fs::create_dir_all(rootfs.join("dev")).unwrap();
    fs::write(dir.join("fstab"), "").unwrap();
    fs::write(dir.join("environment"), environ).unwrap();
    let mut c = Command::new(bin());
    c.arg("hook").arg("--root").arg(root).env_clear().env("PATH", "/usr/bin:/bin").env("HOME", dir);
    c.env("ENROOT_ROOTFS", &rootfs)
        .env("ENROOT_MOUNTS", dir.join("fstab"))
        .env("ENROOT_ENVIRON", dir.join("environment"))
        .env("ENROOT_RESTRICT_DEV", "y");
    c
}

fn story() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tree_dir();
    let root = t.path().join("node");
    ibwire::fixture::story(&root);
    (t, root)
}

#[test]
fn hook_argument_errors_and_empty_root_never_stop_a_start() {
    let t = tempfile::tempdir().unwrap();
    for (args, env) in [(vec!["hook", "--bogus"], None), (vec!["hook"], Some(("IBWIRE_ROOT", "")))] {
        let mut c = Command::new(bin());
        c.args(&args).env_clear().env("HOME", t.path());
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).lines().count() <= 1, "{}", stderr(&o));
        let o = c.env("IBWIRE_STRICT", "1").output().unwrap();
        if args.len() > 1 {
            assert_eq!(o.status.code(), Some(1), "strict: the bad flag fails the start");
            assert!(stderr(&o).starts_with("ibwire-hook: error:"), "{}", stderr(&o));
        }
    }
}

/// The hook parses its own flags without building every subcommand (speed); what it accepts,
/// refuses and explains must be what the full parser does.
#[test]
fn hook_help_and_flags_as_the_full_parser() {
    let t = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| Command::new(bin()).args(args).env_clear().env("HOME", t.path()).output().unwrap();
    let o = run(&["hook", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ENROOT_ROOTFS"), "help on stdout");
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    // --root and --snapshot conflict in the full parser: still refused (a warning, exit 0).
    let o = run(&["hook", "--root", "/", "--snapshot", "x.yaml"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    let o = run(&["hook", "--root", "/nonexistent-ibwire"]);
    assert!(stderr(&o).contains("--root /nonexistent-ibwire: not a directory"), "{}", stderr(&o));
}

#[test]
fn hook_ignores_ibwire_root_from_the_job() {
    let (t, root) = story();
    // The job points IBWIRE_ROOT at a tree; the hook must read the real node (here: no RDMA on
    // the test machine, or whatever it has) — never the job's tree.
    let mut c = hook_cmd(Path::new("/"), t.path(), b"");
    c.env("IBWIRE_ROOT", &root).env("IBWIRE_DEBUG", "1");
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let environ = fs::read_to_string(t.path().join("environment")).unwrap();
    assert!(!environ.contains("mlx5_bond"), "{environ}");
    assert!(!environ.contains("eno8303"), "the story tree's interface leaked in: {environ}");
}

#[test]
fn a_failed_warning_write_is_not_a_panic() {
    let (t, root) = story();
    let mut c = hook_cmd(&root, t.path(), b"");
    c.env("IBWIRE_VISIBLE_DEVICES", "nosuchdev"); // makes a warning
    let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = c.stderr(Stdio::from(full)).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "exit 101 would be a panic");
}

#[test]
fn non_utf8_environ_and_job_values_keep_the_hook_working() {
    use std::os::unix::ffi::OsStrExt;
    let (t, root) = story();
    let o = hook_cmd(&root, t.path(), b"PATH=/usr/bin\nLABEL=caf\xe9\n").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let env = fs::read(t.path().join("environment")).unwrap();
    let text = String::from_utf8_lossy(&env);
    assert!(text.contains("NCCL_IB_HCA=\"=mlx5_0:1,"), "{text}");
    assert!(env.starts_with(b"PATH=/usr/bin\nLABEL=caf\xe9\n"), "the image's bytes are kept");
    // A job value that is not UTF-8 is still the user's value.
    let mut c = hook_cmd(&root, t.path(), b"");
    c.env("NCCL_SOCKET_IFNAME", std::ffi::OsStr::from_bytes(b"eth\xff"));
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = fs::read_to_string(t.path().join("environment")).unwrap();
    assert!(!text.contains("NCCL_SOCKET_IFNAME"), "overrode the user's value: {text}");
}

#[test]
fn configs_that_hang_bloat_or_belong_to_others_are_refused_quickly() {
    let (t, root) = story();
    let fifo = t.path().join("fifo.yaml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let loose = t.path().join("loose.yaml");
    fs::write(&loose, "hook:\n  strict: false\n").unwrap();
    fs::set_permissions(&loose, fs::Permissions::from_mode(0o666)).unwrap();
    let bomb = t.path().join("bomb.yaml");
    let mut b = String::from("hca:\n  include: &a [x, x, x, x, x, x, x, x]\n");
    for _ in 0..30 {
        b.push_str("  exclude: [*a, *a, *a, *a, *a, *a, *a, *a]\n");
    }
    fs::write(&bomb, b).unwrap();
    for (cfg, what) in [
        (fifo.as_path(), "not a regular file"),
        (Path::new("/dev/zero"), "not a regular file"),
        (loose.as_path(), "writable by group or others"),
        (bomb.as_path(), "anchors and aliases"),
    ] {
        let start = Instant::now();
        let o = hook_cmd(&root, t.path(), b"").env("IBWIRE_CONFIG", cfg).output().unwrap();
        assert!(start.elapsed() < Duration::from_secs(5), "{}: {:?}", cfg.display(), start.elapsed());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stderr(&o).contains(what), "{}: {}", cfg.display(), stderr(&o));
        let o = Command::new(bin())
            .args(["env", "--root", root.to_str().unwrap(), "--config", cfg.to_str().unwrap()])
            .env("HOME", t.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn home_dev_null_is_no_user_config() {
    let (_t, root) = story();
    let o = Command::new(bin())
        .args(["env", "--root", root.to_str().unwrap()])
        .env("HOME", "/dev/null")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("NCCL_IB_HCA"));
}

#[test]
fn strict_fails_when_the_hook_cannot_do_its_job() {
    let (t, root) = story();
    // every port down
    for d in fs::read_dir(root.join("sys/class/infiniband")).unwrap().flatten() {
        fs::write(d.path().join("ports/1/state"), "1: DOWN\n").unwrap();
    }
    let o = hook_cmd(&root, t.path(), b"").env("IBWIRE_STRICT", "1").output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no healthy HCA port"), "{}", stderr(&o));
    let (t, root) = story();
    fs::write(t.path().join("c.yaml"), "bootstrap_interface: eth9\n").unwrap();
    fs::set_permissions(t.path().join("c.yaml"), fs::Permissions::from_mode(0o600)).unwrap();
    let o = hook_cmd(&root, t.path(), b"")
        .env("IBWIRE_STRICT", "1")
        .env("IBWIRE_CONFIG", t.path().join("c.yaml"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("eth9 does not exist"), "{}", stderr(&o));
}

#[test]
fn the_hooks_probe_sees_management_nodes() {
    let (_t, root) = story();
    let mut o = ProbeOptions::at(&root);
    o.detail = Detail::Hook;
    let n = probe::probe(&o);
    assert_eq!(n.rdma_device("mlx5_0").unwrap().mad, vec!["umad0"], "hook.mad needs them");
    // Without hook.mad or hide_sysfs the hook does not ask: one link per function saved.
    o.mad = false;
    assert!(probe::probe(&o).rdma.iter().all(|d| d.mad.is_empty()));
}

#[test]
fn a_tree_cannot_make_the_probe_read_outside_it() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    ibwire::fixture::plain(&root);
    // A planted absolute link to the host's /etc, and a relative one climbing out.
    let net = root.join("sys/class/net/eth0");
    let dev = fs::canonicalize(&net).unwrap();
    fs::remove_file(dev.join("operstate")).unwrap();
    std::os::unix::fs::symlink("/proc/self/status", dev.join("operstate")).unwrap();
    fs::remove_file(dev.join("mtu")).unwrap();
    std::os::unix::fs::symlink("../../../../../../../../../../proc/self/status", dev.join("mtu")).unwrap();
    let n = probe::probe(&ProbeOptions::at(&root));
    let i = n.iface("eth0").unwrap();
    assert_eq!(i.operstate, None, "read the host's file: {:?}", i.operstate);
    assert_eq!(i.mtu, None);
}

#[test]
fn capture_refuses_a_directory_with_anything_in_it() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    ibwire::fixture::plain(&root);
    let cap = t.path().join("cap");
    fs::create_dir(&cap).unwrap();
    fs::set_permissions(&cap, fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(t.path().join("victim"), cap.join("proc")).unwrap();
    let o = ibwire(&["probe", "--root", root.to_str().unwrap(), "--capture", cap.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
    assert!(!t.path().join("victim").exists());
    // A new directory is made private.
    let fresh = t.path().join("fresh");
    let o = ibwire(&["probe", "--root", root.to_str().unwrap(), "--capture", fresh.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700);
}

#[test]
fn closed_stdout_ends_quietly() {
    let (_t, root) = story();
    let mut c = Command::new(bin());
    c.args(["probe", "--json", "--root", root.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    drop(child.stdout.take()); // the reader went away (`| head -c0`)
    let o = child.wait_with_output().unwrap();
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn container_env_values_with_line_breaks_are_refused() {
    let (_t, root) = story();
    let o = Command::new(bin())
        .args([
            "launch",
            "--root",
            root.to_str().unwrap(),
            "--container",
            "img",
            "--nnodes",
            "1",
            "--dry-run",
            "--",
            "t.py",
        ])
        .env("NCCL_DEBUG", "INFO\nLD_PRELOAD=/tmp/evil.so")
        .env_remove("SLURM_JOB_NODELIST")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("line break"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("LD_PRELOAD"));
}

#[test]
fn nccl_log_parsing_stays_linear() {
    let mut log = String::new();
    for i in 0..100_000 {
        log.push_str(&format!("h:1:2 [0] misc/x.cc:1 NCCL WARN distinct warning number {i}\n"));
    }
    // Bounded by construction (counts, not wall time, in a debug build): 200 distinct warnings
    // kept, the rest counted, one failure kind recorded once.
    let f = ibwire::nccl::log::analyse(&log);
    assert!(f.lines >= 100_000);
    assert_eq!((f.warns.len(), f.warns_dropped), (200, 99_800));
}

/// What `$X` holds after `eval` of `line` in the shell `sh` (argv: program and its options).
fn eval_in(sh: &[&str], line: &str) -> String {
    let o = Command::new(sh[0])
        .args(&sh[1..])
        .arg("-c")
        .arg("eval \"$1\"; printf %s \"$X\"")
        .arg("sh")
        .arg(line)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `eval "$(ibwire env)"` gives back every value byte for byte in bash, dash and busybox sh.
#[test]
fn env_sh_round_trips_through_every_shell() {
    use proptest::prelude::*;
    let shells: Vec<Vec<&str>> = [vec!["bash"], vec!["dash"], vec!["busybox", "sh"]]
        .into_iter()
        .filter(|s| which::which(s[0]).is_ok())
        .collect();
    for missing in ["bash", "dash", "busybox"].iter().filter(|s| which::which(s).is_err()) {
        eprintln!("env_sh_round_trips_through_every_shell: {missing} not installed; not checked");
    }
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&"[^\\x00]{0,24}", |v| {
            let line = format!("export X={}", ibwire::render::sh_quote(&v));
            for sh in &shells {
                prop_assert_eq!(eval_in(sh, &line), v.clone(), "{} with {}", sh[0], line);
            }
            Ok(())
        })
        .unwrap();
    for v in ["{a,b}", "~root", "*", "a b", "'", "$(id)", "`id`", "!x", "[ab]", "=x", ""] {
        let line = format!("export X={}", ibwire::render::sh_quote(v));
        for sh in &shells {
            assert_eq!(eval_in(sh, &line), v, "{} with {line}", sh[0]);
        }
    }
}

/// Messages that blamed the wrong thing (issue 14), each on its new wording.
#[test]
fn errors_name_the_real_cause() {
    let t = tempfile::tempdir().unwrap();
    // --root on a directory that is not a node tree
    let o = ibwire(&["probe", "--root", t.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no sys/ inside, so not a node tree"), "{}", stderr(&o));
    // verify --from-log on a file that is not an NCCL log
    let f = t.path().join("notes.txt");
    fs::write(&f, "meeting notes\nnothing about NCCL here\n").unwrap();
    let tree = t.path().join("tree");
    ibwire::fixture::plain(&tree);
    let o = ibwire(&["verify", "--root", tree.to_str().unwrap(), "--from-log", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("not an NCCL log"), "{}", stderr(&o));
    // launch without torchrun on PATH names the fix
    let o = Command::new(bin())
        .args(["launch", "--root", tree.to_str().unwrap(), "--nnodes", "1", "--", "t.py"])
        .env("PATH", t.path())
        .env_remove("SLURM_JOB_NODELIST")
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("torchrun is not on PATH here"), "{}", stderr(&o));
    // a node without RDMA: the fix does not point at an empty exclusion list
    let o = ibwire(&["env", "--root", tree.to_str().unwrap(), "--explain"]);
    assert!(!stderr(&o).contains("fix the ports listed as excluded"), "{}", stderr(&o));
    // a text file as a snapshot: one short line, not the file
    let big = t.path().join("README");
    fs::write(&big, "prose ".repeat(5000)).unwrap();
    let o = ibwire(&["probe", "--snapshot", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).len() < 400 && stderr(&o).contains("not an ibwire snapshot"), "{}", stderr(&o));
}

/// 10 000 connected routes and as many local addresses: linear, not quadratic.
#[test]
fn address_ownership_stays_linear() {
    let mut route =
        String::from("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n");
    let mut trie = String::from("Local:\n");
    for i in 0..10_000u32 {
        let net = std::net::Ipv4Addr::from(0x0a00_0000 + (i << 8));
        let ip = std::net::Ipv4Addr::from(u32::from(net) + 5);
        route.push_str(&format!(
            "eth{}\t{:08X}\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n",
            i % 4,
            u32::from(net).swap_bytes()
        ));
        trie.push_str(&format!("     |-- {ip}\n        /32 host LOCAL\n"));
    }
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    ibwire::fixture::plain(&root);
    fs::write(root.join("proc/net/route"), route).unwrap();
    fs::write(root.join("proc/net/fib_trie"), trie).unwrap();
    let start = Instant::now();
    let n = probe::probe(&ProbeOptions::at(&root));
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    assert_eq!(n.routes.len(), 10_000);
}
