//! `ibwire probe` on fixture trees and the real hwloc captures.

use crate::common;
use common::*;
use ibwire::probe::{self, LinkLayer, ProbeOptions};
use std::fs;

#[test]
fn story_node_facts() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let n = probe::probe(&ProbeOptions::at(t.path()));
    assert_eq!(n.gpus.len(), 8);
    assert!(n.gpus.iter().all(|g| g.model == "NVIDIA H200"));
    assert_eq!(n.rdma.len(), 9);
    let bond = n.rdma_device("mlx5_bond_0").unwrap();
    assert!(bond.is_bond);
    assert_eq!(bond.bond_members, vec!["0000:49:00.0", "0000:49:00.1"]);
    assert_eq!(bond.ports[0].lid, Some(0));
    assert_eq!(bond.ports[0].link_layer, Some(LinkLayer::InfiniBand));
    assert_eq!(bond.ports[0].pkey0, Some(0xffff));
    // The in-use table is read only when asked for (`probe --all`): 128 files a port.
    assert!(bond.ports[0].pkeys.is_empty());
    let mut all = ProbeOptions::at(t.path());
    all.detail = probe::Detail::All;
    let full = probe::probe(&all);
    assert_eq!(full.rdma_device("mlx5_bond_0").unwrap().ports[0].pkeys, vec![0xffff]);
    assert_eq!(full.rdma_device("mlx5_0").unwrap().ports[0].pkeys, vec![0xffff, 0x8001]);
    let m0 = n.rdma_device("mlx5_0").unwrap();
    assert_eq!(m0.ports[0].lid, Some(0x11));
    assert_eq!(m0.uverbs.as_deref(), Some("uverbs0"));
    assert!(m0.uverbs_node_present);
    assert_eq!(m0.pci.as_ref().unwrap().bridges.len(), 3);
    let vlan = n.iface("bond0.2102").unwrap();
    assert_eq!(vlan.addrs[0].to_string(), "198.21.3.17/24");
    assert_eq!(vlan.lowers, vec!["bond0"]);
    assert_eq!(n.iface("eno8303").unwrap().addrs[0].to_string(), "198.21.151.17/24");
    assert_eq!(n.host.peermem.as_deref(), Some("nvidia_peermem"));
    assert!(n.notes.is_empty(), "{:?}", n.notes);
}

#[test]
fn the_human_report_shows_the_p_keys_it_read() {
    // It printed an empty "P_Keys " on every port: the table is read with --all only.
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let r = t.path().to_str().unwrap();
    let plain = stdout(&ibwire(&["probe", "--root", r]));
    assert!(flat(&plain).contains("LID 0x11 SM 0x1 P_Key[0] 0xffff"), "{plain}");
    assert!(!plain.contains("P_Keys \n") && !plain.contains("P_Keys\n"), "{plain}");
    let all = stdout(&ibwire(&["probe", "--root", r, "--all"]));
    assert!(flat(&all).contains("P_Keys 0xffff,0x8001"), "{all}");
}

#[test]
fn snapshot_round_trip_is_lossless() {
    let t = tree_dir();
    ibwire_fixture::story(&t.path().join("root"));
    let root = t.path().join("root");
    for ext in ["json", "yaml"] {
        let snap = t.path().join(format!("node.{ext}"));
        let o = ibwire(&["probe", "--root", root.to_str().unwrap(), "--save", snap.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let live = probe::probe(&ProbeOptions::at(&root));
        let replayed = ibwire::snapshot::load(&snap).unwrap();
        assert_same(&live, &replayed);
        let o2 = ibwire(&["probe", "--snapshot", snap.to_str().unwrap(), "--json"]);
        assert_eq!(stdout(&o), stdout(&o2));
    }
}

#[test]
fn hwloc_capture_mlx4_matches_hwloc_expectation() {
    // hwloc's expected XML: mlx4_0 Port1State 4, Port1LID 0x3a4, under a PCI device on NUMA 1.
    let t = tree_dir();
    let root = hwloc_tree("32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2", "32em64t-2n8c+1mic", t.path());
    let xml = fs::read_to_string(real_fixtures().join("hwloc/32em64t-2n8c+dax+nvme+mic+dimms.xml")).unwrap();
    assert!(xml.contains(r#"<info name="Port1LID" value="0x3a4"/>"#));
    let n = probe::probe(&ProbeOptions::at(&root));
    let d = n.rdma_device("mlx4_0").expect("mlx4_0");
    assert_eq!(d.ports[0].lid, Some(0x3a4));
    assert_eq!(d.ports[0].state, Some(4));
    assert_eq!(d.pci.as_ref().unwrap().numa_node, Some(1));
    assert_eq!(d.node_guid.as_deref(), Some("0002:c903:00f9:bfa0"));
    // dangling links in the capture are notes, not failures
    assert!(n.notes.iter().any(|x| x.contains("dangling")));
}

#[test]
fn hwloc_32bit_pci_domain() {
    let t = tree_dir();
    let root = hwloc_tree("2pa-pcidomain32bits.tar.bz2", "2pa-pcidomain32bits", t.path());
    let o = ibwire(&["probe", "--root", root.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let n: ibwire::probe::Node = serde_json::from_slice(&o.stdout).unwrap();
    let ens3 = n.iface("ens3").expect("ens3");
    let all = fs::read_dir(root.join("sys/bus/pci/devices")).unwrap().count();
    assert!(all > 0);
    // whatever its domain, the interface's PCI function is read, not dropped
    assert!(ens3.pci.is_some(), "{:?}", ens3);
}

#[test]
fn every_hwloc_tree_probes_without_failure() {
    let t = tree_dir();
    for (tar, top) in [
        ("2pa-pcidomain32bits.tar.bz2", "2pa-pcidomain32bits"),
        ("32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2", "32em64t-2n8c+1mic"),
        ("32intel64-2p8co2t+8ve.tar.bz2", "32intel64-2p8co2t+8ve"),
        ("40intel64-2g2n4c+pcilocality.tar.bz2", "40intel64-2g2n4c+pci"),
        ("fakepcilocalities.tar.bz2", "fakepcilocalities"),
        ("nvidiagpunumanodes.tar.bz2", "nvidiagpunumanodes"),
    ] {
        let root = hwloc_tree(tar, top, t.path());
        let o = ibwire(&["probe", "--root", root.to_str().unwrap()]);
        assert!(o.status.success(), "{tar}: {}", stderr(&o));
        assert!(stdout(&o).contains("RDMA devices:"), "{tar}");
    }
}

#[test]
fn garbage_attributes_become_notes() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let port = t.path().join("sys/class/infiniband/mlx5_3/ports/1");
    fs::write(port.join("lid"), "0xZZZZ\n").unwrap();
    fs::write(port.join("state"), [0xff, 0xfe]).unwrap();
    fs::write(port.join("rate"), "fast\n").unwrap();
    fs::remove_file(port.join("sm_lid")).unwrap();
    fs::write(t.path().join("proc/net/route"), "Iface\nbroken line here\n").unwrap();
    // an interface name with a space and a newline
    fs::create_dir_all(t.path().join("sys/devices/virtual/net/odd name\n")).unwrap();
    fs::write(t.path().join("sys/devices/virtual/net/odd name\n/type"), "1\n").unwrap();
    std::os::unix::fs::symlink("../../devices/virtual/net/odd name\n", t.path().join("sys/class/net/odd name\n"))
        .unwrap();
    let n = probe::probe(&ProbeOptions::at(t.path()));
    let p = &n.rdma_device("mlx5_3").unwrap().ports[0];
    assert_eq!((p.lid, p.state, p.sm_lid, p.rate_gbps), (None, None, None, None));
    assert!(n.notes.iter().any(|x| x.contains("lid") && x.contains("0xZZZZ")), "{:?}", n.notes);
    assert!(n.notes.iter().any(|x| x.contains("not UTF-8")), "{:?}", n.notes);
    assert!(n.iface("odd name\n").is_some());
    let o = ibwire(&["probe", "--root", t.path().to_str().unwrap()]);
    assert!(o.status.success());
}

#[test]
fn missing_infiniband_class_is_a_plain_node() {
    let t = tree_dir();
    ibwire_fixture::plain(t.path());
    fs::remove_dir_all(t.path().join("sys/class/infiniband")).unwrap();
    let n = probe::probe(&ProbeOptions::at(t.path()));
    assert!(n.rdma.is_empty() && n.gpus.is_empty());
    assert_eq!(n.iface("eth0").unwrap().addrs[0].to_string(), "10.1.2.3/24");
    assert!(n.notes.is_empty(), "{:?}", n.notes);
}

#[test]
fn bad_snapshots_give_one_line_with_position() {
    let t = tree_dir();
    let cases = [
        ("bad.yaml", "schema: 1\nsource: [unclosed\n", "bad.yaml:"),
        ("bad.json", "{\"schema\": 1, \"rdma\": 5}", "bad.json:1:"),
        ("shape.yaml", "schema: 1\nsource: x\nwrong_field: 3\n", "shape.yaml:"),
    ];
    for (name, text, want) in cases {
        let p = t.path().join(name);
        fs::write(&p, text).unwrap();
        let o = ibwire(&["probe", "--snapshot", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn capture_replays_to_the_same_snapshot() {
    let t = tree_dir();
    let root = t.path().join("root");
    ibwire_fixture::story(&root);
    let cap = t.path().join("cap");
    let o = ibwire(&["probe", "--root", root.to_str().unwrap(), "--capture", cap.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut a = probe::probe(&ProbeOptions::at(&root));
    let mut b = probe::probe(&ProbeOptions::at(&cap));
    a.source.clear();
    b.source.clear();
    assert_same(&a, &b);
}

#[test]
fn capture_into_unwritable_place_is_one_line() {
    let t = tree_dir();
    ibwire_fixture::plain(t.path());
    let o = ibwire(&["probe", "--root", t.path().to_str().unwrap(), "--capture", "/proc/version/x"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

/// Compare two snapshots and show the first differing line of their JSON, not a 40 kB dump.
fn assert_same(a: &probe::Node, b: &probe::Node) {
    if a == b {
        return;
    }
    let ja = serde_json::to_string_pretty(a).unwrap();
    let jb = serde_json::to_string_pretty(b).unwrap();
    let d = ja.lines().zip(jb.lines()).enumerate().find(|(_, (x, y))| x != y);
    panic!("snapshots differ at JSON line {:?}", d);
}

#[test]
fn thirty_two_bit_pci_domain_devices() {
    // VMD and Hyper-V put devices in domains above 0xffff: `10000:01:00.0` under `pci10000:00`.
    let t = tree_dir();
    let tree = ibwire_fixture::Tree::new(t.path());
    let chain: Vec<String> = ["pci10000:00", "10000:00:04.0", "10000:01:00.0"].iter().map(|s| s.to_string()).collect();
    tree.gpu(&chain, 0, 0x2335);
    let nic: Vec<String> = ["pci10000:00", "10000:00:05.0", "10000:02:00.0"].iter().map(|s| s.to_string()).collect();
    tree.hca("mlx5_0", &nic, 0, &[ibwire_fixture::Port::ib(1, 7)], 0);
    tree.finish();
    let n = probe::probe(&ProbeOptions::at(t.path()));
    assert!(n.notes.is_empty(), "{:?}", n.notes);
    assert_eq!(n.gpus[0].pci.bdf, "10000:01:00.0");
    assert_eq!(n.gpus[0].pci.root, "pci10000:00");
    assert_eq!(n.rdma[0].pci.as_ref().unwrap().bdf, "10000:02:00.0");
    let m = ibwire::plan::topo::matrix(&n, false, false);
    assert_eq!(m.gpu_nic[0][0], ibwire::plan::topo::PathType::PHB, "same root complex, different root ports");
}

/// probe takes a PCI function's ids from its `uevent` (one file, not three). On the real hwloc
/// captures, which have both, every function's ids equal its `vendor`, `device` and `class`
/// files; a tree without uevent, or with a garbled one, is read from the files.
#[test]
fn pci_ids_from_uevent_agree_with_the_attribute_files() {
    use ibwire::probe::{pci, sysroot::SysRoot};
    let hex = |p: &std::path::Path| {
        let s = fs::read_to_string(p).unwrap();
        u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap()
    };
    let t = tree_dir();
    let mut checked = 0;
    for (tar, top) in [
        ("2pa-pcidomain32bits.tar.bz2", "2pa-pcidomain32bits"),
        ("32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2", "32em64t-2n8c+1mic"),
        ("40intel64-2g2n4c+pcilocality.tar.bz2", "40intel64-2g2n4c+pci"),
    ] {
        let root = hwloc_tree(tar, top, t.path());
        let sys = SysRoot::new(&root);
        for e in fs::read_dir(root.join("sys/bus/pci/devices")).unwrap().flatten() {
            let dir = fs::canonicalize(e.path()).unwrap();
            if !dir.join("uevent").exists() || !dir.join("vendor").exists() {
                continue;
            }
            let rel = std::path::Path::new("sys/bus/pci/devices").join(e.file_name());
            let f = pci::function_at(&sys, &rel).unwrap_or_else(|| panic!("{tar}: {}", rel.display()));
            let want = (Some(hex(&dir.join("vendor"))), Some(hex(&dir.join("device"))), Some(hex(&dir.join("class"))));
            assert_eq!((f.vendor, f.device, f.class), want, "{tar}: {}", rel.display());
            checked += 1;
        }
        assert!(sys.take_notes().is_empty(), "{tar}");
    }
    assert!(checked > 100, "functions checked: {checked}");

    // Without uevent (older captures), and with a garbled one: the attribute files.
    for uevent in [None, Some("PCI_ID=zz\nPCI_CLASS=\n")] {
        let t = tree_dir();
        ibwire_fixture::story(t.path());
        let nic = fs::canonicalize(t.path().join("sys/class/infiniband/mlx5_0/device")).unwrap();
        match uevent {
            None => fs::remove_file(nic.join("uevent")).unwrap(),
            Some(u) => fs::write(nic.join("uevent"), u).unwrap(),
        }
        let n = probe::probe(&ProbeOptions::at(t.path()));
        let p = n.rdma_device("mlx5_0").unwrap().pci.clone().unwrap();
        assert_eq!((p.vendor, p.device, p.class), (Some(0x15b3), Some(0x1021), Some(0x020700)), "{uevent:?}");
    }
}

#[test]
fn capture_copies_nothing_from_outside_the_tree() {
    // hostile round 4 #8: `proc/sys` a link out of the tree: outside files landed in the capture.
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(outside.path().join("kernel")).unwrap();
    std::fs::write(outside.path().join("kernel/hostname"), "outside-secret-host\n").unwrap();
    std::fs::write(outside.path().join("kernel/osrelease"), "outside-secret-release\n").unwrap();
    let _ = std::fs::remove_dir_all(t.path().join("proc/sys"));
    std::fs::create_dir_all(t.path().join("proc")).unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path().join("proc/sys")).unwrap();
    let cap = tempfile::tempdir().unwrap().keep().join("cap");
    let o = ibwire(&["probe", "--root", t.path().to_str().unwrap(), "--capture", cap.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut found = Vec::new();
    fn walk(d: &std::path::Path, found: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_symlink() {
                continue;
            }
            if p.is_dir() {
                walk(&p, found);
            } else if std::fs::read_to_string(&p).unwrap_or_default().contains("outside-secret") {
                found.push(p.display().to_string());
            }
        }
    }
    walk(&cap, &mut found);
    assert!(found.is_empty(), "outside files copied: {found:?}");
    let _ = std::fs::remove_dir_all(cap.parent().unwrap());
}
