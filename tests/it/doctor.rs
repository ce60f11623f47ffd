//! `ibwire doctor` on our story's node with the cluster docs' list of variables, on the host and
//! inside a container without /dev/infiniband: the verdicts the story reached.

use crate::common;
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
    ibwire_fixture::story(t.path());
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
fn a_broken_user_config_is_a_finding_and_the_node_is_still_examined() {
    // It was exit 2 with one line and nothing examined (issue 41): doctor lints it instead.
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let cfg = t.path().join("mine.yaml");
    std::fs::write(&cfg, "hca: [not, a, map\n").unwrap();
    let (rc, fs, e) = doctor(t.path(), &[("IBWIRE_CONFIG", cfg.to_str().unwrap())], &[]);
    assert_eq!(rc, 1, "{fs:#?} {e}");
    let f = find(&fs, "configuration", "mine.yaml:1:6");
    assert_eq!(f["severity"], "error");
    assert!(f["message"].as_str().unwrap().contains("examined with the defaults"), "{f}");
    // and the rest of the node as usual
    assert_eq!(find(&fs, "mlx5_bond_0", "LID 0x0")["severity"], "warning");
}

#[test]
fn nccl_ib_disable_with_a_net_plugin_has_no_effect() {
    // NCCL_IB_DISABLE is read by NCCL's internal IB transport only (src/transport/net_ib/init.cc):
    // with HPC-X's IBext loaded it did not disable IB (NVIDIA/nccl-tests#373).
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let (_, fs, _) = doctor(t.path(), &[("NCCL_IB_DISABLE", "1")], &[]);
    assert!(!fs.iter().any(|f| f["message"].as_str().unwrap().contains("has no effect while")), "no plugin: {fs:#?}");
    let lib = t.path().join("opt/hpcx/nccl_rdma_sharp_plugin/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("libnccl-net.so"), "").unwrap();
    let ld = ("LD_LIBRARY_PATH", "/opt/hpcx/nccl_rdma_sharp_plugin/lib");
    let (_, fs, _) = doctor(t.path(), &[("NCCL_IB_DISABLE", "1"), ld], &[]);
    let f = find(&fs, "NCCL_IB_DISABLE", "has no effect while the net plugin");
    assert_eq!(f["severity"], "warning");
    assert!(f["fix"].as_str().unwrap().contains("NCCL_NET=Socket"), "{f}");
    // NCCL_NET_PLUGIN=none leaves the plugin out: then NCCL_IB_DISABLE is read again
    let (_, fs, _) = doctor(t.path(), &[("NCCL_IB_DISABLE", "1"), ld, ("NCCL_NET_PLUGIN", "none")], &[]);
    assert!(!fs.iter().any(|f| f["message"].as_str().unwrap().contains("has no effect while")), "{fs:#?}");
}

#[test]
fn nccl_net_must_name_the_plugin_with_its_version() {
    // NCCL compares NCCL_NET with the full name (strcasecmp, nccl:src/plugin/net.cc); HPC-X's
    // plugin is IBext_v11 or IBext_v8 (NVIDIA/nccl-tests#373): `IBext` selects nothing.
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let (_, fs, _) = doctor(t.path(), &[("NCCL_NET", "IBext")], &[]);
    let f = find(&fs, "NCCL_NET", "full name");
    assert_eq!(f["severity"], "warning");
    assert!(f["fix"].as_str().unwrap().contains("Using network"), "{f}");
    // NCCL_CROSS_NIC=0 and the device API (GIN, 2.28+): said, as a note
    let (_, fs, _) = doctor(t.path(), &[("NCCL_CROSS_NIC", "0")], &[]);
    assert_eq!(find(&fs, "NCCL_CROSS_NIC", "device API")["severity"], "info");
    let (_, fs, _) = doctor(t.path(), &[("NCCL_CROSS_NIC", "0"), ("NCCL_GIN_ENABLE", "0")], &[]);
    assert!(!fs.iter().any(|f| f["subject"] == "NCCL_CROSS_NIC"), "GIN off: {fs:#?}");
    for ok in ["IBext_v11", "IB"] {
        let (_, fs, _) = doctor(t.path(), &[("NCCL_NET", ok)], &[]);
        assert!(!fs.iter().any(|f| f["message"].as_str().unwrap().contains("full name")), "{ok}: {fs:#?}");
    }
}

#[test]
fn seed_list_with_the_master_on_the_management_network() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
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
    ibwire_fixture::story(t.path());
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
    ibwire_fixture::story(t.path());
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
    ibwire_fixture::story(t.path());
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
    ibwire_fixture::story(t.path());
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
    ibwire_fixture::story(t.path());
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

/// GPUDirect RDMA's registration paths: without nvidia_peermem, DMA-BUF (kernel ≥ 5.12 and the
/// open NVIDIA module) is named as the path; an old kernel or the proprietary module is the
/// missing piece; unknown facts say so.
#[test]
fn gpudirect_through_peermem_or_dmabuf() {
    let cases: [(Option<&str>, Option<bool>, &str, &str); 4] = [
        (
            Some("6.8.0-45-generic"),
            Some(true),
            "info",
            "can be registered through DMA-BUF instead (kernel 6.8.0-45-generic",
        ),
        (Some("5.4.0-150-generic"), Some(true), "warning", "kernel 5.4.0-150-generic is older than 5.12"),
        (Some("6.8.0-45-generic"), Some(false), "warning", "the proprietary NVIDIA kernel module is loaded"),
        (None, None, "warning", "whether DMA-BUF can replace it is unknown (the kernel version was not read)"),
    ];
    for (kernel, open, sev, words) in cases {
        let t = tree_dir();
        let tree = ibwire_fixture::story(t.path());
        if let Some(k) = kernel {
            tree.kernel(k);
        }
        if let Some(o) = open {
            tree.nvidia_module(o, "550.127.05");
        }
        let (_, fs, _) = doctor(t.path(), &[], &[]);
        assert!(!fs.iter().any(|f| f["subject"] == "GPUDirect RDMA"), "nvidia_peermem loaded: nothing to say: {fs:#?}");
        std::fs::remove_dir_all(t.path().join("sys/module/nvidia_peermem")).unwrap();
        let (_, fs, _) = doctor(t.path(), &[], &[]);
        let f = find(&fs, "GPUDirect RDMA", words);
        assert_eq!(f["severity"], sev, "{kernel:?} {open:?}");
        if sev == "info" {
            // The confirmation it points to is evidence verify reads: /GDRDMA channel lines.
            assert!(f["fix"].as_str().unwrap().contains("/GDRDMA"), "{f:#}");
        }
    }
}

/// ACS on the switch ports between a GPU and its HCA is an error naming the bridge and the fix;
/// bridges that are not readable say so; off is silent.
#[test]
fn acs_redirect_between_gpu_and_hca_is_an_error() {
    let t = tree_dir();
    let tree = ibwire_fixture::story(t.path());
    // Story rail 0: GPU 0000:18:00.0 and mlx5_0 0000:19:00.0 below switch ports 17:00.0 / 17:01.0.
    let (_, fs, _) = doctor(t.path(), &[], &[]);
    find(&fs, "ACS", "is unknown: their configuration space past 64 bytes is readable by root only");
    let all: Vec<String> = std::fs::read_dir(t.path().join("sys/bus/pci/devices"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for b in &all {
        tree.config_space_4k(b, None);
    }
    let (rc, fs, _) = doctor(t.path(), &[], &[]);
    assert!(!fs.iter().any(|f| f["subject"].as_str().unwrap().starts_with("ACS")), "ACS off: nothing to say: {fs:#?}");
    tree.config_space_4k("0000:17:01.0", Some(0x001d));
    let (rc2, fs, _) = doctor(t.path(), &[], &[]);
    let f = find(
        &fs,
        "ACS 0000:17:01.0",
        "ACS redirects peer-to-peer at bridge 0000:17:01.0 (ACS control 0x001d) between GPU 0000:18:00.0 ↔ mlx5_0",
    );
    assert_eq!(f["severity"], "error");
    assert!(f["message"].as_str().unwrap().contains("IB completion error 4"));
    assert!(f["fix"].as_str().unwrap().starts_with("setpci -s 0000:17:01.0 ECAP_ACS+0x6.w=0000"));
    assert_eq!((rc, rc2), (0, 1), "the ACS error fails doctor");
    // The snapshot carries it, and fleet compares it.
    let o = ibwire(&["probe", "--root", t.path().to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let b = v["bridges"].as_array().unwrap().iter().find(|b| b["bdf"] == "0000:17:01.0").unwrap().clone();
    assert_eq!((b["acs"].as_str(), b["acs_ctrl"].as_u64()), (Some("read"), Some(0x1d)));
}

#[test]
fn a_translating_iommu_is_named_and_passthrough_is_not() {
    for (pt, named) in [(false, true), (true, false)] {
        let t = tree_dir();
        let tree = ibwire_fixture::story(t.path());
        tree.iommu(40, pt);
        let (_, fs, _) = doctor(t.path(), &[], &[]);
        let has = fs
            .iter()
            .any(|f| f["subject"] == "IOMMU" && f["message"].as_str().unwrap().contains("translates DMA (40 groups"));
        assert_eq!(has, named, "passthrough {pt}: {fs:#?}");
    }
    // Groups whose type cannot be read and a command line without iommu=pt: unknown, not
    // "translating" (the kernel's default domain may be passthrough).
    let t = tree_dir();
    let tree = ibwire_fixture::story(t.path());
    tree.iommu(40, false);
    for g in 0..40 {
        std::fs::remove_file(t.path().join(format!("sys/kernel/iommu_groups/{g}/type"))).unwrap();
    }
    let (_, fs, _) = doctor(t.path(), &[], &[]);
    assert!(!fs.iter().any(|f| f["subject"] == "IOMMU"), "no evidence, no finding: {fs:#?}");
}

/// Two routes to the master with the same prefix and metric on different interfaces: named.
#[test]
fn a_route_tie_towards_the_master_is_named_with_both_interfaces() {
    let t = tree_dir();
    let mut tree = ibwire_fixture::Tree::new(t.path());
    for (i, n) in ["ens1", "ens2"].iter().enumerate() {
        let nic = tree.pci(&["pci0000:00".into(), format!("0000:00:0{}.0", i + 3)], 0x8086, 0x1592, 0x020000, 0);
        tree.netdev(&ibwire_fixture::NetDev::eth(n), Some(&nic));
        tree.addr(n, &format!("10.{}.0.5/24", i + 1));
        tree.route(n, "10.9.0.0/16", None, 100);
    }
    tree.finish();
    let (_, fs, _) = doctor(t.path(), &[], &["--master-addr", "10.9.1.1"]);
    let f = find(&fs, "NCCL_SOCKET_IFNAME", "tie on ens1 and ens2 (same prefix and metric)");
    assert_eq!(f["severity"], "warning");
    assert!(f["fix"].as_str().unwrap().contains("bootstrap_interface"), "{f}");
    // A configured interface settles it: no warning.
    let cfg = t.path().join("c.yaml");
    std::fs::write(&cfg, "bootstrap_interface: ens2\n").unwrap();
    let (_, fs, _) = doctor(t.path(), &[], &["--master-addr", "10.9.1.1", "--config", cfg.to_str().unwrap()]);
    assert!(!fs.iter().any(|f| f["message"].as_str().unwrap().contains("tie on")), "{fs:#?}");
}

/// NCCL 2.27–2.30 settings and enroot 3's MELLANOX_MOUNT_DRIVER, each explained.
#[test]
fn current_nccl_settings_are_understood() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let (_, fs, _) = doctor(t.path(), &[("NCCL_NET_PLUGIN", "aws-ofi,gIB")], &[]);
    find(&fs, "NCCL_NET_PLUGIN", "NCCL ≥ 2.27 tries aws-ofi, then gIB in order");
    let (_, fs, _) = doctor(t.path(), &[("NCCL_NET_PLUGIN", "None")], &[]);
    find(&fs, "NCCL_NET_PLUGIN", "no external network plugin");
    let (_, fs, _) = doctor(t.path(), &[("NCCL_ENV_PLUGIN", "libnccl-env-site.so")], &[]);
    assert_eq!(find(&fs, "NCCL_ENV_PLUGIN", "ibwire (and this report) cannot see those values")["severity"], "warning");
    let (_, fs, _) = doctor(t.path(), &[("NCCL_IGNORE_NET_MISMATCH", "0")], &[]);
    find(&fs, "NCCL_IGNORE_NET_MISMATCH", "Detected mixed local Net device counts across ranks");
    let (_, fs, _) = doctor(t.path(), &[("NCCL_IGNORE_NET_MISMATCH", "1")], &[]);
    assert_eq!(find(&fs, "NCCL_IGNORE_NET_MISMATCH", "NVIDIA/nccl#2428")["severity"], "warning");
    let (_, fs, _) = doctor(t.path(), &[("MELLANOX_MOUNT_DRIVER", "y")], &[]);
    let f = find(&fs, "MELLANOX_MOUNT_DRIVER", "enroot 4 dropped it");
    assert!(f["fix"].as_str().unwrap().contains("rdma-core"));
}

/// verify maps completion error 4 to ACS/IOMMU and says what this node's own PCIe shows.
#[test]
fn verify_checks_this_nodes_acs_on_completion_error_4() {
    let real =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify-corpus/nccl-214-completion-error-4-gdr.log");
    let t = tree_dir();
    let tree = ibwire_fixture::story(t.path());
    // The posted line, as the story node (gpu-001) would have written it: only a log from this
    // node makes this node's bridges evidence.
    let log = t.path().join("here.log");
    let line = std::fs::read_to_string(&real).unwrap();
    std::fs::write(&log, format!("gpu-001:4242:4300 [0] {}", line.trim_start())).unwrap();
    let from = |l: &Path| {
        stdout(&ibwire(&["verify", "--root", t.path().to_str().unwrap(), "--from-log", l.to_str().unwrap()]))
    };
    let run = || from(&log);
    assert!(!from(&real).contains(" here "), "a log from elsewhere says nothing about this node: {}", from(&real));
    assert!(run().contains("ACS here not readable (run as root to check it)"), "{}", run());
    for e in std::fs::read_dir(t.path().join("sys/bus/pci/devices")).unwrap() {
        tree.config_space_4k(&e.unwrap().file_name().to_string_lossy(), None);
    }
    assert!(run().contains("here ACS is off on the GPU↔HCA paths: look at the peer node"), "{}", run());
    tree.config_space_4k("0000:17:01.0", Some(0x0004));
    assert!(run().contains("here ACS redirects at 0000:17:01.0 (0x0004)"), "{}", run());
}

#[test]
fn a_trees_nccl_conf_link_out_of_the_tree_is_not_followed() {
    // hostile round 4 #7: `doctor --root TREE` followed TREE/etc/nccl.conf out of the tree and
    // printed the outside file's KEY=VALUE lines.
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.conf"), "NCCL_SOCKET_IFNAME=hunter2\n").unwrap();
    std::fs::create_dir_all(t.path().join("etc")).unwrap();
    let conf = t.path().join("etc/nccl.conf");
    let _ = std::fs::remove_file(&conf);
    std::os::unix::fs::symlink(outside.path().join("secret.conf"), &conf).unwrap();
    let doctor = || {
        Command::new(bin()).args(["doctor", "--root"]).arg(t.path()).env_clear().env("HOME", t.path()).output().unwrap()
    };
    let o = doctor();
    assert!(!stdout(&o).contains("hunter2") && !stderr(&o).contains("hunter2"), "{}{}", stdout(&o), stderr(&o));
    // The tree's own file is read.
    std::fs::remove_file(&conf).unwrap();
    std::fs::write(&conf, "NCCL_IB_DISABLE=1\n").unwrap();
    let o = doctor();
    assert!(stdout(&o).contains("NCCL_IB_DISABLE"), "{}", stdout(&o));
}
