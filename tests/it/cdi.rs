//! `ibwire cdi`: the spec offers exactly what the hook decides, in a version Debian 12's podman
//! reads, written atomically; nothing unhealthy is offered. The podman run itself is the root
//! system test tests/system/cdi-podman.sh.

use crate::common;
use common::{bin, ibwire, stderr, stdout, tree_dir};
use ibwire::plan::cdi::Spec;
use ibwire_fixture::{under_root_port, Port, Tree};
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn spec(root: &Path, extra: &[&str]) -> Spec {
    let mut args = vec!["cdi", "--root", root.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let o = ibwire(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The hook's decision on the same tree, restricted /dev, default selection: the uverbs and
/// rdma_cm nodes it binds, and its NCCL_IB_HCA.
fn hook(root: &Path) -> (BTreeSet<String>, Option<String>) {
    let d = tree_dir();
    let rootfs = d.path().join("rootfs");
    let lib = rootfs.join("usr/lib/x86_64-linux-gnu");
    fs::create_dir_all(lib.join("libibverbs")).unwrap();
    fs::create_dir_all(rootfs.join("dev")).unwrap();
    fs::write(lib.join("libibverbs.so.1"), "").unwrap();
    fs::write(lib.join("libibverbs/libmlx5-rdmav34.so"), "").unwrap();
    let (fstab, environ) = (d.path().join("fstab"), d.path().join("environ"));
    fs::write(&fstab, "").unwrap();
    fs::write(&environ, "").unwrap();
    let o = Command::new(bin())
        .arg("hook")
        .arg("--root")
        .arg(root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", d.path())
        .env("ENROOT_ROOTFS", &rootfs)
        .env("ENROOT_MOUNTS", &fstab)
        .env("ENROOT_ENVIRON", &environ)
        .env("ENROOT_RESTRICT_DEV", "y")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let binds = fs::read_to_string(&fstab)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    let hca = fs::read_to_string(&environ)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("NCCL_IB_HCA=").map(|v| v.trim_matches('"').to_string()));
    (binds, hca)
}

fn device<'a>(s: &'a Spec, name: &str) -> Option<&'a ibwire::plan::cdi::Device> {
    s.devices.iter().find(|d| d.name == name)
}

fn paths(s: &Spec, name: &str) -> BTreeSet<String> {
    device(s, name).map(|d| d.container_edits.device_nodes.iter().map(|n| n.path.clone()).collect()).unwrap_or_default()
}

fn env_hca(s: &Spec, name: &str) -> Option<String> {
    device(s, name)?.container_edits.env.iter().find_map(|e| e.strip_prefix("NCCL_IB_HCA=").map(String::from))
}

/// A RoCE node with its LID-0 bond carrying the management network (as tests/it/env_decisions.rs).
fn roce(r: &Path) {
    let mut t = Tree::new(r);
    t.numa(0, "0-31");
    for i in 0..4u8 {
        t.roce_rail(i, 1500);
    }
    let f0 = under_root_port(0x90, &["0000:91:00.0".into()]);
    t.hca("mlx5_bond_0", &f0, 0, &[Port::roce(1, "bond0", Some("192.168.7.5"))], 4);
    t.finish();
}

/// Property: on every tree, `healthy` holds exactly the nodes the hook binds and the
/// NCCL_IB_HCA it writes; each healthy HCA is offered by name, nothing else is.
#[test]
fn the_spec_offers_what_the_hook_decides_on_every_tree() {
    type Build = Box<dyn Fn(&Path)>;
    let builders: Vec<(&str, Build)> = vec![
        ("story", Box::new(|r| drop(ibwire_fixture::story(r)))),
        ("scaled 12", Box::new(|r| drop(ibwire_fixture::scaled(r, 12, 0)))),
        ("sriov 16", Box::new(|r| drop(ibwire_fixture::sriov(r, 16)))),
        ("roce", Box::new(roce)),
        (
            "story, one port down",
            Box::new(|r| {
                ibwire_fixture::story(r);
                let p = fs::read_link(r.join("sys/class/infiniband/mlx5_6")).unwrap();
                let dev = r.join("sys/class/infiniband").join(p);
                fs::write(dev.join("ports/1/state"), "1: DOWN\n").unwrap();
                fs::write(dev.join("ports/1/phys_state"), "3: Disabled\n").unwrap();
            }),
        ),
    ];
    for (label, build) in builders {
        let t = tree_dir();
        build(t.path());
        let s = spec(t.path(), &[]);
        let (binds, hook_hca) = hook(t.path());
        assert_eq!(s.cdi_version, "0.3.0", "{label}");
        assert_eq!(paths(&s, "healthy"), binds, "{label}: healthy = the hook's binds");
        assert_eq!(env_hca(&s, "healthy"), hook_hca, "{label}: NCCL_IB_HCA");
        assert_eq!(env_hca(&s, "all"), hook_hca, "{label}: all keeps NCCL on the same ports");
        let by_name: BTreeSet<&str> =
            s.devices.iter().map(|d| d.name.as_str()).filter(|n| *n != "healthy" && *n != "all").collect();
        let hca = hook_hca.clone().unwrap_or_default();
        let decided: BTreeSet<&str> = hca
            .trim_start_matches('=')
            .split(',')
            .filter_map(|p| p.split(':').next())
            .filter(|n| !n.is_empty())
            .collect();
        assert_eq!(by_name, decided, "{label}: one device per healthy HCA, by name");
        for d in &s.devices {
            assert!(paths(&s, &d.name).contains("/dev/infiniband/rdma_cm"), "{label}: {} brings rdma_cm", d.name);
            assert!(
                !paths(&s, &d.name).iter().any(|p| p.contains("umad") || p.contains("issm")),
                "{label}: no mad nodes unless hook.mad"
            );
        }
        assert!(device(&s, "mlx5_bond_0").is_none(), "{label}: the LID-0 bond is never offered by name");
    }
}

#[test]
fn story_spec_names_the_bond_on_stderr_and_carries_device_numbers() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let o = ibwire(&["cdi", "--root", t.path().to_str().unwrap()]);
    assert!(o.status.success());
    assert!(stderr(&o).contains("mlx5_bond_0: not healthy (InfiniBand link layer with LID 0x0"), "{}", stderr(&o));
    let s: Spec = serde_yaml::from_str(&stdout(&o)).unwrap();
    assert_eq!(s.kind, "ibwire.dev/hca");
    let all = &device(&s, "all").unwrap().container_edits.device_nodes;
    let bond = all.iter().find(|n| n.path == "/dev/infiniband/uverbs1").expect("all has the bond's node");
    assert_eq!((bond.kind.as_deref(), bond.major, bond.minor), (Some("c"), Some(231), Some(193)));
    let cm = all.iter().find(|n| n.path == "/dev/infiniband/rdma_cm").unwrap();
    assert_eq!((cm.major, cm.minor), (Some(10), Some(58)), "rdma_cm's numbers from /sys/class/misc");
    // --kind, and the same content as JSON.
    let j = spec(t.path(), &["--kind", "example.com/rdma"]);
    assert_eq!(j.kind, "example.com/rdma");
    assert_eq!(j.devices, s.devices);
}

#[test]
fn mad_nodes_only_when_configured() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let cfg = t.path().join("ibwire.yaml");
    fs::write(&cfg, "hook:\n  mad: true\n").unwrap();
    let s = spec(t.path(), &["--config", cfg.to_str().unwrap()]);
    assert!(paths(&s, "mlx5_0").contains("/dev/infiniband/umad0"), "{:?}", paths(&s, "mlx5_0"));
}

#[test]
fn a_name_starting_with_a_digit_needs_cdi_0_5_0() {
    let t = tree_dir();
    let tree = Tree::new(t.path());
    tree.numa(0, "0-7");
    let f = under_root_port(0x20, &["0000:21:00.0".into()]);
    tree.hca("0rdma", &f, 0, &[Port::ib(1, 7)], 0);
    tree.finish();
    let s = spec(t.path(), &[]);
    assert_eq!(s.cdi_version, "0.5.0");
    assert!(device(&s, "0rdma").is_some());
}

#[test]
fn output_is_written_atomically_0644_and_removed_when_nothing_is_left() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let dir = t.path().join("cdi");
    fs::create_dir(&dir).unwrap();
    let out = dir.join("ibwire.yaml");
    let o = ibwire(&["cdi", "--root", t.path().to_str().unwrap(), "--output", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    assert_eq!(fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o644);
    let names: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert_eq!(names, ["ibwire.yaml"], "no temporary file left behind");
    let s: Spec = serde_yaml::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    assert!(device(&s, "healthy").is_some());
    // The node loses its HCAs (a plain node): the stale spec goes, exit 1.
    let p = tree_dir();
    ibwire_fixture::plain(p.path());
    let o = ibwire(&["cdi", "--root", p.path().to_str().unwrap(), "--output", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("removed"), "{}", stderr(&o));
    assert!(!out.exists());
}

#[test]
fn a_node_with_no_healthy_port_offers_no_healthy_device() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    for d in fs::read_dir(t.path().join("sys/class/infiniband")).unwrap() {
        let dev = t.path().join("sys/class/infiniband").join(fs::read_link(d.unwrap().path()).unwrap());
        fs::write(dev.join("ports/1/state"), "1: DOWN\n").unwrap();
    }
    let o = ibwire(&["cdi", "--root", t.path().to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "`all` is still offered");
    assert!(stderr(&o).contains("no healthy HCA: `healthy` is not offered"), "{}", stderr(&o));
    let s: Spec = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(device(&s, "healthy").is_none());
    assert_eq!(device(&s, "all").unwrap().container_edits.env, ["NCCL_IB_DISABLE=1"]);
}

#[test]
fn a_bad_kind_is_one_line_and_exit_2() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let o = ibwire(&["cdi", "--root", t.path().to_str().unwrap(), "--kind", "hca\u{1b}[2J"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(!e.contains('\u{1b}'));
}

fn launch_dry_run(root: &Path, vars: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(bin());
    c.args(["launch", "--root", root.to_str().unwrap(), "--dry-run", "--", "train.py"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    for (k, v) in vars {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// `launch` as a pod's entrypoint: Kubeflow's PET_* and JobSet's MASTER_ADDR/NNODES/NODE_RANK
/// give the torchrun command; Slurm's variables win when both are there; bad values are one
/// line naming the variable.
#[test]
fn launch_reads_a_pods_rendezvous() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let o = launch_dry_run(
        t.path(),
        &[
            ("PET_NNODES", "2"),
            ("PET_NODE_RANK", "1"),
            ("PET_MASTER_ADDR", "10.9.8.7"),
            ("PET_MASTER_PORT", "23456"),
            ("PET_NPROC_PER_NODE", "4"),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "torchrun --nnodes=2 --nproc-per-node=4 --node-rank=1 --master-addr=10.9.8.7 --master-port=23456 train.py"
        ),
        "{}",
        stdout(&o)
    );
    let o = launch_dry_run(
        t.path(),
        &[("MASTER_ADDR", "10.9.8.7"), ("MASTER_PORT", "24000"), ("NNODES", "3"), ("NODE_RANK", "2")],
    );
    assert!(
        stdout(&o).contains("--nnodes=3 --nproc-per-node=8 --node-rank=2 --master-addr=10.9.8.7 --master-port=24000"),
        "{}",
        stdout(&o)
    );
    // Slurm first.
    let o = launch_dry_run(
        t.path(),
        &[
            ("SLURM_JOB_NODELIST", "10.1.1.[1-4]"),
            ("SLURM_NODEID", "3"),
            ("SLURM_JOB_ID", "77"),
            ("PET_NNODES", "2"),
            ("PET_MASTER_ADDR", "10.9.8.7"),
        ],
    );
    assert!(
        stdout(&o).contains("--nnodes=4 --nproc-per-node=8 --node-rank=3 --master-addr=10.1.1.1 --master-port=20077"),
        "{}",
        stdout(&o)
    );
    let o = launch_dry_run(t.path(), &[("PET_NNODES", "1:4"), ("PET_MASTER_ADDR", "m")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("PET_NNODES=1:4: an elastic range"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{}", stderr(&o));
}

/// doctor names an ibwire spec on disk that no longer matches the node, with the fix; a spec
/// that matches, or a file that is not ibwire's, says nothing.
#[test]
fn doctor_names_a_stale_spec() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let r = t.path().to_str().unwrap();
    let dir = t.path().join("var/run/cdi");
    fs::create_dir_all(&dir).unwrap();
    let out = dir.join("ibwire.yaml");
    assert!(ibwire(&["cdi", "--root", r, "--output", out.to_str().unwrap()]).status.success());
    fs::write(
        dir.join("other.json"),
        r#"{"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"0","containerEdits":{}}]}"#,
    )
    .unwrap();
    // NVIDIA's own spec has an `all` device too: not ibwire's, never compared.
    fs::write(
        dir.join("nvidia.yaml"),
        "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: all\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n",
    )
    .unwrap();
    let doctor = || stdout(&ibwire(&["doctor", "--root", r, "--json"]));
    assert!(!doctor().contains("CDI spec"), "a matching spec is no finding: {}", doctor());
    let again = ibwire(&["cdi", "--root", r, "--output", out.to_str().unwrap()]);
    assert!(stderr(&again).contains("is up to date"), "{}", stderr(&again));
    // A port goes down after the spec was written.
    let p = fs::read_link(t.path().join("sys/class/infiniband/mlx5_6")).unwrap();
    let dev = t.path().join("sys/class/infiniband").join(p);
    fs::write(dev.join("ports/1/state"), "1: DOWN\n").unwrap();
    let j: serde_json::Value = serde_json::from_str(&doctor()).unwrap();
    let f: Vec<&serde_json::Value> =
        j["findings"].as_array().unwrap().iter().filter(|f| f["subject"] == "CDI spec").collect();
    assert_eq!(f.len(), 1, "{j:#}");
    let m = f[0]["message"].as_str().unwrap();
    assert!(
        m.contains("no longer matches this node") && m.contains("offers mlx5_6 that this node no longer would"),
        "{m}"
    );
    assert!(f[0]["fix"].as_str().unwrap().starts_with("ibwire cdi --output "), "{}", f[0]["fix"]);
}
