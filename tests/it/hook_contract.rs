//! The enroot hook's contract without root: ENROOT_* variables and temp files, fixture trees
//! through --root, the exact fstab and environ lines asserted.

use crate::common;
use common::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    rc: i32,
    fstab: String,
    environ: String,
    stderr: String,
}

fn hook(root: &Path, dir: &Path, restricted: bool, vars: &[(&str, &str)], environ_before: &str) -> Run {
    let rootfs = dir.join("rootfs");
    fs::create_dir_all(rootfs.join("dev")).unwrap();
    // An image with rdma-core (libibverbs and the mlx5 provider), unless the test made it bare.
    if !rootfs.join(".bare").exists() {
        let lib = rootfs.join("usr/lib/x86_64-linux-gnu");
        fs::create_dir_all(lib.join("libibverbs")).unwrap();
        fs::write(lib.join("libibverbs.so.1"), "").unwrap();
        fs::write(lib.join("libibverbs/libmlx5-rdmav34.so"), "").unwrap();
    }
    let (fstab, environ) = (dir.join("fstab"), dir.join("environment"));
    fs::write(&fstab, "").unwrap();
    fs::write(&environ, environ_before).unwrap();
    let mut c = Command::new(bin());
    c.arg("hook").env_clear().env("PATH", "/usr/bin:/bin").env("HOME", dir);
    c.arg("--root")
        .arg(root)
        .env("ENROOT_ROOTFS", &rootfs)
        .env("ENROOT_MOUNTS", &fstab)
        .env("ENROOT_ENVIRON", &environ);
    if restricted {
        c.env("ENROOT_RESTRICT_DEV", "y");
    }
    for (k, v) in vars {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.stdout.is_empty(), "the hook prints nothing on stdout");
    Run {
        rc: o.status.code().unwrap_or(-1),
        fstab: fs::read_to_string(&fstab).unwrap_or_default(),
        environ: fs::read_to_string(&environ).unwrap_or_default(),
        stderr: stderr(&o),
    }
}

/// A variable line in the environ file (not a word inside IBWIRE_HOOK_WARNINGS' text).
fn has_var(environ: &str, name: &str) -> bool {
    environ.lines().any(|l| l.starts_with(&format!("{name}=")))
}

fn story() -> (tempfile::TempDir, PathBuf) {
    let t = tree_dir();
    let root = t.path().join("node");
    ibwire_fixture::story(&root);
    (t, root)
}

fn bind(n: &str) -> String {
    format!("/dev/infiniband/{n} /dev/infiniband/{n} none x-create=file,bind,nosuid,noexec 0 0\n")
}

const HCA: &str = "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1";

fn story_environ(hca: &str) -> String {
    format!(
        "NCCL_IB_HCA=\"{hca}\"\nNCCL_SOCKET_IFNAME=\"=eno8303\"\nNCCL_SOCKET_FAMILY=\"AF_INET\"\nGLOO_SOCKET_IFNAME=\"eno8303\"\nCUDA_DEVICE_ORDER=\"PCI_BUS_ID\"\n"
    )
}

#[test]
fn story_node_restricted_dev() {
    let (t, root) = story();
    let r = hook(&root, t.path(), true, &[], "");
    assert_eq!(r.rc, 0, "{}", r.stderr);
    let want: String =
        ["uverbs0", "uverbs3", "uverbs4", "uverbs5", "uverbs6", "uverbs7", "uverbs8", "uverbs9", "rdma_cm"]
            .iter()
            .map(|n| bind(n))
            .collect();
    assert_eq!(r.fstab, want, "mlx5_bond_0 (uverbs1) is not exposed");
    assert_eq!(r.environ, story_environ(HCA));
    assert_eq!(r.stderr, "", "quiet when all is well");
}

#[test]
fn enroot_reads_restrict_dev_0_as_true() {
    // enroot unsets only n/no/f/false spellings; `0` restricts /dev like `y` (spec §1.4).
    let (t, root) = story();
    for (v, restricted) in [("0", true), ("y", true), ("no", false), ("FALSE", false)] {
        let r = hook(&root, t.path(), false, &[("ENROOT_RESTRICT_DEV", v)], "");
        assert_eq!(r.fstab.contains("uverbs0"), restricted, "ENROOT_RESTRICT_DEV={v}");
    }
    // ibwire's own switch: IBWIRE_STRICT=0 is off
    let d = t.path().join("mounts-dir");
    fs::create_dir_all(&d).unwrap();
    let o = Command::new(bin())
        .arg("hook")
        .env_clear()
        .arg("--root")
        .arg(&root)
        .env("ENROOT_MOUNTS", &d)
        .env("ENROOT_ENVIRON", t.path().join("e"))
        .env("IBWIRE_STRICT", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn story_node_host_dev_writes_no_dev_lines() {
    // Without ENROOT_RESTRICT_DEV the rootfs /dev here is on the same filesystem as the tree's
    // /dev, i.e. "the host's own": an x-create under it would create files on the host.
    let (t, root) = story();
    let r = hook(&root, t.path(), false, &[], "");
    assert_eq!(r.rc, 0);
    assert_eq!(r.fstab, "");
    assert_eq!(r.environ, story_environ(HCA));
}

#[test]
fn node_without_infiniband_does_nothing_and_says_nothing() {
    let t = tree_dir();
    ibwire_fixture::plain(&t.path().join("node"));
    let r = hook(&t.path().join("node"), t.path(), true, &[], "PATH=/x\n");
    assert_eq!((r.rc, r.fstab.as_str(), r.environ.as_str(), r.stderr.as_str()), (0, "", "PATH=/x\n", ""));
}

#[test]
fn node_without_infiniband_still_says_a_broken_config_where_pyxis_users_look() {
    // Under real pyxis 0.24 + enroot 4.1.2 (2026-12-02) a broken IBWIRE_CONFIG on a node without
    // RDMA devices was said on the hook's stderr only, which pyxis drops on a start that
    // succeeds: the user's settings were lost without a word they could read.
    let t = tree_dir();
    ibwire_fixture::plain(&t.path().join("node"));
    let cfg = t.path().join("mine.yaml");
    fs::write(&cfg, "hca: [not, a, map\n").unwrap();
    let r = hook(&t.path().join("node"), t.path(), true, &[("IBWIRE_CONFIG", cfg.to_str().unwrap())], "PATH=/x\n");
    assert_eq!((r.rc, r.fstab.as_str()), (0, ""), "{}", r.stderr);
    let line =
        r.environ.lines().find(|l| l.starts_with("IBWIRE_HOOK_WARNINGS=")).unwrap_or_else(|| panic!("{}", r.environ));
    assert!(line.contains("mine.yaml") && line.contains("that file is skipped"), "{line}");
    assert!(r.environ.starts_with("PATH=/x\n"), "the image's environment is kept: {}", r.environ);
    // nothing else is exported there: no device, no NCCL setting
    assert_eq!(r.environ.lines().count(), 2, "{}", r.environ);
}

#[test]
fn mellanox_visible_devices_indices_as_the_stock_hook() {
    // PCI order: 0 mlx5_0 (19:00.0), 1 mlx5_3 (2a), 2 mlx5_4 (3b), 3 mlx5_bond_0 (49), 4 mlx5_5 …
    let (t, root) = story();
    let r = hook(&root, t.path(), true, &[("MELLANOX_VISIBLE_DEVICES", "0,2")], "");
    assert_eq!(r.fstab, format!("{}{}{}", bind("uverbs0"), bind("uverbs4"), bind("rdma_cm")));
    assert!(r.environ.starts_with("NCCL_IB_HCA=\"=mlx5_0:1,mlx5_4:1\"\n"), "{}", r.environ);
    // the same, set in the image's environment rather than the job's (the stock hook reads both)
    let r2 = hook(&root, t.path(), true, &[], "MELLANOX_VISIBLE_DEVICES=0,2\n");
    assert_eq!(r2.fstab, r.fstab);
}

#[test]
fn mellanox_all_exposes_every_node_but_nccl_gets_only_healthy_ones() {
    let (t, root) = story();
    let r = hook(&root, t.path(), true, &[("MELLANOX_VISIBLE_DEVICES", "all")], "");
    assert!(r.fstab.contains(&bind("uverbs1")), "all means all, bond included");
    assert_eq!(r.fstab.lines().count(), 10);
    assert!(r.environ.starts_with(&format!("NCCL_IB_HCA=\"{HCA}\"\n")), "{}", r.environ);
}

#[test]
fn none_and_void_expose_nothing_and_warn() {
    let (t, root) = story();
    for v in ["none", "void"] {
        let r = hook(&root, t.path(), true, &[("MELLANOX_VISIBLE_DEVICES", v)], "");
        assert_eq!(r.rc, 0);
        assert_eq!(r.fstab, "");
        assert!(!has_var(&r.environ, "NCCL_IB_HCA"));
        assert!(r.stderr.contains("NCCL will use TCP sockets"), "{}", r.stderr);
    }
}

/// pyxis: only the hook runs, so it pins NCCL_NET=IB for multi-node jobs when the image has no
/// net plugin — a socket fallback then fails NCCL's init instead of running 5x slower.
#[test]
fn multi_node_jobs_get_nccl_net_pinned_unless_a_plugin_is_in_play() {
    let (t, root) = story();
    let multi = [("SLURM_JOB_NUM_NODES", "2")];
    let r = hook(&root, t.path(), true, &multi, "");
    assert!(r.environ.contains("NCCL_NET=\"IB\"\n"), "{}", r.environ);
    let r = hook(&root, t.path(), true, &[("SLURM_JOB_NUM_NODES", "1")], "");
    assert!(!has_var(&r.environ, "NCCL_NET"), "single node: {}", r.environ);
    let r = hook(&root, t.path(), true, &[("SLURM_JOB_NUM_NODES", "2"), ("NCCL_NET", "Socket")], "");
    assert!(!has_var(&r.environ, "NCCL_NET"), "the user's choice stays: {}", r.environ);
    let r = hook(&root, t.path(), true, &[("SLURM_JOB_NUM_NODES", "2"), ("IBWIRE_ALLOW_SOCKET_FALLBACK", "1")], "");
    assert!(!has_var(&r.environ, "NCCL_NET"), "{}", r.environ);
    // The image ships HPC-X's plugin on its LD_LIBRARY_PATH: NCCL_NET=IB would skip it.
    let plug = t.path().join("rootfs/opt/hpcx/nccl_rdma_sharp_plugin/lib");
    std::fs::create_dir_all(&plug).unwrap();
    std::fs::write(plug.join("libnccl-net.so"), "").unwrap();
    let r = hook(&root, t.path(), true, &multi, "LD_LIBRARY_PATH=/opt/hpcx/nccl_rdma_sharp_plugin/lib:/usr/lib\n");
    assert!(!has_var(&r.environ, "NCCL_NET"), "plugin present: {}", r.environ);
    std::fs::remove_dir_all(t.path().join("rootfs/opt")).unwrap();
    // … and one in a standard directory of the image.
    let std_lib = t.path().join("rootfs/usr/lib/x86_64-linux-gnu");
    std::fs::create_dir_all(&std_lib).unwrap();
    std::fs::write(std_lib.join("libnccl-net.so"), "").unwrap();
    let r = hook(&root, t.path(), true, &multi, "");
    assert!(!has_var(&r.environ, "NCCL_NET"), "{}", r.environ);
}

/// With the host's /dev, binds cannot narrow what the container sees: the environment must.
#[test]
fn host_dev_with_a_narrowed_selection_narrows_the_environment() {
    let (t, root) = story();
    let r = hook(&root, t.path(), false, &[("MELLANOX_VISIBLE_DEVICES", "none")], "");
    assert_eq!((r.rc, r.fstab.as_str()), (0, ""));
    assert!(r.environ.contains("NCCL_IB_DISABLE=\"1\"") && !has_var(&r.environ, "NCCL_IB_HCA"), "{}", r.environ);
    assert!(r.stderr.contains("through the host's /dev: NCCL_IB_DISABLE=1"), "{}", r.stderr);
    // A narrower selection: exactly its healthy ports, never the whole node.
    let r = hook(&root, t.path(), false, &[("IBWIRE_VISIBLE_DEVICES", "mlx5_3,mlx5_0,mlx5_bond_0")], "");
    assert_eq!(r.fstab, "", "nothing to bind over the host's /dev");
    assert!(r.environ.starts_with("NCCL_IB_HCA=\"=mlx5_0:1,mlx5_3:1\"\n"), "{}", r.environ);
    assert!(!has_var(&r.environ, "NCCL_IB_DISABLE"));
    // Only the LID-0 bond selected: NCCL must not use it, nor the others it can see.
    let r = hook(&root, t.path(), false, &[("IBWIRE_VISIBLE_DEVICES", "mlx5_bond_0")], "");
    assert!(r.environ.contains("NCCL_IB_DISABLE=\"1\""), "{}", r.environ);
    // The user's own NCCL_IB_DISABLE wins.
    let r = hook(&root, t.path(), false, &[("MELLANOX_VISIBLE_DEVICES", "none"), ("NCCL_IB_DISABLE", "0")], "");
    assert!(!has_var(&r.environ, "NCCL_IB_DISABLE"), "{}", r.environ);
    // In a restricted /dev, "none" binds nothing: nothing to keep NCCL off, no variable.
    let r = hook(&root, t.path(), true, &[("MELLANOX_VISIBLE_DEVICES", "none")], "");
    assert!(!has_var(&r.environ, "NCCL_IB_DISABLE"), "{}", r.environ);
}

#[test]
fn ibwire_visible_devices_names_pci_and_hostile_entries() {
    let (t, root) = story();
    let r = hook(
        &root,
        t.path(),
        true,
        &[("IBWIRE_VISIBLE_DEVICES", "../../etc,mlx5_3,0000:db:00.0,$(reboot),mlx5_3")],
        "",
    );
    assert_eq!(r.rc, 0);
    assert_eq!(r.fstab, format!("{}{}{}", bind("uverbs3"), bind("uverbs9"), bind("rdma_cm")));
    assert!(
        r.stderr.starts_with(
            "ibwire-hook: warning: IBWIRE_VISIBLE_DEVICES: no such device here: \"../../etc\", \"$(reboot)\""
        ),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(r.environ.starts_with("NCCL_IB_HCA=\"=mlx5_3:1,mlx5_9:1\"\n"));
}

#[test]
fn user_values_in_image_or_job_win() {
    let (t, root) = story();
    let before = "NCCL_IB_HCA=mlx5_0\nGLOO_SOCKET_IFNAME='bond0.2102'";
    let r = hook(&root, t.path(), false, &[("NCCL_SOCKET_IFNAME", "=bond0.2102")], before);
    assert_eq!(
        r.environ,
        format!("{before}\nCUDA_DEVICE_ORDER=\"PCI_BUS_ID\"\n"),
        "no NCCL_IB_HCA, NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME (nor a family for the user's interface) from us; \
         the unterminated last line is not glued"
    );
}

#[test]
fn master_from_slurm_picks_the_routed_interface() {
    let (t, root) = story();
    let r = hook(&root, t.path(), false, &[("SLURM_JOB_NODELIST", "198.21.3.[5-6]")], "");
    assert!(r.environ.contains("NCCL_SOCKET_IFNAME=\"=bond0.2102\""), "{}", r.environ);
    let r = hook(&root, t.path(), false, &[("SLURM_JOB_NODELIST", "gpu-[001")], "");
    assert_eq!(r.rc, 0);
    assert!(r.stderr.contains("malformed node list"), "{}", r.stderr);
    assert!(r.environ.contains("NCCL_SOCKET_IFNAME=\"=eno8303\""));
}

#[test]
fn errors_warn_and_start_unless_strict() {
    let (t, root) = story();
    // ENROOT_MOUNTS is a directory: cannot append
    let d = t.path().join("mounts-dir");
    fs::create_dir_all(&d).unwrap();
    for strict in [false, true] {
        let mut c = Command::new(bin());
        c.arg("hook").env_clear().env("HOME", t.path()).arg("--root").arg(&root);
        c.env("ENROOT_RESTRICT_DEV", "y").env("ENROOT_MOUNTS", &d).env("ENROOT_ENVIRON", t.path().join("e"));
        if strict {
            c.env("IBWIRE_STRICT", "1");
        }
        let o = c.output().unwrap();
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        if strict {
            assert_eq!(o.status.code(), Some(1));
            assert!(e.starts_with("ibwire-hook: error: cannot append to"), "{e}");
        } else {
            assert_eq!(o.status.code(), Some(0));
            assert!(e.starts_with("ibwire-hook: warning: cannot append to"), "{e}");
        }
    }
    // not run by enroot at all
    let o = Command::new(bin()).arg("hook").env_clear().arg("--root").arg(&root).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("ENROOT_MOUNTS is not set"));
}

#[test]
fn hide_sysfs_binds_masks_holding_only_selected_devices() {
    let (t, root) = story();
    let cfg = t.path().join("ibwire.yaml");
    fs::write(&cfg, "hook:\n  hide_sysfs: true\n").unwrap();
    let rt = t.path().join("runtime");
    fs::create_dir_all(&rt).unwrap();
    let r = hook(
        &root,
        t.path(),
        true,
        &[
            ("IBWIRE_CONFIG", cfg.to_str().unwrap()),
            ("ENROOT_RUNTIME_PATH", rt.to_str().unwrap()),
            ("IBWIRE_VISIBLE_DEVICES", "mlx5_0"),
        ],
        "",
    );
    assert_eq!(r.rc, 0, "{}", r.stderr);
    let mask = rt.join("ibwire-sysfs/infiniband");
    let names: Vec<String> =
        fs::read_dir(&mask).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(names, vec!["mlx5_0"]);
    let target = fs::read_link(mask.join("mlx5_0")).unwrap();
    assert!(target.starts_with("/sys/devices/pci0000:15/"), "{}", target.display());
    // The mad class keeps only mlx5_0's node (the hook matches umad links when it masks).
    let mut mad: Vec<String> = fs::read_dir(rt.join("ibwire-sysfs/infiniband_mad"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    mad.sort();
    assert_eq!(mad, vec!["abi_version", "umad0"]);
    // libibverbs reads the uverbs ABI version at start: the mask keeps the class's own file.
    assert_eq!(fs::read_to_string(rt.join("ibwire-sysfs/infiniband_verbs/abi_version")).unwrap().trim(), "6");
    assert!(r
        .fstab
        .contains(&format!("{} /sys/class/infiniband none bind,ro,nosuid,noexec,nodev 0 0", mask.display())));
}

/// The sh form of the hook (hooks/90-ibwire.sh, IBWIRE_HOOK_FORM=sh) with each way the binary
/// can fail to do its job:
/// absent (a removed package: silent, exit 0 even strict), unable to run (126/127), killed by a
/// signal (a warning, exit 0; strict 1), and ibwire's own strict failure (1, passed through).
#[test]
fn shim_never_breaks_a_start_because_of_ibwire_itself() {
    let t = tree_dir();
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/90-ibwire.sh")).unwrap();
    let shim_for = |name: &str, bin: &Path| {
        let shim = t.path().join(format!("90-ibwire-{name}.sh"));
        fs::write(&shim, text.replace("@IBWIRE@", bin.to_str().unwrap())).unwrap();
        shim
    };
    let exe = |name: &str, body: &[u8]| {
        let p = t.path().join(name);
        fs::write(&p, body).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    let run = |shim: &Path, strict: Option<&str>| {
        let mut c = Command::new("sh");
        c.arg(shim).env_remove("IBWIRE_STRICT");
        if let Some(v) = strict {
            c.env("IBWIRE_STRICT", v);
        }
        let o = c.output().unwrap();
        (o.status.code(), stderr(&o))
    };
    // absent: the package was removed and the hook (a config file) kept
    let gone = shim_for("gone", &t.path().join("nonexistent/ibwire"));
    for strict in [None, Some("1")] {
        assert_eq!(run(&gone, strict), (Some(0), String::new()), "strict {strict:?}");
    }
    // present but cannot run: an ELF for a machine this kernel does not run, no execute bit
    let mut elf = b"\x7fELF\x02\x01\x01\x00".to_vec();
    elf.resize(64, 0);
    // a machine no kernel runs (an aarch64 one could run here through qemu-user binfmt)
    elf[18] = 0x77;
    elf[19] = 0x77;
    let foreign = shim_for("foreign", &exe("foreign", &elf));
    let noexec = t.path().join("noexec");
    fs::write(&noexec, "#!/bin/sh\n").unwrap();
    let noexec = shim_for("noexec", &noexec);
    let killed = shim_for("killed", &exe("killed", b"#!/bin/sh\nkill -KILL $$\n"));
    for (shim, why) in
        [(&foreign, "cannot be run here"), (&noexec, "cannot be run here"), (&killed, "killed by signal 9")]
    {
        // The shell's own line about a failed exec (`Exec format error`) may come first; the
        // shim's is one line, the last.
        let (rc, e) = run(shim, None);
        let last = e.lines().last().unwrap_or("");
        assert_eq!(rc, Some(0), "{e}");
        assert!(e.lines().count() <= 2, "{e}");
        assert!(last.starts_with("ibwire-hook: warning: ") && last.contains(why), "{e}");
        assert!(last.contains("the container starts without ibwire's settings"), "{e}");
        for on in ["1", "yes", "TRUE"] {
            let (rc, e) = run(shim, Some(on));
            let last = e.lines().last().unwrap_or("");
            assert_eq!(rc, Some(1), "IBWIRE_STRICT={on}: {e}");
            assert!(last.starts_with("ibwire-hook: error: ") && last.contains(why), "{e}");
        }
        for off in ["0", "no", "False", ""] {
            assert_eq!(run(shim, Some(off)).0, Some(0), "IBWIRE_STRICT={off}");
        }
    }
    // ibwire's own statuses pass through: 1 is strict mode failing the start on purpose
    for (code, want) in [(0, 0), (1, 1)] {
        let shim =
            shim_for(&format!("rc{code}"), &exe(&format!("rc{code}"), format!("#!/bin/sh\nexit {code}\n").as_bytes()));
        let (rc, e) = run(&shim, None);
        assert_eq!((rc, e.as_str()), (Some(want), ""));
    }
}

/// The story's own mistakes, named by the hook at container start (issue "No false ok").
#[test]
fn the_jobs_prefix_nccl_ib_hca_taking_the_bond_is_named() {
    let (t, root) = story();
    let r = hook(&root, t.path(), true, &[("NCCL_IB_HCA", "mlx5")], "");
    assert_eq!(r.rc, 0);
    assert!(!has_var(&r.environ, "NCCL_IB_HCA"), "the job's value is kept: {}", r.environ);
    assert!(r.stderr.contains("NCCL_IB_HCA=mlx5 takes mlx5_bond_0:1") && r.stderr.contains("EINVAL"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // The exact healthy list is fine.
    let r = hook(&root, t.path(), true, &[("NCCL_IB_HCA", HCA)], "");
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    // Strict, a job over nodes: the start fails, nothing is written, the problem is said once.
    let vars = [("NCCL_IB_HCA", "mlx5"), ("IBWIRE_STRICT", "1"), ("SLURM_JOB_NUM_NODES", "2")];
    let r = hook(&root, t.path(), true, &vars, "");
    assert_eq!((r.rc, r.fstab.as_str(), r.environ.as_str()), (1, "", ""), "{}", r.stderr);
    assert_eq!(r.stderr.matches("mlx5_bond_0").count(), 1, "{}", r.stderr);
    // One node: nothing connects over the bond, so strict warns and the start goes on.
    let r = hook(&root, t.path(), true, &vars[..2], "");
    assert_eq!(r.rc, 0, "{}", r.stderr);
    assert!(r.stderr.contains("warning: the job's NCCL_IB_HCA=mlx5 takes mlx5_bond_0:1"), "{}", r.stderr);
}

#[test]
fn a_selection_naming_nothing_on_a_multi_node_job_fails_loudly_in_nccl() {
    let (t, root) = story();
    let vars = [("MELLANOX_VISIBLE_DEVICES", "garbage"), ("SLURM_JOB_NUM_NODES", "2")];
    let r = hook(&root, t.path(), true, &vars, "");
    assert_eq!(r.rc, 0);
    assert!(has_var(&r.environ, "NCCL_NET") && r.environ.contains("NCCL_NET=\"IB\""), "{}", r.environ);
    assert!(r.stderr.contains("NCCL_NET=IB makes NCCL fail at init"), "{}", r.stderr);
    // Asked for on purpose: sockets, no pin.
    let r = hook(&root, t.path(), true, &[("MELLANOX_VISIBLE_DEVICES", "none"), ("SLURM_JOB_NUM_NODES", "2")], "");
    assert!(!has_var(&r.environ, "NCCL_NET"), "{}", r.environ);
    // One node: nothing crosses a network, no pin.
    let r = hook(&root, t.path(), true, &[("MELLANOX_VISIBLE_DEVICES", "garbage")], "");
    assert!(!has_var(&r.environ, "NCCL_NET"), "{}", r.environ);
    // The same rule as every other pin: a declared socket fallback is respected.
    let r = hook(&root, t.path(), true, &[vars[0], vars[1], ("IBWIRE_ALLOW_SOCKET_FALLBACK", "1")], "");
    assert!(!has_var(&r.environ, "NCCL_NET"), "{}", r.environ);
}

#[test]
fn an_image_without_verbs_is_named() {
    let (t, root) = story();
    let rootfs = t.path().join("rootfs");
    fs::create_dir_all(&rootfs).unwrap();
    fs::write(rootfs.join(".bare"), "").unwrap();
    let r = hook(&root, t.path(), true, &[], "");
    assert!(r.stderr.contains("the image has no libibverbs.so.1"), "{}", r.stderr);
    let lib = rootfs.join("usr/lib64");
    fs::create_dir_all(&lib).unwrap();
    fs::write(lib.join("libibverbs.so.1"), "").unwrap();
    let r = hook(&root, t.path(), true, &[], "");
    assert!(r.stderr.contains("no verbs provider for mlx5"), "{}", r.stderr);
    fs::create_dir_all(lib.join("libibverbs")).unwrap();
    fs::write(lib.join("libibverbs/libmlx5-rdmav34.so"), "").unwrap();
    let r = hook(&root, t.path(), true, &[], "");
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    // A symlink out of the image is not followed to the host's libraries.
    fs::remove_dir_all(&lib).unwrap();
    std::os::unix::fs::symlink("/usr/lib/x86_64-linux-gnu", &lib).unwrap_or(());
    let r = hook(&root, t.path(), true, &[], "");
    assert!(r.stderr.contains("libibverbs") || r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn void_with_the_hosts_dev_still_keeps_nccl_off_the_bond() {
    let (t, root) = story();
    let r = hook(&root, t.path(), false, &[("MELLANOX_VISIBLE_DEVICES", "void")], "");
    assert!(r.environ.starts_with(&format!("NCCL_IB_HCA=\"{HCA}\"\n")), "{}", r.environ);
    let r = hook(&root, t.path(), false, &[("MELLANOX_VISIBLE_DEVICES", "void"), ("NCCL_IB_HCA", "=mlx5_0:1")], "");
    assert!(!has_var(&r.environ, "NCCL_IB_HCA"), "{}", r.environ);
}

#[test]
fn a_broken_user_config_costs_one_warning_not_the_settings() {
    let (t, root) = story();
    let cfg = t.path().join("broken.yaml");
    fs::write(&cfg, "hook: [unclosed\n").unwrap();
    let missing = t.path().join("missing.yaml");
    for c in [&cfg, &missing] {
        let r = hook(&root, t.path(), true, &[("IBWIRE_CONFIG", c.to_str().unwrap())], "");
        assert_eq!(r.rc, 0);
        assert!(r.environ.starts_with(&format!("NCCL_IB_HCA=\"{HCA}\"\n")), "{}", r.environ);
        assert!(r.fstab.contains(&bind("uverbs0")), "{}", r.fstab);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains("that file is skipped"), "{}", r.stderr);
        // A user file's trouble is information: strict mode does not fail the start for it.
        let r = hook(&root, t.path(), true, &[("IBWIRE_CONFIG", c.to_str().unwrap()), ("IBWIRE_STRICT", "1")], "");
        assert_eq!(r.rc, 0, "{}", r.stderr);
    }
}

/// pyxis shows the hook's stderr only when a start fails: what the hook has to say is also in
/// the container's environment (IBWIRE_HOOK_WARNINGS), where `ibwire doctor` inside prints it.
#[test]
fn warnings_reach_a_pyxis_user_whose_start_succeeded() {
    let (t, root) = story();
    let r = hook(&root, t.path(), true, &[("NCCL_IB_HCA", "mlx5")], "");
    let line = r.environ.lines().find(|l| l.starts_with("IBWIRE_HOOK_WARNINGS=")).expect("the warnings variable");
    assert!(line.contains("mlx5_bond_0") && line.len() < 4200, "{line}");
    // A clean start adds no variable.
    let r = hook(&root, t.path(), true, &[], "");
    assert!(!has_var(&r.environ, "IBWIRE_HOOK_WARNINGS"), "{}", r.environ);
}

/// The hook's `--help` names exactly the variables it writes (a multi-node job with something
/// to say writes all of them), and not IBWIRE_ROOT, which it ignores.
#[test]
fn hook_help_names_what_it_writes() {
    let (t, root) = story();
    let help = stdout(&Command::new(bin()).args(["hook", "--help"]).output().unwrap());
    let para =
        help.split("appends").nth(1).and_then(|s| s.split("Devices:").next()).unwrap_or_else(|| panic!("{help}"));
    let named: std::collections::BTreeSet<&str> = para
        .split(|c: char| !(c.is_ascii_uppercase() || c == '_'))
        .filter(|w| w.len() > 3 && w.contains('_'))
        .collect();
    let r =
        hook(&root, t.path(), true, &[("SLURM_JOB_NUM_NODES", "2"), ("IBWIRE_VISIBLE_DEVICES", "mlx5_0,nosuch")], "");
    assert_eq!(r.rc, 0, "{}", r.stderr);
    let written: std::collections::BTreeSet<&str> = r.environ.lines().filter_map(|l| l.split('=').next()).collect();
    assert_eq!(named, written, "help: {para}");
    assert!(!help.contains("IBWIRE_ROOT="), "{help}");
}

/// NCCL's RAS listener: the hook gives each Slurm job its own loopback port (stable per job id,
/// different between jobs); a job that set NCCL_RAS_ADDR keeps its own; outside Slurm nothing.
#[test]
fn each_job_gets_its_own_ras_address() {
    let (t, root) = story();
    let ras = |vars: &[(&str, &str)]| {
        let d = t.path().join(format!("ras-{}", vars.len()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        let r = hook(&root, &d, true, vars, "");
        assert_eq!(r.rc, 0, "{}", r.stderr);
        r.environ.lines().find_map(|l| l.strip_prefix("NCCL_RAS_ADDR=").map(|v| v.trim_matches('"').to_string()))
    };
    assert_eq!(ras(&[("SLURM_JOB_ID", "4242")]).as_deref(), Some("127.0.0.1:15242"));
    assert_eq!(ras(&[("SLURM_JOB_ID", "4242"), ("SLURM_NODEID", "0")]).as_deref(), Some("127.0.0.1:15242"), "stable");
    assert_eq!(ras(&[("SLURM_JOB_ID", "4243")]).as_deref(), Some("127.0.0.1:15243"), "another job, another port");
    assert_eq!(ras(&[("SLURM_JOB_ID", "4242"), ("NCCL_RAS_ADDR", "127.0.0.1:30000")]), None, "the job's own wins");
    assert_eq!(ras(&[]), None, "outside Slurm: NCCL's default");
    for id in [0u64, 1, 8999, 9000, u64::MAX] {
        let p = ibwire::slurm::ras_port_for_job(id);
        assert!((11000..20000).contains(&p), "{id} → {p}");
    }
}

#[test]
fn strict_fails_a_start_only_for_what_breaks_that_job() {
    // Under real pyxis + enroot, strict failed every one-node job whose image lacks libibverbs
    // (hostile round 4): a one-node job needs no verbs. Two nodes still fail.
    let (t, root) = story();
    let rootfs = t.path().join("rootfs");
    fs::create_dir_all(&rootfs).unwrap();
    fs::write(rootfs.join(".bare"), "").unwrap();
    let r = hook(&root, t.path(), true, &[("IBWIRE_STRICT", "1")], "");
    assert_eq!(r.rc, 0, "{}", r.stderr);
    assert!(r.stderr.contains("warning: the image has no libibverbs.so.1"), "{}", r.stderr);
    assert!(has_var(&r.environ, "NCCL_IB_HCA"), "the start's settings are written: {}", r.environ);
    for nodes in [("SLURM_JOB_NUM_NODES", "2"), ("SLURM_NNODES", "4")] {
        let r = hook(&root, t.path(), true, &[("IBWIRE_STRICT", "1"), nodes], "");
        assert_eq!(r.rc, 1, "{nodes:?}: {}", r.stderr);
        assert!(r.stderr.contains("error: the image has no libibverbs.so.1"), "{}", r.stderr);
        assert!(r.stderr.contains("the container does not start"), "{}", r.stderr);
    }
}

#[test]
fn a_broken_user_config_reaches_the_warnings_variable() {
    // Under real pyxis a start that succeeds shows none of the hook's stderr: a broken
    // IBWIRE_CONFIG (the user's own settings lost) was said there only (hostile round 4).
    let (t, root) = story();
    let cfg = t.path().join("mine.yaml");
    fs::write(&cfg, "hca: [not, a, map\n").unwrap();
    let c = cfg.to_str().unwrap();
    let r = hook(&root, t.path(), true, &[("IBWIRE_CONFIG", c)], "");
    assert_eq!(r.rc, 0, "{}", r.stderr);
    let line =
        r.environ.lines().find(|l| l.starts_with("IBWIRE_HOOK_WARNINGS=")).unwrap_or_else(|| panic!("{}", r.environ));
    assert!(line.contains("mine.yaml") && line.contains("that file is skipped"), "{line}");
}

#[test]
fn hide_sysfs_reads_a_tree_through_the_confined_reader() {
    // hostile round 4 #6: the mask was built with plain file calls: a FIFO in the tree stalled
    // the hook to its deadline, a link copied a file from outside into the mask.
    let (t, root) = story();
    let cfg = t.path().join("ibwire.yaml");
    fs::write(&cfg, "hook:\n  hide_sysfs: true\n").unwrap();
    let rt = t.path().join("runtime");
    fs::create_dir_all(&rt).unwrap();
    let mad = root.join("sys/class/infiniband_mad");
    let _ = fs::remove_file(mad.join("abi_version"));
    nix::unistd::mkfifo(&mad.join("abi_version"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    // infiniband_verbs: a link to a directory outside the tree, holding a secret
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("abi_version"), "outside-secret\n").unwrap();
    let verbs = root.join("sys/class/infiniband_verbs");
    let _ = fs::remove_dir_all(&verbs);
    std::os::unix::fs::symlink(outside.path(), &verbs).unwrap();
    let t0 = std::time::Instant::now();
    let r = hook(
        &root,
        t.path(),
        true,
        &[("IBWIRE_CONFIG", cfg.to_str().unwrap()), ("ENROOT_RUNTIME_PATH", rt.to_str().unwrap())],
        "",
    );
    assert!(t0.elapsed() < std::time::Duration::from_secs(5), "{:?}: {}", t0.elapsed(), r.stderr);
    assert_eq!(r.rc, 0, "{}", r.stderr);
    assert!(!rt.join("ibwire-sysfs/infiniband_mad/abi_version").exists(), "a FIFO is no file to copy");
    let copied = fs::read_to_string(rt.join("ibwire-sysfs/infiniband_verbs/abi_version")).unwrap_or_default();
    assert!(!copied.contains("outside-secret"), "copied from outside the tree");
}
