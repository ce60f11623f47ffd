//! `ibwire fleet` on snapshots made from the story node with one change at a time, a 64-node
//! set with two independent outliers, and bad input.

use crate::common;
use common::*;
use ibwire::probe::{self, Node, ProbeOptions};
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

fn story_node() -> &'static Node {
    static N: OnceLock<Node> = OnceLock::new();
    N.get_or_init(|| {
        let t = tree_dir();
        ibwire_fixture::story(t.path());
        probe::probe(&ProbeOptions::at(t.path()))
    })
}

fn write(dir: &Path, host: &str, change: impl FnOnce(&mut Node)) {
    let mut n = story_node().clone();
    n.hostname = Some(host.into());
    change(&mut n);
    fs::write(dir.join(format!("{host}.json")), serde_json::to_string(&n).unwrap()).unwrap();
}

fn fleet(args: &[&str]) -> (i32, Value, String) {
    let o = Command::new(bin()).arg("fleet").args(args).arg("--json").output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code().unwrap_or(-1), v, stderr(&o))
}

fn port<'a>(n: &'a mut Node, dev: &str) -> &'a mut ibwire::probe::RdmaPort {
    &mut n.rdma.iter_mut().find(|d| d.name == dev).unwrap().ports[0]
}

/// Four nodes, gpu-003 changed: exactly one fact differs, naming gpu-003 alone.
fn one_change(expect: &str, severity: &str, change: impl FnOnce(&mut Node)) -> String {
    let t = tempfile::tempdir().unwrap();
    for h in ["gpu-001", "gpu-002", "gpu-004"] {
        write(t.path(), h, |_| {});
    }
    write(t.path(), "gpu-003", change);
    let (rc, v, err) = fleet(&[t.path().to_str().unwrap()]);
    let d = v["report"]["differences"].as_array().unwrap_or_else(|| panic!("{expect}: {err}"));
    assert_eq!(d.len(), 1, "{expect}: {d:#?}");
    assert_eq!(d[0]["attribute"], expect);
    assert_eq!(d[0]["severity"], severity);
    assert_eq!(d[0]["groups"][0]["nodes"], "gpu-[001-002,004]");
    assert_eq!(d[0]["groups"][1]["nodes"], "gpu-003");
    // Any difference that changes what NCCL does is exit 1; firmware alone is not.
    assert_eq!(rc, if expect == "hca_firmware" { 0 } else { 1 }, "{expect}");
    d[0]["messages"][0].as_str().unwrap().to_string()
}

#[test]
fn each_cause_alone_names_its_node() {
    // what NCCL 2.30 no longer fails on (NCCL_IGNORE_NET_MISMATCH=1): an error, not a warning
    let m = one_change("healthy_hcas", "error", |n| {
        let p = port(n, "mlx5_6");
        p.state = Some(1);
        p.state_name = Some("DOWN".into());
    });
    assert!(m.starts_with("gpu-003 has healthy HCA ports 7, the other 3 nodes 8"), "{m}");
    assert!(m.contains("fix on gpu-003: mlx5_6 port 1: port state DOWN"), "{m}");
    let m = one_change("rate", "error", |n| port(n, "mlx5_6").rate = Some("200 Gb/sec (4X HDR)".into()));
    assert!(m.contains("200 Gb/sec (4X HDR), 400 Gb/sec (4X NDR)"), "{m}");
    let m = one_change("pcie", "warning", |n| {
        n.rdma.iter_mut().find(|d| d.name == "mlx5_6").unwrap().pci.as_mut().unwrap().link.current_width = Some(8)
    });
    assert!(m.contains("mlx5_6 x8 of x16"), "{m}");
    one_change("partition", "error", |n| {
        for d in n.rdma.iter_mut() {
            d.ports[0].pkey0 = Some(0x8002);
        }
    });
    one_change("subnet_prefix", "error", |n| {
        for d in n.rdma.iter_mut() {
            if let Some(g) = d.ports[0].gids.first_mut() {
                g.gid = g.gid.replacen("fe80", "fec0", 1);
            }
        }
    });
    one_change("hca_firmware", "warning", |n| {
        n.rdma.iter_mut().find(|d| d.name == "mlx5_6").unwrap().fw_ver = Some("28.40.1000".into())
    });
    one_change("nvidia_driver", "warning", |n| n.host.nvidia_driver = Some("560.35.03".into()));
    one_change("peermem", "warning", |n| n.host.peermem = None);
    one_change("memlock", "warning", |n| {
        n.host.memlock_unlimited = Some(false);
        n.host.memlock_bytes = Some(65536);
    });
    let m = one_change("gpu_count", "error", |n| {
        n.gpus.pop();
    });
    assert!(m.starts_with("gpu-003 has GPUs 7, the other 3 nodes 8"), "{m}");
    let m = one_change("bootstrap", "error", |n| {
        let i = n.net.iter_mut().find(|i| i.name == "eno8303").unwrap();
        i.addrs = vec!["198.21.152.17/24".parse().unwrap()];
    });
    assert!(m.contains("eno8303 (198.21.152.0/24)") && m.contains("eno8303 (198.21.151.0/24)"), "{m}");
}

#[test]
fn sixty_four_nodes_with_two_independent_outliers() {
    let t = tempfile::tempdir().unwrap();
    for i in 1..=64 {
        let h = format!("gpu-{i:03}");
        write(t.path(), &h, |n| match i {
            17 => {
                let p = port(n, "mlx5_6");
                p.state = Some(1);
                p.state_name = Some("DOWN".into());
            }
            42 => n.host.peermem = None,
            _ => {}
        });
    }
    let (rc, v, _) = fleet(&[t.path().to_str().unwrap()]);
    assert_eq!(rc, 1, "a port down and a node without GPUDirect change what NCCL does");
    let d = v["report"]["differences"].as_array().unwrap();
    let got: Vec<(String, String, String)> = d
        .iter()
        .map(|x| {
            (
                x["attribute"].as_str().unwrap().into(),
                x["groups"][0]["nodes"].as_str().unwrap().into(),
                x["groups"][1]["nodes"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("healthy_hcas".into(), "gpu-[001-016,018-064]".into(), "gpu-017".into()),
            ("peermem".into(), "gpu-[001-041,043-064]".into(), "gpu-042".into()),
        ]
    );
    // The human table: one row per value, nothing for what agrees beyond the summary.
    let o = Command::new(bin()).arg("fleet").arg(t.path()).output().unwrap();
    let text = stdout(&o);
    // the port down an error (NCCL 2.30 runs on at that node's pace without a word), peermem a warning
    assert!(text.starts_with("64 nodes: 12 facts agree, 2 differ (1 error, 1 warning)"), "{text}");
    assert!(text.contains("gpu-[001-016,018-064] (63)") && text.contains("gpu-017 (1)"), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with("error: gpu-017")).count(), 1, "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with("warning: gpu-042")).count(), 1, "{text}");
}

#[test]
fn bad_input_is_one_line_each_and_the_rest_is_compared() {
    let t = tempfile::tempdir().unwrap();
    for h in ["gpu-001", "gpu-002"] {
        write(t.path(), h, |_| {});
    }
    // truncated
    let full = fs::read_to_string(t.path().join("gpu-001.json")).unwrap();
    fs::write(t.path().join("gpu-009.json"), &full[..full.len() / 2]).unwrap();
    // the same host twice
    fs::write(t.path().join("zz-copy.json"), &full).unwrap();
    // another version: a schema this ibwire does not read, and a schema-1 snapshot
    let mut v: Value = serde_json::from_str(&full).unwrap();
    v["schema"] = 7.into();
    v["hostname"] = "gpu-007".into();
    fs::write(t.path().join("gpu-007.json"), v.to_string()).unwrap();
    let mut old: Value = serde_json::from_str(&full).unwrap();
    old["schema"] = 1.into();
    old["hostname"] = "gpu-003".into();
    for d in old["rdma"].as_array_mut().unwrap() {
        for p in d["ports"].as_array_mut().unwrap() {
            p.as_object_mut().unwrap().remove("pkey0");
        }
    }
    fs::write(t.path().join("gpu-003.json"), old.to_string()).unwrap();
    let (rc, v, err) = fleet(&[t.path().to_str().unwrap()]);
    assert_eq!(rc, 1, "unreadable input is an error: {err}");
    assert_eq!(err.lines().count(), 3, "{err}");
    assert!(err.contains("gpu-009.json") && err.contains("EOF"), "{err}");
    assert!(err.contains("a second snapshot of host gpu-001"), "{err}");
    assert!(err.contains("schema 7 is not supported"), "{err}");
    assert_eq!(v["report"]["nodes"], 3, "gpu-001, gpu-002 and the migrated gpu-003");
    assert!(v["report"]["differences"].as_array().unwrap().is_empty(), "{v:#}");
    // The migrated snapshot does not know the P_Key at index 0: said, not taken for a difference.
    let unknown = v["report"]["unknown"].to_string();
    assert!(unknown.contains("P_Key at index 0") && unknown.contains("gpu-003"), "{unknown}");
}

#[test]
fn snapshots_on_standard_input() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let mut all = String::new();
    for h in ["n1", "n2", "n3"] {
        write(t.path(), h, |n| {
            if h == "n3" {
                n.host.peermem = None
            }
        });
        all.push_str(&fs::read_to_string(t.path().join(format!("{h}.json"))).unwrap());
        all.push('\n');
    }
    let mut c = Command::new(bin())
        .args(["fleet", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(all.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["report"]["nodes"], 3);
    assert_eq!(v["report"]["differences"][0]["groups"][1]["nodes"], "n3");
}

/// verify's cross-node view: logs of several nodes, grouped by what each node's NCCL reported.
#[test]
fn verify_groups_nodes_by_what_their_nccl_reported() {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let ib =
        fs::read_to_string(fx.join("real/nccl-logs/h100-roce-2node-tpgds-aihub0008-aws-ofi-plugin-fallback-to-ib.log"))
            .unwrap();
    let sock = fs::read_to_string(fx.join("h200-2gpu-guard/3-expect-socket-nccl.log")).unwrap();
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("all.log");
    fs::write(&f, format!("{ib}\n{sock}")).unwrap();
    let tree = t.path().join("tree");
    ibwire_fixture::plain(&tree);
    let o = ibwire(&["verify", "--root", tree.to_str().unwrap(), "--from-log", f.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", stderr(&o)));
    let groups = v["per_node"].as_array().unwrap();
    let sock_group = groups.iter().find(|g| g["nccl"].as_str().unwrap().starts_with("Socket")).expect("a Socket node");
    assert_eq!(sock_group["nodes"], "vm");
    let ib_group = groups.iter().find(|g| g["nccl"].as_str().unwrap().starts_with("IB, GDRDMA")).expect("an IB node");
    assert!(ib_group["count"].as_u64().unwrap() >= 1, "{groups:#?}");
}

/// RoCE: the active MTU follows the interface's; one node left at 1500 among jumbo-frame ones.
#[test]
fn a_roce_node_with_a_smaller_mtu_is_named() {
    use ibwire_fixture::{NetDev, Tree};
    let t = tree_dir();
    let mut tree = Tree::new(t.path());
    for i in 0..2u8 {
        tree.roce_rail(i, 9000);
    }
    tree.netdev(&NetDev::eth("eno1"), None);
    tree.addr("eno1", "192.168.0.2/24");
    tree.route("eno1", "0.0.0.0/0", Some("192.168.0.1"), 0);
    tree.finish();
    let base = probe::probe(&ProbeOptions::at(t.path()));
    let d = tempfile::tempdir().unwrap();
    for h in ["r1", "r2", "r3"] {
        let mut n = base.clone();
        n.hostname = Some(h.into());
        if h == "r2" {
            n.net.iter_mut().find(|i| i.name == "ens2np0").unwrap().mtu = Some(1500);
        }
        fs::write(d.path().join(format!("{h}.json")), serde_json::to_string(&n).unwrap()).unwrap();
    }
    let (_, v, err) = fleet(&[d.path().to_str().unwrap()]);
    let diffs = v["report"]["differences"].as_array().unwrap_or_else(|| panic!("{err}"));
    assert_eq!(diffs.len(), 1, "{diffs:#?}");
    assert_eq!(diffs[0]["attribute"], "roce_mtu");
    assert_eq!(diffs[0]["groups"][1]["nodes"], "r2");
    assert_eq!(diffs[0]["groups"][1]["value"], "1500, 9000");
}

#[test]
fn a_downtrained_port_is_named_with_its_hca_and_port() {
    let t = tempfile::tempdir().unwrap();
    for i in 1..=6 {
        let h = format!("gpu-{i:03}");
        write(t.path(), &h, |n| {
            if i == 5 {
                let p = port(n, "mlx5_4");
                p.rate = Some("200 Gb/sec (2X NDR)".into());
                p.rate_gbps = Some(200.0);
            }
        });
    }
    let (rc, v, _) = fleet(&[t.path().to_str().unwrap()]);
    assert_eq!(rc, 1);
    let d = v["report"]["differences"].as_array().unwrap();
    let rate = d.iter().find(|x| x["attribute"] == "rate").expect("rate differs");
    let m = rate["messages"][0].as_str().unwrap();
    assert!(m.contains("gpu-005 mlx5_4:1 200 Gb/sec (2X NDR)"), "{m}");
}

/// ACS, the IOMMU and DMA-BUF readiness are compared once the snapshots record them (root
/// probes, current schema); a node with ACS redirect on a GPU↔HCA path is an error there.
#[test]
fn acs_iommu_and_dmabuf_differences_name_the_node() {
    use ibwire::probe::{Acs, Bridge};
    fn known(n: &mut Node) {
        let mut bdfs: Vec<String> = n
            .gpus
            .iter()
            .flat_map(|g| g.pci.bridges.clone())
            .chain(n.rdma.iter().filter_map(|d| d.pci.as_ref()).flat_map(|p| p.bridges.clone()))
            .collect();
        bdfs.sort();
        bdfs.dedup();
        n.bridges = bdfs.into_iter().map(|bdf| Bridge { bdf, acs: Acs::Read, acs_ctrl: Some(0) }).collect();
        n.host.kernel = Some("6.8.0-45-generic".into());
        n.host.nvidia_module = Some("open".into());
        n.host.iommu_groups = Some(0);
    }
    let case = |expect: &str, severity: &str, change: &dyn Fn(&mut Node)| -> String {
        let t = tempfile::tempdir().unwrap();
        for h in ["gpu-001", "gpu-002", "gpu-004"] {
            write(t.path(), h, known);
        }
        write(t.path(), "gpu-003", |n| {
            known(n);
            change(n)
        });
        let (rc, v, err) = fleet(&[t.path().to_str().unwrap()]);
        let d = v["report"]["differences"].as_array().unwrap_or_else(|| panic!("{expect}: {err}"));
        assert_eq!(d.len(), 1, "{expect}: {d:#?}");
        assert_eq!((d[0]["attribute"].as_str(), d[0]["severity"].as_str()), (Some(expect), Some(severity)));
        assert_eq!(d[0]["groups"][1]["nodes"], "gpu-003");
        assert_eq!(rc, 1);
        d[0]["messages"][0].as_str().unwrap().to_string()
    };
    let m = case("acs", "error", &|n| {
        n.bridges.iter_mut().find(|b| b.bdf == "0000:17:01.0").unwrap().acs_ctrl = Some(0x001d)
    });
    assert!(m.contains("gpu-003 has ACS redirect on GPU↔HCA paths on at 0000:17:01.0"), "{m}");
    let m = case("dmabuf", "warning", &|n| n.host.nvidia_module = Some("proprietary".into()));
    assert!(m.contains("no: the proprietary NVIDIA kernel module is loaded"), "{m}");
    let m = case("iommu", "warning", &|n| {
        n.host.iommu_groups = Some(64);
        n.host.iommu_passthrough = Some(false);
    });
    assert!(m.contains("gpu-003 has IOMMU translating, the other 3 nodes off"), "{m}");
}

#[test]
fn a_host_name_cannot_forge_lines_of_the_report() {
    // hostile round 4 #12: a newline in a snapshot's hostname reached the text report.
    let t = tempfile::tempdir().unwrap();
    for h in ["gpu-001", "gpu-002"] {
        write(t.path(), h, |_| {});
    }
    let mut n = story_node().clone();
    n.hostname = Some("gpu-003\n5 nodes: all the same, 0 differ\u{1b}[2J".into());
    n.gpus.pop(); // a difference, so that the report names this node
    fs::write(t.path().join("evil.json"), serde_json::to_string(&n).unwrap()).unwrap();
    let files: Vec<String> = ["gpu-001", "gpu-002", "evil"]
        .iter()
        .map(|h| t.path().join(format!("{h}.json")).display().to_string())
        .collect();
    let o = Command::new(bin()).arg("fleet").args(&files).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.lines().any(|l| l.starts_with("5 nodes")), "{out}");
    assert!(!out.contains('\u{1b}'), "{out}");
    assert!(out.contains("gpu-003\\n5 nodes"), "the node is named, escaped: {out}");
}

/// Two nodes, one with `change`: the difference's named node, its message, and the exit code.
fn pair(faulty: &str, change: impl FnOnce(&mut Node)) -> (i32, String, String) {
    let t = tempfile::tempdir().unwrap();
    for h in ["gpu-001", "gpu-002"] {
        if h == faulty {
            continue;
        }
        write(t.path(), h, |_| {});
    }
    write(t.path(), faulty, change);
    let (rc, v, err) = fleet(&[t.path().to_str().unwrap()]);
    let d = v["report"]["differences"].as_array().unwrap_or_else(|| panic!("{err}"));
    assert_eq!(d.len(), 1, "{d:#?}");
    (rc, d[0]["groups"][1]["nodes"].as_str().unwrap().to_string(), d[0]["messages"][0].as_str().unwrap().to_string())
}

#[test]
fn in_a_job_of_two_the_node_with_the_fault_is_named_not_the_healthy_one() {
    // With two nodes there is no majority: the majority rule named the healthy node whenever the
    // faulty one sorted first (issue 39). Each port fault, on either node.
    for faulty in ["gpu-001", "gpu-002"] {
        let (rc, named, m) = pair(faulty, |n| {
            let p = port(n, "mlx5_3");
            p.state = Some(1);
            p.state_name = Some("DOWN".into());
        });
        assert_eq!((rc, named.as_str()), (1, faulty), "{m}");
        assert!(m.starts_with(&format!("{faulty} has healthy HCA ports 7, the other 1 node 8")), "{m}");
        assert!(m.contains(&format!("fix on {faulty}: mlx5_3 port 1: port state DOWN")), "{m}");
        let (rc, named, m) = pair(faulty, |n| port(n, "mlx5_6").lid = Some(0));
        assert_eq!((rc, named.as_str()), (1, faulty), "LID 0: {m}");
        let (rc, named, m) = pair(faulty, |n| port(n, "mlx5_6").rate = Some("200 Gb/sec (4X HDR)".into()));
        assert_eq!((rc, named.as_str()), (1, faulty), "downtrained: {m}");
        assert!(m.contains(&format!("{faulty} mlx5_6:1 200 Gb/sec")), "{m}");
        let (rc, named, m) = pair(faulty, |n| {
            n.rdma.iter_mut().find(|d| d.name == "mlx5_6").unwrap().pci.as_mut().unwrap().link.current_width = Some(8)
        });
        assert_eq!((rc, named.as_str()), (1, faulty), "narrowed: {m}");
    }
}
