//! `ibwire doctor` on our story's node with the cluster docs' list of variables, on the host and
//! inside a container without /dev/infiniband: the verdicts the story reached.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const SEED: &[(&str, &str)] = &[
    ("PMIX_MCA_psec", "^munge"),
    ("NCCL_IB_HCA", "mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_9"),
    ("MELLANOX_VISIBLE_DEVICES", "all"),
    ("UCX_NET_DEVICES", "mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1"),
    ("NCCL_SOCKET_IFNAME", "bond0.2102"),
];

fn doctor(root: &Path, vars: &[(&str, &str)], extra: &[&str]) -> (i32, Vec<Value>, String) {
    let mut c = Command::new(bin());
    c.arg("doctor").arg("--root").arg(root).arg("--json").args(extra).env_clear().env("HOME", root);
    for (k, v) in vars {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code().unwrap(), v["findings"].as_array().cloned().unwrap_or_default(), stderr(&o))
}

fn find<'a>(fs: &'a [Value], subject: &str, words: &str) -> &'a Value {
    fs.iter()
        .find(|f| f["subject"] == subject && f["message"].as_str().unwrap().contains(words))
        .unwrap_or_else(|| panic!("no finding for {subject} containing {words:?} in {fs:#?}"))
}

#[test]
fn seed_list_on_the_host() {
    let t = tree_dir();
    ibwire::fixture::story(t.path());
    let (rc, fs, e) = doctor(t.path(), SEED, &[]);
    assert_eq!(rc, 0, "no error on a healthy host: {fs:#?} {e}");
    assert_eq!(find(&fs, "PMIX_MCA_psec", "torchrun and NCCL never read it")["severity"], "info");
    assert_eq!(find(&fs, "UCX_NET_DEVICES", "does nothing for NCCL")["severity"], "warning");
    assert_eq!(find(&fs, "MELLANOX_VISIBLE_DEVICES", "also exposes mlx5_bond_0")["severity"], "info");
    assert_eq!(find(&fs, "NCCL_IB_HCA", "selects exactly the 8 healthy ports")["severity"], "info");
    assert_eq!(find(&fs, "NCCL_SOCKET_IFNAME", "IPoIB vlan interface")["severity"], "info");
    assert_eq!(find(&fs, "mlx5_bond_0", "LID 0x0")["severity"], "warning");
    for f in &fs {
        assert!(f["fix"].is_string(), "every finding has a fix: {f}");
    }
}

#[test]
fn seed_list_with_the_master_on_the_management_network() {
    let t = tree_dir();
    ibwire::fixture::story(t.path());
    let (rc, fs, _) = doctor(t.path(), SEED, &["--master-addr", "198.21.151.40"]);
    assert_eq!(rc, 1);
    let f = find(&fs, "NCCL_SOCKET_IFNAME", "does not carry the route to the master");
    assert_eq!(f["severity"], "error");
    assert!(f["fix"].as_str().unwrap().contains("NCCL_SOCKET_IFNAME==eno8303"));
    // Not also "nothing to do" about the same value.
    let same: Vec<&Value> = fs.iter().filter(|f| f["subject"] == "NCCL_SOCKET_IFNAME").collect();
    assert!(same.iter().all(|f| !f["fix"].as_str().unwrap().starts_with("nothing to do")), "{same:#?}");
}

#[test]
fn seed_list_inside_a_container_without_dev_infiniband() {
    let t = tree_dir();
    ibwire::fixture::story(t.path());
    std::fs::remove_dir_all(t.path().join("dev/infiniband")).unwrap();
    std::fs::write(t.path().join(".enroot"), "").unwrap();
    let (rc, fs, _) = doctor(t.path(), SEED, &[]);
    assert_eq!(rc, 1);
    let f = find(&fs, "/dev/infiniband", "missing inside this container");
    assert_eq!(f["severity"], "error");
    assert!(f["message"].as_str().unwrap().contains("silently use TCP sockets"));
    assert_eq!(find(&fs, "MELLANOX_VISIBLE_DEVICES", "inside a running container does nothing")["severity"], "warning");
    // errors come first
    assert_eq!(fs[0]["severity"], "error");
}

#[test]
fn harmful_leftovers_and_broken_syntax() {
    let t = tree_dir();
    ibwire::fixture::story(t.path());
    let vars = [
        ("NCCL_IB_DISABLE", "1"),
        ("NCCL_P2P_DISABLE", "1"),
        ("NCCL_NET_GDR_LEVEL", "LOC"),
        ("NCCL_ALGO", "Ring"),
        ("NCCL_IB_GID_INDEX", "3"),
        ("NCCL_COMM_ID", "10.0.0.1:1234"),
        ("NCCL_DEBUG", "INFO"),
        ("NCCL_IB_HCA", "^=mlx5_0,^=mlx5_1"),
    ];
    let (rc, fs, _) = doctor(t.path(), &vars, &[]);
    assert_eq!(rc, 1);
    assert_eq!(find(&fs, "NCCL_IB_DISABLE", "turns InfiniBand off")["severity"], "error");
    for (k, w) in [
        ("NCCL_P2P_DISABLE", "host memory"),
        ("NCCL_NET_GDR_LEVEL", "disables GPUDirect"),
        ("NCCL_ALGO", "forces"),
        ("NCCL_IB_GID_INDEX", "forced"),
        ("NCCL_COMM_ID", "overrides"),
    ] {
        assert_eq!(find(&fs, k, w)["severity"], "warning", "{k}");
    }
    assert_eq!(find(&fs, "NCCL_DEBUG", "left on")["severity"], "info");
    assert_eq!(find(&fs, "NCCL_IB_HCA", "only count at the very start")["severity"], "error");
    // prefix ambiguity and unhealthy selection
    let (_, fs, _) = doctor(t.path(), &[("NCCL_IB_HCA", "mlx5")], &[]);
    assert!(find(&fs, "NCCL_IB_HCA", "selects mlx5_bond_0 port 1")["message"].as_str().unwrap().contains("LID 0x0"));
    find(&fs, "NCCL_IB_HCA", "is a prefix");
    for v in ["^", "=^mlx5_0", "mlx5_0, mlx5_3"] {
        let (rc, _, _) = doctor(t.path(), &[("NCCL_IB_HCA", v)], &[]);
        assert_eq!(rc, 1, "{v}");
    }
    // NCCL_SOCKET_IFNAME: missing, several by prefix, down
    let (_, fs, _) = doctor(t.path(), &[("NCCL_SOCKET_IFNAME", "eth9")], &[]);
    find(&fs, "NCCL_SOCKET_IFNAME", "matches no interface");
    let (_, fs, _) = doctor(t.path(), &[("NCCL_SOCKET_IFNAME", "bond0")], &[]);
    find(&fs, "NCCL_SOCKET_IFNAME", "matches 4 interfaces");
    let (_, fs, _) = doctor(t.path(), &[("NCCL_SOCKET_IFNAME", "=docker0")], &[]);
    find(&fs, "NCCL_SOCKET_IFNAME", "is not up");
}

#[test]
fn nccl_conf_is_read_and_the_environment_wins() {
    let t = tree_dir();
    ibwire::fixture::story(t.path());
    std::fs::create_dir_all(t.path().join("etc")).unwrap();
    std::fs::write(t.path().join("etc/nccl.conf"), "# site defaults\nNCCL_IB_DISABLE=1\nNCCL_DEBUG=WARN\n").unwrap();
    let (rc, fs, _) = doctor(t.path(), &[], &[]);
    assert_eq!(rc, 1);
    find(&fs, "NCCL_IB_DISABLE", "/etc/nccl.conf");
    let (rc, fs, _) = doctor(t.path(), &[("NCCL_IB_DISABLE", "0")], &[]);
    assert_eq!(rc, 0, "{fs:#?}");
    find(&fs, "NCCL_IB_DISABLE", "from the environment overrides");
}

#[test]
fn human_report_groups_by_severity() {
    let t = tree_dir();
    ibwire::fixture::story(t.path());
    let o = Command::new(bin())
        .args(["doctor", "--root", t.path().to_str().unwrap()])
        .env_clear()
        .env("UCX_NET_DEVICES", "mlx5_0:1")
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(out.starts_with("ibwire doctor (on the host)\n\nWarnings ("), "{out}");
    assert!(out.contains("      fix: unset it; `ibwire env` sets NCCL_IB_HCA"));
}

#[test]
fn narrow_links_and_unhealthy_ports_from_the_shared_rules() {
    let t = tree_dir();
    ibwire::fixture::story(t.path());
    // GPU0 trained at x8, mlx5_3 at x4, mlx5_9's port went down; a VF-style policy exclusion
    // (none here) would not be reported as a port fault.
    std::fs::write(t.path().join("sys/bus/pci/devices/0000:18:00.0/current_link_width"), "8\n").unwrap();
    std::fs::write(t.path().join("sys/class/infiniband/mlx5_3/device/current_link_width"), "4\n").unwrap();
    std::fs::write(t.path().join("sys/class/infiniband/mlx5_9/ports/1/state"), "1: DOWN\n").unwrap();
    let (_, fs, _) = doctor(t.path(), &[], &[]);
    assert_eq!(find(&fs, "GPU 0000:18:00.0", "x8 of x16")["severity"], "warning");
    assert_eq!(find(&fs, "mlx5_3", "x4 of x16")["severity"], "warning");
    assert!(find(&fs, "mlx5_9", "port 1: port state DOWN")["fix"].as_str().unwrap().contains("NCCL_IB_HCA"));
    assert!(find(&fs, "mlx5_bond_0", "port 1: InfiniBand link layer with LID 0x0")["message"].is_string());
}
