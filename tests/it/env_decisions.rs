//! The decisions behind `ibwire env`, table-driven over fixture nodes (issue: env).

use crate::common;
use common::*;
use ibwire::config::{Config, EmptyPolicy};
use ibwire::plan::{self, Intent, Master, Severity, Source};
use ibwire::probe::{self, Node, ProbeOptions};
use ibwire_fixture::{self as fixture, under_root_port, NetDev, Port, Tree};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn node(build: impl FnOnce(&Path)) -> (tempfile::TempDir, Node) {
    let t = tree_dir();
    build(t.path());
    let n = probe::probe(&ProbeOptions::at(t.path()));
    (t, n)
}

fn master(ip: &str) -> Option<Master> {
    Some(Master { name: ip.into(), ip: ip.parse().unwrap() })
}

fn val(p: &plan::Plan, k: &str) -> Option<String> {
    p.get(k).map(|s| s.value.clone())
}

fn excluded(p: &plan::Plan, dev: &str) -> String {
    p.excluded.iter().find(|e| e.device == dev).map(|e| e.reason.clone()).unwrap_or_default()
}

const STORY_HCA: &str = "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1";

#[test]
fn story_node_every_master_case() {
    let (_t, n) = node(|r| drop(fixture::story(r)));
    // (master, expected bootstrap interface, rule words)
    let cases = [
        (None, "eno8303", "default-route interface"),
        (master("198.21.151.40"), "eno8303", "route 198.21.151.0/24"),
        (master("198.21.3.40"), "bond0.2102", "route 198.21.3.0/24"),
        (master("8.8.8.8"), "eno8303", "default route via 198.21.151.1"),
        (master("198.21.3.17"), "bond0.2102", "this node's own address"),
    ];
    for (m, want_if, why) in cases {
        let p = plan::decide(&n, &Intent { master: m.clone(), ..Default::default() });
        assert_eq!(val(&p, "NCCL_SOCKET_IFNAME").as_deref(), Some(format!("={want_if}").as_str()), "{m:?}");
        assert_eq!(val(&p, "GLOO_SOCKET_IFNAME").as_deref(), Some(want_if));
        assert_eq!(val(&p, "NCCL_SOCKET_FAMILY").as_deref(), Some("AF_INET"));
        assert!(
            p.get("NCCL_SOCKET_IFNAME").unwrap().reason.contains(why),
            "{}",
            p.get("NCCL_SOCKET_IFNAME").unwrap().reason
        );
        assert_eq!(val(&p, "NCCL_IB_HCA").as_deref(), Some(STORY_HCA), "{m:?}");
        assert!(excluded(&p, "mlx5_bond_0").contains("LID 0x0"), "{:?}", p.excluded);
        assert!(excluded(&p, "mlx5_bond_0").contains("EINVAL"));
        // Decisions (the hook's EINVAL warning) ask the kind, not these words.
        let kind = |d: &str| p.excluded.iter().find(|e| e.device == d).map(|e| e.kind);
        assert_eq!(kind("mlx5_bond_0"), Some(plan::ExclusionKind::LidZero));
        assert_eq!(val(&p, "CUDA_VISIBLE_DEVICES").as_deref(), Some("0,1,2,3,4,5,6,7"));
        assert_eq!(val(&p, "CUDA_DEVICE_ORDER").as_deref(), Some("PCI_BUS_ID"));
        assert_eq!(p.nproc_per_node, 8);
        assert!(!p.has_errors(), "{:?}", p.findings);
    }
}

#[test]
fn master_unreachable_or_down_interface_is_an_error() {
    let (t, n) = node(|r| drop(fixture::story(r)));
    // docker0 is down: a master on its subnet is reachable only through a down interface.
    let p = plan::decide(&n, &Intent { master: master("172.17.0.5"), ..Default::default() });
    assert!(
        p.findings.iter().any(|f| f.severity == Severity::Error && f.message.contains("not up")),
        "{:?}",
        p.findings
    );
    // Take the default route away: 8.8.8.8 is then unroutable.
    std::fs::write(
        t.path().join("proc/net/route"),
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n",
    )
    .unwrap();
    let n = probe::probe(&ProbeOptions::at(t.path()));
    let p = plan::decide(&n, &Intent { master: master("8.8.8.8"), ..Default::default() });
    assert!(p.get("NCCL_SOCKET_IFNAME").is_none());
    assert!(p.findings.iter().any(|f| f.severity == Severity::Error && f.message.contains("no interface routes")));
}

#[test]
fn a_master_name_that_resolves_to_loopback_is_named_as_such() {
    let (_t, n) = node(|r| drop(fixture::story(r)));
    let m = Master { name: "gpu-001".into(), ip: "127.0.1.1".parse().unwrap() };
    let p = plan::decide(&n, &Intent { master: Some(m), ..Default::default() });
    let f = p.findings.iter().find(|f| f.severity == Severity::Error).expect("an error");
    assert!(f.message.contains("gpu-001 resolves to 127.0.1.1, a loopback address"), "{}", f.message);
    assert!(f.fix.as_deref().unwrap().contains("/etc/hosts"), "{:?}", f.fix);
    assert!(!f.message.contains("lo has no"), "{}", f.message);
}

#[test]
fn a_one_node_job_whose_master_resolves_to_loopback_is_fine() {
    // Under real pyxis every one-node job warned "other nodes cannot reach it": the job's own
    // host was its master, and Debian's /etc/hosts maps that name to 127.0.1.1.
    let (_t, n) = node(|r| drop(fixture::story(r)));
    let m = Master { name: "gpu-001".into(), ip: "127.0.1.1".parse().unwrap() };
    let env = |k: &str, v: &str| [(k.to_string(), v.to_string())].into_iter().collect();
    for k in ["SLURM_JOB_NUM_NODES", "SLURM_NNODES"] {
        let p = plan::decide(&n, &Intent { master: Some(m.clone()), env: env(k, "1"), ..Default::default() });
        assert!(!p.findings.iter().any(|f| f.severity == Severity::Error), "{k}: {:?}", p.findings);
        assert!(p.bootstrap_if.is_some(), "{k}: a bootstrap interface is chosen");
    }
    // over two nodes it is the error it was
    let p = plan::decide(&n, &Intent { master: Some(m), env: env("SLURM_JOB_NUM_NODES", "2"), ..Default::default() });
    assert!(p.findings.iter().any(|f| f.severity == Severity::Error && f.message.contains("a loopback address")));
}

/// A RoCE node: 4 single-port ConnectX RoCE rails, and mlx5_bond_0 (Ethernet, LID 0) on bond0
/// which carries the management network.
fn roce_node(r: &Path) {
    let mut t = Tree::new(r);
    t.numa(0, "0-31");
    for i in 0..4u8 {
        t.roce_rail(i, 1500);
    }
    let f0 = under_root_port(0x90, &["0000:91:00.0".into()]);
    let f1 = under_root_port(0x90, &["0000:91:00.1".into()]);
    let p0 = t.hca("mlx5_bond_0", &f0, 0, &[Port::roce(1, "bond0", Some("192.168.7.5"))], 4);
    let p1 = t.pci(&f1, 0x15b3, 0x101d, 0x020000, 0);
    for (nd, pci) in [("ens9f0np0", &p0), ("ens9f1np1", &p1)] {
        let mut d = NetDev::eth(nd);
        d.master = Some("bond0".into());
        t.netdev(&d, Some(pci));
    }
    let mut bond = NetDev::eth("bond0");
    bond.bonding = true;
    bond.lower = vec!["ens9f0np0".into(), "ens9f1np1".into()];
    t.netdev(&bond, None);
    t.addr("bond0", "192.168.7.5/24");
    t.route("bond0", "0.0.0.0/0", Some("192.168.7.1"), 0);
    t.finish();
}

#[test]
fn roce_bond_lid0_is_normal_but_management_bond_is_excluded() {
    let (_t, n) = node(roce_node);
    let p = plan::decide(&n, &Intent::default());
    assert_eq!(val(&p, "NCCL_IB_HCA").as_deref(), Some("=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"));
    let why = excluded(&p, "mlx5_bond_0");
    assert!(why.contains("bootstrap/management network (bond0)"), "{why}");
    assert!(!why.contains("LID"), "LID 0 is never a reason on Ethernet: {why}");
    let kind = p.excluded.iter().find(|e| e.device == "mlx5_bond_0").map(|e| e.kind);
    assert_eq!(kind, Some(plan::ExclusionKind::BootstrapCarrier));
    // Alone, the RoCE bond with LID 0 is healthy.
    let only = plan::hca::select(
        &n,
        &plan::hca::Policy { include: &["mlx5_bond_0".to_string()], exclude: &[], bootstrap_if: None },
    );
    assert_eq!(only.value.as_deref(), Some("=mlx5_bond_0:1"));
}

#[test]
fn roce_port_without_ipv4_gid_is_excluded() {
    let (_t, n) = node(|r| {
        let mut t = Tree::new(r);
        let c0 = under_root_port(0x10, &["0000:11:00.0".into()]);
        let c1 = under_root_port(0x20, &["0000:21:00.0".into()]);
        let p0 = t.hca("mlx5_0", &c0, 0, &[Port::roce(1, "ens1np0", Some("10.0.0.5"))], 0);
        let p1 = t.hca("mlx5_1", &c1, 0, &[Port::roce(1, "ens2np0", None)], 1);
        t.netdev(&NetDev::eth("ens1np0"), Some(&p0));
        t.netdev(&NetDev::eth("ens2np0"), Some(&p1));
        t.addr("ens1np0", "10.0.0.5/24");
        t.finish();
    });
    let p = plan::decide(&n, &Intent::default());
    assert_eq!(val(&p, "NCCL_IB_HCA").as_deref(), Some("=mlx5_0:1"));
    assert!(excluded(&p, "mlx5_1").contains("no RoCE v2 GID with an IPv4 address"), "{:?}", p.excluded);
}

#[test]
fn dual_port_hca_with_port_2_down() {
    let (_t, n) = node(|r| {
        let mut t = Tree::new(r);
        let c = under_root_port(0xc3, &["0000:c4:00.0".into()]);
        // the fixture ib/rdma-link-ib-dualport-port2-down: device named ibp195s0, port 2 POLLING
        let mut down = Port::ib(2, 0).down();
        down.phys = "2: Polling";
        let pci = t.hca("ibp195s0", &c, 0, &[Port::ib(1, 2), down], 0);
        t.netdev(&NetDev::ipoib("ibp195s0"), Some(&pci));
        t.netdev(&NetDev::eth("eno1"), None);
        t.addr("eno1", "10.9.0.2/24");
        t.finish();
    });
    let p = plan::decide(&n, &Intent::default());
    assert_eq!(val(&p, "NCCL_IB_HCA").as_deref(), Some("=ibp195s0:1"));
    let e = p.excluded.iter().find(|e| e.port == Some(2)).unwrap();
    assert!(e.reason.contains("DOWN") && e.reason.contains("not ACTIVE"), "{}", e.reason);
}

/// 8 IB NDR HCAs (renamed mlx5_ib0..7) and 4 Ethernet RoCE ports (mlx5_eth0..3, two down), as in
/// topo/h100-ib-8x-ndr-plus-5eth-renamed-mlx5_ib-mlx5_eth.txt: GPU pairs share a switch with
/// their IB HCAs; the Ethernet NICs sit on another root complex.
fn mixed_node(r: &Path) {
    let mut t = Tree::new(r);
    t.numa(0, "0-55,112-167");
    t.numa(1, "56-111,168-223");
    for i in 0..8usize {
        let (g, nic) = fixture::story_chains(i);
        let numa = if i < 4 { 0 } else { 1 };
        t.gpu(&g, numa, 0x2330);
        t.hca(&format!("mlx5_ib{i}"), &nic, numa, &[Port::ib(1, 0x40 + i as u32)], i as u32);
    }
    for j in 0..4u8 {
        let c = under_root_port(0xe0, &[format!("0000:e1:00.{j}")]);
        let nd = format!("eth{j}");
        let port =
            if j < 2 { Port::roce(1, &nd, Some(&format!("10.1.{j}.3"))) } else { Port::roce(1, &nd, None).down() };
        let pci = t.hca(&format!("mlx5_eth{j}"), &c, 1, &[port], 8 + j as u32);
        let d = if j < 2 { NetDev::eth(&nd) } else { NetDev::eth(&nd).down() };
        t.netdev(&d, Some(&pci));
        if j < 2 {
            t.addr(&nd, &format!("10.1.{j}.3/24"));
        }
    }
    t.netdev(&NetDev::eth("eno1"), None);
    t.addr("eno1", "10.2.0.3/16");
    t.route("eno1", "0.0.0.0/0", Some("10.2.0.1"), 0);
    t.finish();
}

#[test]
fn mixed_fabric_keeps_the_gpu_affine_link_layer() {
    let (_t, n) = node(mixed_node);
    let p = plan::decide(&n, &Intent::default());
    let want: Vec<String> = (0..8).map(|i| format!("mlx5_ib{i}:1")).collect();
    assert_eq!(val(&p, "NCCL_IB_HCA").unwrap(), format!("={}", want.join(",")));
    for j in 0..2 {
        let why = excluded(&p, &format!("mlx5_eth{j}"));
        assert!(why.contains("Ethernet link layer") && why.contains("8 GPU-affine"), "{why}");
    }
    for j in 2..4 {
        assert!(excluded(&p, &format!("mlx5_eth{j}")).contains("not ACTIVE"));
    }
}

#[test]
fn node_without_rdma_runs_on_sockets_with_a_finding() {
    let (_t, n) = node(|r| drop(fixture::plain(r)));
    let p = plan::decide(&n, &Intent::default());
    assert!(p.get("NCCL_IB_HCA").is_none(), "never an empty NCCL_IB_HCA");
    let f = p.findings.iter().find(|f| f.subject == "NCCL_IB_HCA").unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.message.contains("TCP sockets"));
    assert_eq!(val(&p, "NCCL_SOCKET_IFNAME").as_deref(), Some("=eth0"));
    assert!(p.get("CUDA_VISIBLE_DEVICES").is_none());
    assert_eq!(p.nproc_per_node, 1);
    // with on_empty: fail the same node is an error
    let mut cfg = Config::default();
    cfg.hca.on_empty = Some(EmptyPolicy::Fail);
    let p = plan::decide(&n, &Intent { config: cfg, ..Default::default() });
    assert!(p.has_errors());
}

#[test]
fn sriov_vfs_are_dropped_when_their_pf_is_present() {
    let (_t, n) = node(|r| drop(fixture::scaled(r, 12, 0)));
    let p = plan::decide(&n, &Intent::default());
    assert_eq!(val(&p, "NCCL_IB_HCA").as_deref(), Some(STORY_HCA));
    for vf in ["mlx5_10", "mlx5_11", "mlx5_12"] {
        assert!(excluded(&p, vf).contains("SR-IOV virtual function of mlx5_"), "{vf}: {:?}", p.excluded);
    }
}

#[test]
fn pkey_outlier_is_excluded() {
    let (t, _) = node(|r| drop(fixture::story(r)));
    // mlx5_9's index 0 (the P_Key NCCL's QPs use) in another partition; mlx5_8 has an extra
    // partition further down its table, after a hole, which NCCL never uses: it stays.
    let port = |d: &str| t.path().join(format!("sys/class/infiniband/{d}/ports/1/pkeys"));
    std::fs::write(port("mlx5_9").join("0"), "0x8002\n").unwrap();
    std::fs::write(port("mlx5_8").join("5"), "0x8003\n").unwrap();
    for detail in [probe::Detail::Hook, probe::Detail::Standard, probe::Detail::All] {
        let mut o = ProbeOptions::at(t.path());
        o.detail = detail;
        let p = plan::decide(&probe::probe(&o), &Intent::default());
        assert!(
            excluded(&p, "mlx5_9").contains(
                "P_Key 0x8002 at index 0 (the one NCCL uses) is in another partition than the fabric's 0x7fff"
            ),
            "{detail:?}: {:?}",
            p.excluded
        );
        let hca = val(&p, "NCCL_IB_HCA").unwrap();
        assert!(!hca.contains("mlx5_9") && hca.contains("mlx5_8"), "{detail:?}: {hca}");
    }
}

#[test]
fn user_values_win_and_are_noted() {
    let (_t, n) = node(|r| drop(fixture::story(r)));
    let env: BTreeMap<String, String> =
        [("NCCL_IB_HCA", "mlx5_0,mlx5_3"), ("NCCL_SOCKET_IFNAME", "bond0.2102"), ("CUDA_VISIBLE_DEVICES", "2,3")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    let p = plan::decide(&n, &Intent { env, ..Default::default() });
    let h = p.get("NCCL_IB_HCA").unwrap();
    assert_eq!((h.value.as_str(), h.source), ("mlx5_0,mlx5_3", Source::User));
    assert!(h.reason.contains(STORY_HCA), "{}", h.reason);
    assert_eq!(p.get("NCCL_SOCKET_IFNAME").unwrap().source, Source::User);
    assert_eq!(val(&p, "CUDA_VISIBLE_DEVICES").as_deref(), Some("2,3"));
    assert_eq!(p.nproc_per_node, 2);
}

#[test]
fn slurm_gpu_allocations_are_validated() {
    let (_t, n) = node(|r| drop(fixture::story(r)));
    let env = |k: &str, v: &str| [(k.to_string(), v.to_string())].into_iter().collect::<BTreeMap<_, _>>();
    let p = plan::decide(&n, &Intent { env: env("SLURM_STEP_GPUS", "4,5,6,7"), ..Default::default() });
    assert_eq!(val(&p, "CUDA_VISIBLE_DEVICES").as_deref(), Some("4,5,6,7"));
    let p = plan::decide(&n, &Intent { env: env("CUDA_VISIBLE_DEVICES", "0,9"), ..Default::default() });
    assert!(p.findings.iter().any(|f| f.severity == Severity::Error && f.message.contains("does not have")));
    let p = plan::decide(&n, &Intent { env: env("CUDA_VISIBLE_DEVICES", "1,1"), ..Default::default() });
    assert!(p.findings.iter().any(|f| f.message.contains("twice")));
    let p = plan::decide(&n, &Intent { env: env("CUDA_VISIBLE_DEVICES", "$(reboot)"), ..Default::default() });
    assert!(p.get("CUDA_VISIBLE_DEVICES").is_none());
}

#[test]
fn config_include_exclude_and_pinned_interface() {
    let (_t, n) = node(|r| drop(fixture::story(r)));
    let mut cfg = Config::default();
    cfg.hca.exclude = vec!["mlx5_9".into()];
    cfg.bootstrap_interface = Some("bond0.3102".into());
    let p = plan::decide(&n, &Intent { config: cfg.clone(), ..Default::default() });
    assert!(excluded(&p, "mlx5_9").contains("hca.exclude"));
    assert_eq!(val(&p, "NCCL_SOCKET_IFNAME").as_deref(), Some("=bond0.3102"));
    // a pinned interface that does not route to the master is an error, not a silent choice
    let p = plan::decide(&n, &Intent { config: cfg, master: master("198.21.151.3"), ..Default::default() });
    assert!(p.findings.iter().any(|f| f.severity == Severity::Error && f.message.contains("does not route")));
}

#[test]
fn management_bond_excluded_when_master_is_on_it() {
    // Master on the IPoIB VLAN: bond0.2102 → bond0 → ibp73s0f0/1, which belong to mlx5_bond_0.
    let (_t, n) = node(|r| drop(fixture::story(r)));
    let mut cfg = Config::default();
    cfg.hca.include = vec![];
    let p = plan::decide(&n, &Intent { master: master("198.21.3.9"), config: cfg, ..Default::default() });
    assert!(excluded(&p, "mlx5_bond_0").contains("LID"), "the LID rule comes first");
    assert_eq!(val(&p, "NCCL_IB_HCA").as_deref(), Some(STORY_HCA));
}

#[test]
fn cli_sh_output_survives_hostile_values_through_eval() {
    let t = tree_dir();
    fixture::story(t.path());
    let hostile = "mlx5_0'\"$(touch /tmp/ibwire-pwned)`id`\\\n; rm -rf x";
    let o = std::process::Command::new(bin())
        .args(["env", "--root", t.path().to_str().unwrap()])
        .env("NCCL_IB_HCA", hostile)
        .env_remove("SLURM_JOB_NODELIST")
        .env_remove("MASTER_ADDR")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let script = format!("{}\nprintf %s \"$NCCL_IB_HCA\"", stdout(&o));
    let r = std::process::Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&r.stdout), hostile);
    assert!(!Path::new("/tmp/ibwire-pwned").exists());
    // enroot format refuses a value with a line break instead of injecting a second variable
    let o = std::process::Command::new(bin())
        .args(["env", "--root", t.path().to_str().unwrap(), "--format", "enroot"])
        .env("NCCL_IB_HCA", hostile)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("line break"), "{}", stderr(&o));
}

#[test]
fn cli_json_shape_and_explain() {
    let t = tree_dir();
    fixture::story(t.path());
    let o = std::process::Command::new(bin())
        .args([
            "env",
            "--root",
            t.path().to_str().unwrap(),
            "--format",
            "json",
            "--master-addr",
            "198.21.3.1",
            "--explain",
        ])
        .env_remove("NCCL_IB_HCA")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["env"]["NCCL_IB_HCA"], STORY_HCA);
    assert_eq!(v["env"]["NCCL_SOCKET_IFNAME"], "=bond0.2102");
    assert_eq!(v["excluded"][0]["device"], "mlx5_bond_0");
    assert!(v["decisions"].as_array().unwrap().iter().all(|d| d["reason"].is_string()));
    let e = flat(&stderr(&o));
    assert!(
        e.contains(
            "mlx5_bond_0 port 1 excluded: InfiniBand link layer with LID 0x0; NCCL would fail ibv_modify_qp (EINVAL)"
        ),
        "{e}"
    );
}

#[test]
fn cli_config_errors_are_one_line() {
    let t = tree_dir();
    fixture::plain(&t.path().join("root"));
    let cfg = t.path().join("bad.yaml");
    std::fs::write(&cfg, "hca:\n  exclud: [x]\n").unwrap();
    let o = ibwire(&["env", "--root", t.path().join("root").to_str().unwrap(), "--config", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("bad.yaml:2:3"), "{e}");
}

#[test]
fn a_loopback_master_is_a_one_node_job_and_refused_across_nodes() {
    // issue 39: `--master-addr 127.0.0.1` gave "lo has no IPv4 address that is not link-local,
    // but it is the route to the master" although lo has 127.0.0.1/8.
    let t = tree_dir();
    fixture::story(t.path());
    let root = t.path().to_str().unwrap();
    let o = ibwire(&["env", "--root", root, "--master-addr", "127.0.0.1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("NCCL_SOCKET_IFNAME='=lo'"), "{}", stdout(&o));
    let o = ibwire(&["launch", "--root", root, "--dry-run", "--master-addr", "127.0.0.1", "--", "x.py"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Two nodes and a loopback master (outside Slurm the default): refused, with the fix.
    let o = Command::new(bin())
        .args(["launch", "--root", root, "--dry-run", "--nnodes", "2", "--", "x.py"])
        .env_remove("SLURM_JOB_NODELIST")
        .env_remove("SLURM_JOB_ID")
        .env_remove("MASTER_ADDR")
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("a loopback address no other node can reach; give --master-addr"), "{}", stderr(&o));
}

#[test]
fn launch_says_the_hooks_warnings_first() {
    let t = tree_dir();
    fixture::story(t.path());
    let o = Command::new(bin())
        .args(["launch", "--root", t.path().to_str().unwrap(), "--dry-run", "--", "x.py"])
        .env("IBWIRE_HOOK_WARNINGS", "the image has no libibverbs.so.1 | a \u{1b}[2J second")
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(
        e.starts_with("ibwire launch: warning: the enroot hook warned at this container's start: the image has no libibverbs.so.1\n"),
        "{e}"
    );
    assert!(e.contains("start: a \\u{1b}[2J second"), "escaped: {e}");
}

/// `ibwire health` as slurmd and an admin run it: silent exit 0 on the story node; a port down
/// is one line with the fix and exit 1; with --drain (here through the `ibwire-health` link, as
/// HealthCheckProgram runs it, and a stand-in scontrol that keeps the node's state in a file:
/// tests/system/slurm.sh does this on real Slurm) the node is drained with `ibwire: …`, an
/// admin's drain is left alone, and ibwire's own drain is resumed once healthy; a broken
/// configuration is exit 2 and changes nothing.
#[test]
fn health_is_silent_when_fit_and_drains_only_what_it_may() {
    let t = tree_dir();
    let root = t.path().join("node");
    fixture::story(&root);
    let bin_dir = t.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let state = t.path().join("state");
    let calls = t.path().join("calls");
    // `scontrol show node N --oneliner` prints the state file; `update …` logs and applies it
    std::fs::write(
        bin_dir.join("scontrol"),
        format!(
            "#!/bin/sh\nS={s}\nif [ \"$1\" = show ]; then cat \"$S\"; exit 0; fi\necho \"$*\" >> {c}\n\
             case \"$*\" in *State=DRAIN*) r=$(echo \"$*\" | sed 's/.*Reason=//'); echo \"NodeName=gpu-001 State=IDLE+DRAIN Reason=$r [root@now]\" > \"$S\";;\n\
             *State=RESUME*) echo 'NodeName=gpu-001 State=IDLE' > \"$S\";; esac\n",
            s = state.display(),
            c = calls.display()
        ),
    )
    .unwrap();
    std::os::unix::fs::symlink(bin(), bin_dir.join("ibwire-health")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin_dir.join("scontrol"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin_dir.display());
    let health = |link: bool, extra: &[&str]| {
        let mut c = if link { Command::new(bin_dir.join("ibwire-health")) } else { Command::new(bin()) };
        if !link {
            c.arg("health");
        }
        c.args(extra).env("IBWIRE_ROOT", &root).env("PATH", &path).env("HOME", t.path()).env_remove("SLURMD_NODENAME");
        c.env_remove("IBWIRE_CONFIG").output().unwrap()
    };
    let o = health(false, &[]);
    assert_eq!((o.status.code(), stdout(&o).as_str(), stderr(&o).as_str()), (Some(0), "", ""));
    // mlx5_6's link is gone: DOWN, Polling
    let port = std::fs::canonicalize(root.join("sys/class/infiniband/mlx5_6")).unwrap().join("ports/1");
    std::fs::write(port.join("state"), "1: DOWN").unwrap();
    std::fs::write(port.join("phys_state"), "2: Polling").unwrap();
    let o = health(false, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
    assert!(stdout(&o).starts_with("mlx5_6 port 1: port state DOWN (1), not ACTIVE; fix: no link"), "{}", stdout(&o));
    // an admin's drain: never touched
    std::fs::write(&state, "NodeName=gpu-001 State=IDLE+DRAIN Reason=admin: bad dimm [admin@then]\n").unwrap();
    let o = health(true, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!calls.exists(), "an admin's drain was updated: {:?}", std::fs::read_to_string(&calls));
    // an idle node: drained with ibwire's line
    std::fs::write(&state, "NodeName=gpu-001 State=IDLE\n").unwrap();
    let o = health(true, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let log = std::fs::read_to_string(&calls).unwrap();
    assert!(
        log.starts_with("update NodeName=gpu-001 State=DRAIN Reason=ibwire: mlx5_6 port 1: port state DOWN"),
        "{log}"
    );
    // still unhealthy, drained by ibwire: no second update
    let o = health(true, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 1);
    // healthy again: ibwire's drain is resumed
    std::fs::write(port.join("state"), "4: ACTIVE").unwrap();
    std::fs::write(port.join("phys_state"), "5: LinkUp").unwrap();
    let o = health(true, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().nth(1), Some("update NodeName=gpu-001 State=RESUME"));
    assert_eq!(std::fs::read_to_string(&state).unwrap().trim(), "NodeName=gpu-001 State=IDLE");
    // healthy, drained by the admin: left drained
    std::fs::write(&state, "NodeName=gpu-001 State=IDLE+DRAIN Reason=admin: bad dimm [admin@then]\n").unwrap();
    assert_eq!(health(true, &[]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 2);
    // its own error: exit 2, nothing changed
    let bad = t.path().join("bad.yaml");
    std::fs::write(&bad, "health:\n  hca: 8\n").unwrap();
    let o = health(false, &["--drain", "--config", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("ibwire health: error: config "), "{}", stderr(&o));
    assert!(stderr(&o).contains("did you mean `hcas`"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 2);
    // --learn on a node with a port down: refused, nothing printed
    std::fs::write(port.join("state"), "1: DOWN").unwrap();
    let o = health(false, &["--learn"]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(2), ""), "{}", stderr(&o));
    assert!(stderr(&o).contains("--learn: this node is not healthy (mlx5_6 port 1"), "{}", stderr(&o));
    std::fs::write(port.join("state"), "4: ACTIVE").unwrap();
    // a read that never answers: its deadline, one line, exit 2, nothing drained
    if cfg!(debug_assertions) {
        let t0 = std::time::Instant::now();
        let o = Command::new(bin())
            .args(["health", "--drain", "--timeout", "1"])
            .env("IBWIRE_ROOT", &root)
            .env("PATH", &path)
            .env("IBWIRE_TEST_STALL", "20000")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(t0.elapsed() < std::time::Duration::from_secs(10));
        assert!(stderr(&o).starts_with("ibwire health: error: gave up after 1s"), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 2);
    }
    // --learn: the section, which the same node then passes
    let o = health(false, &["--learn"]);
    let learned = t.path().join("learned.yaml");
    std::fs::write(&learned, stdout(&o)).unwrap();
    assert!(
        stdout(&o).contains("health:\n  hcas: 8\n  link_layer: InfiniBand\n  rate_gbps: 400\n  width: 4X\n"),
        "{}",
        stdout(&o)
    );
    let o = health(false, &["--config", learned.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((v["healthy"].as_bool(), v["healthy_rails"].as_u64()), (Some(true), Some(8)));
}
