//! `ibwire topo` against real machines: trees that reproduce the PCIe layout of nodes whose
//! `nvidia-smi topo -m` output is in shared/fixtures/topo, compared cell for cell.

use crate::common;
use common::*;
use ibwire::nvsmi::parse_topo;
use ibwire::plan::topo::matrix;
use ibwire::probe::{self, ProbeOptions};
use ibwire_fixture::{Port, Tree};
use std::path::Path;

fn fixture_text(name: &str) -> String {
    let raw = std::fs::read_to_string(real_fixtures().join("topo").join(name)).unwrap();
    raw.lines()
        .filter(|l| !l.starts_with("# source:") && !l.starts_with("# machine:") && !l.starts_with("# notable:"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn b(bus: u8, dev: u8) -> String {
    format!("0000:{bus:02x}:{dev:02x}.0")
}

/// Compare every GPU×NIC, NIC×NIC and non-NVLink GPU×GPU cell; `nic_name` maps a fixture
/// column label to our NIC's device name.
fn compare(root: &Path, fixture: &str, nic_name: &dyn Fn(&str, &ibwire::nvsmi::TopoText) -> String) -> usize {
    let node = probe::probe(&ProbeOptions::at(root));
    let m = matrix(&node, false, false);
    let want = parse_topo(&fixture_text(fixture));
    let label_of = |col: &str| -> String {
        if col.starts_with("GPU") {
            col.to_string()
        } else {
            let dev = nic_name(col, &want);
            m.nics.iter().find(|n| n.device == dev).unwrap_or_else(|| panic!("no NIC {dev}")).name.clone()
        }
    };
    let ours = parse_topo(&ibwire::cmd::topo::text(&node, &m));
    let mut checked = 0;
    for row in want.rows.keys() {
        for col in &want.columns {
            let w = want.cell(row, col).unwrap();
            if w.starts_with("NV") {
                continue;
            }
            let got = ours.cell(&label_of(row), &label_of(col)).unwrap_or("?");
            assert_eq!(got, w, "{fixture}: cell {row} × {col}");
            checked += 1;
        }
        if let (Some(wa), Some(oa)) = (want.affinity.get(row), ours.affinity.get(&label_of(row))) {
            if row.starts_with("GPU") {
                assert_eq!(wa, oa, "{fixture}: affinity of {row}");
            }
        }
    }
    checked
}

#[test]
fn dgx_a100_nps4_twelve_nics() {
    let t = tree_dir();
    let tree = Tree::new(t.path());
    for (n, cpus) in [
        (0, "0-15,128-143"),
        (1, "16-31,144-159"),
        (2, "32-47,160-175"),
        (3, "48-63,176-191"),
        (4, "64-79,192-207"),
        (5, "80-95,208-223"),
        (6, "96-111,224-239"),
        (7, "112-127,240-255"),
    ] {
        tree.numa(n, cpus);
    }
    // Four switch trees: L1 switch → four L2 switches → GPU, GPU, NIC, NIC (all PXB apart).
    let pairs = [
        (0x00u8, 3, ["mlx5_0", "mlx5_1"]),
        (0x20, 1, ["mlx5_2", "mlx5_3"]),
        (0x80, 7, ["mlx5_6", "mlx5_7"]),
        (0xa0, 5, ["mlx5_8", "mlx5_9"]),
    ];
    for (k, (rc, numa, nics)) in pairs.iter().enumerate() {
        let r = *rc + 0x10;
        let base = vec![format!("pci0000:{r:02x}"), b(r, 1), b(r + 1, 0)];
        for i in 0..4u8 {
            let mut c = base.clone();
            c.extend([b(r + 2, i), b(r + 3 + i, 0), b(r + 7 + i, 0), b(r + 11 + i, 0)]);
            match i {
                0 | 1 => drop(tree.gpu(&c, *numa, 0x20b0)),
                _ => drop(tree.hca(
                    nics[i as usize - 2],
                    &c,
                    *numa,
                    &[Port::ib(1, 0x10 + k as u32 * 4 + i as u32)],
                    (k * 2 + i as usize) as u32,
                )),
            }
        }
    }
    // Storage pairs: two functions of one card on their own root port, on GPU-less NUMA nodes.
    for (rc, numa, names) in [(0x60u8, 2, ["mlx5_4", "mlx5_5"]), (0xe0, 6, ["mlx5_10", "mlx5_11"])] {
        for (f, name) in names.iter().enumerate() {
            let c = vec![format!("pci0000:{rc:02x}"), b(rc, 1), format!("0000:{:02x}:00.{f}", rc + 1)];
            tree.hca(name, &c, numa, &[Port::ib(1, 0x80 + rc as u32 + f as u32)], 20 + rc as u32 + f as u32);
        }
    }
    tree.finish();
    let n = compare(t.path(), "dgx-a100-12nic-nps4.txt", &|col, _| col.to_string());
    assert_eq!(n, 8 * 12 + 12 * 20 + 8, "every non-NVLink cell was checked");
    let node = probe::probe(&ProbeOptions::at(t.path()));
    let m = matrix(&node, false, false);
    assert!(
        m.verdicts.iter().any(|v| v.contains("Layout: two GPUs and two NICs share each PCIe switch tree")),
        "{:?}",
        m.verdicts
    );
    assert!(
        m.verdicts.iter().any(|v| v.contains("mlx5_4, mlx5_5, mlx5_10, mlx5_11 are far from every GPU")),
        "{:?}",
        m.verdicts
    );
}

#[test]
fn h100_eight_ib_plus_five_ethernet() {
    let t = tree_dir();
    let tree = Tree::new(t.path());
    tree.numa(0, "0-55,112-167");
    tree.numa(1, "56-111,168-223");
    // Per pair: L1 switch with two L2 switches, each holding one GPU and its own NIC.
    for (p, r) in [0x10u8, 0x30, 0x90, 0xb0].iter().enumerate() {
        let numa = if p < 2 { 0 } else { 1 };
        let base = vec![format!("pci0000:{r:02x}"), b(*r, 1), b(r + 1, 0)];
        for (half, l2) in [(0u8, r + 3), (1, r + 7)] {
            let mut c = base.clone();
            c.extend([b(r + 2, half), b(l2, 0)]);
            let mut g = c.clone();
            g.extend([b(l2 + 1, 0), b(l2 + 2, 0)]);
            let mut nic = c.clone();
            nic.extend([b(l2 + 1, 1), b(l2 + 3, 0)]);
            let idx = p * 2 + half as usize;
            tree.gpu(&g, numa, 0x2330);
            tree.hca(&format!("mlx5_ib{idx}"), &nic, numa, &[Port::ib(1, 0x20 + idx as u32)], idx as u32);
        }
    }
    for i in 0..5u8 {
        let c = vec!["pci0000:d0".to_string(), b(0xd0, 1), b(0xd1, 0), b(0xd2, i), b(0xd3 + i, 0)];
        tree.hca(&format!("mlx5_eth{i}"), &c, 1, &[Port::roce(1, &format!("eth{i}"), None)], 8 + i as u32);
    }
    tree.finish();
    let name = |col: &str, _: &ibwire::nvsmi::TopoText| {
        let i: usize = col.trim_start_matches("NIC").parse().unwrap();
        if i < 8 {
            format!("mlx5_ib{i}")
        } else {
            format!("mlx5_eth{}", i - 8)
        }
    };
    let n = compare(t.path(), "h100-ib-8x-ndr-plus-5eth-renamed-mlx5_ib-mlx5_eth.txt", &name);
    assert_eq!(n, 8 * 13 + 13 * 21 + 8);
}

#[test]
fn cli_topo_json_shape() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let o = ibwire(&["topo", "--root", t.path().to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["gpus"].as_array().unwrap().len(), 8);
    assert_eq!(v["nics"][0]["name"], "NIC0");
    assert_eq!(v["nics"][0]["device"], "mlx5_0");
    assert_eq!(v["gpu_nic"][0][0], "PIX");
    assert_eq!(v["gpu_nic"][0][8], "SYS");
    assert_eq!(v["gpu_gpu"][0][0], "X");
}

#[test]
fn hwloc_trees_give_a_matrix() {
    let t = tree_dir();
    let root = hwloc_tree("40intel64-2g2n4c+pcilocality.tar.bz2", "40intel64-2g2n4c+pci", t.path());
    let o = ibwire(&["topo", "--root", root.to_str().unwrap(), "--all-nics"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("NIC Legend:"), "{out}");
    // hwloc's capture: a QLogic qib0 on NUMA 2 and four Ethernet ports
    assert!(out.contains(": qib0") && out.contains(": eth0"), "{out}");
    let m = parse_topo(&out);
    assert_eq!(m.columns.len(), 5, "{out}");
}

#[test]
fn real_h200_capture_replays() {
    let t = tree_dir();
    let tgz = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-1gpu/capture.tgz");
    assert!(std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&tgz)
        .arg("-C")
        .arg(t.path())
        .status()
        .unwrap()
        .success());
    let o = ibwire(&["topo", "--root", t.path().join("capture").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Same header and GPU0 row as the real nvidia-smi topo -m there (numa_node -1 in the VM).
    let ours = parse_topo(&stdout(&o));
    let real = parse_topo(&std::fs::read_to_string(tgz.with_file_name("nvidia-smi-topo-m.txt")).unwrap());
    assert_eq!(ours.columns, real.columns);
    assert_eq!(ours.cell("GPU0", "GPU0"), real.cell("GPU0", "GPU0"));
}
