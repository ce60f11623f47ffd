//! Build sysfs/procfs trees from compact descriptions, for tests, benchmarks and system tests.
//!
//! The trees have the real layout (devices under `sys/devices/pciDDDD:BB/...`, relative class
//! symlinks, `proc/net/*` tables), so the probe reads them exactly as it reads a node.
//! `story()` is the node from our users' incident: 8 H200, eight IB HCAs, an IB bond with LID 0.

use std::fs;
use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// `ports/N/counters/` as mlx5 has it (IB PMA counters).
const PORT_COUNTERS: &[&str] = &[
    "excessive_buffer_overrun_errors",
    "link_downed",
    "link_error_recovery",
    "local_link_integrity_errors",
    "multicast_rcv_packets",
    "multicast_xmit_packets",
    "port_rcv_constraint_errors",
    "port_rcv_data",
    "port_rcv_errors",
    "port_rcv_packets",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_constraint_errors",
    "port_xmit_data",
    "port_xmit_discards",
    "port_xmit_packets",
    "port_xmit_wait",
    "symbol_error",
    "unicast_rcv_packets",
    "unicast_xmit_packets",
    "VL15_dropped",
];

/// `ports/N/hw_counters/` as mlx5 has it.
const PORT_HW_COUNTERS: &[&str] = &[
    "duplicate_request",
    "implied_nak_seq_err",
    "lifespan",
    "local_ack_timeout_err",
    "np_cnp_sent",
    "np_ecn_marked_roce_packets",
    "out_of_buffer",
    "out_of_sequence",
    "packet_seq_err",
    "req_cqe_error",
    "req_cqe_flush_error",
    "req_remote_access_errors",
    "req_remote_invalid_request",
    "resp_cqe_error",
    "resp_cqe_flush_error",
    "resp_local_length_error",
    "resp_remote_access_errors",
    "rnr_nak_retry_err",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "rx_atomic_requests",
    "rx_dct_connect",
    "rx_icrc_encapsulated",
    "rx_read_requests",
    "rx_write_requests",
    "local_ack_timeout_err_qp",
];

pub struct Tree {
    pub root: PathBuf,
    addrs4: Vec<(String, String, u8)>,
    addrs6: Vec<(String, String, u8)>,
    routes: Vec<(String, String, u8, Option<String>, u32)>,
    vlans: Vec<(String, String)>,
    next_ifindex: u32,
    dirs: std::cell::RefCell<std::collections::HashSet<PathBuf>>,
}

#[derive(Clone, Debug)]
pub struct Port {
    pub num: u32,
    pub state: &'static str,
    pub phys: &'static str,
    pub link_layer: &'static str,
    pub lid: u32,
    pub sm_lid: u32,
    pub rate: &'static str,
    /// P_Keys in use, written from index 0; the rest of the table (`pkey_tbl_len`) is 0x0000.
    pub pkeys: Vec<u16>,
    /// Entries in the port's P_Key table: 128 on a ConnectX InfiniBand port, 1 on Ethernet.
    pub pkey_tbl_len: usize,
    /// (index, gid, type, netdev)
    pub gids: Vec<(u32, String, &'static str, String)>,
    /// Entries in the GID table: 8 on InfiniBand (mlx5), 255 on RoCE; unused ones all-zero.
    pub gid_tbl_len: usize,
}

impl Port {
    pub fn ib(num: u32, lid: u32) -> Port {
        Port {
            num,
            state: "4: ACTIVE",
            phys: "5: LinkUp",
            link_layer: "InfiniBand",
            lid,
            sm_lid: 1,
            rate: "400 Gb/sec (4X NDR)",
            pkeys: vec![0xffff],
            pkey_tbl_len: 128,
            gids: vec![(0, format!("fe80:0000:0000:0000:a088:c203:00{:02x}:{:04x}", num, lid), "", String::new())],
            gid_tbl_len: 8,
        }
    }

    /// A RoCE port with a link-local v1/v2 pair and an IPv4-mapped v2 GID on `netdev`.
    pub fn roce(num: u32, netdev: &str, ipv4: Option<&str>) -> Port {
        let mut gids = vec![
            (0, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001".to_string(), "IB/RoCE v1", netdev.to_string()),
            (1, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001".to_string(), "RoCE v2", netdev.to_string()),
        ];
        if let Some(ip) = ipv4 {
            let o: Vec<u8> = ip.split('.').map(|x| x.parse().unwrap()).collect();
            let g = format!("0000:0000:0000:0000:0000:ffff:{:02x}{:02x}:{:02x}{:02x}", o[0], o[1], o[2], o[3]);
            gids.push((2, g.clone(), "IB/RoCE v1", netdev.to_string()));
            gids.push((3, g, "RoCE v2", netdev.to_string()));
        }
        Port {
            num,
            state: "4: ACTIVE",
            phys: "5: LinkUp",
            link_layer: "Ethernet",
            lid: 0,
            sm_lid: 0,
            rate: "200 Gb/sec (4X HDR)",
            pkeys: vec![0xffff],
            pkey_tbl_len: 1,
            gids,
            gid_tbl_len: 255,
        }
    }

    pub fn down(mut self) -> Port {
        self.state = "1: DOWN";
        self.phys = "3: Disabled";
        self.lid = if self.link_layer == "InfiniBand" { 0xffff } else { 0 };
        self
    }
}

#[derive(Clone, Debug)]
pub struct NetDev {
    pub name: String,
    pub if_type: u32,
    pub operstate: &'static str,
    pub carrier: Option<bool>,
    pub mtu: u32,
    pub speed: i64,
    pub devtype: Option<&'static str>,
    pub master: Option<String>,
    pub lower: Vec<String>,
    pub bonding: bool,
    pub bridge: bool,
}

impl NetDev {
    pub fn eth(name: &str) -> NetDev {
        NetDev {
            name: name.into(),
            if_type: 1,
            operstate: "up",
            carrier: Some(true),
            mtu: 1500,
            speed: 1000,
            devtype: None,
            master: None,
            lower: vec![],
            bonding: false,
            bridge: false,
        }
    }
    pub fn ipoib(name: &str) -> NetDev {
        NetDev { if_type: 32, mtu: 4092, speed: 400000, ..NetDev::eth(name) }
    }
    pub fn down(mut self) -> NetDev {
        self.operstate = "down";
        self.carrier = None;
        self
    }
}

/// The chain for a device under a root port: `pciDDDD:RR`, `DDDD:RR:01.0`, then `rest`.
pub fn under_root_port(rc: u8, rest: &[String]) -> Vec<String> {
    let mut v = vec![format!("pci0000:{rc:02x}"), format!("0000:{rc:02x}:01.0")];
    v.extend(rest.iter().cloned());
    v
}

impl Tree {
    pub fn new(root: &Path) -> Tree {
        fs::create_dir_all(root).unwrap();
        let t = Tree {
            root: root.to_path_buf(),
            addrs4: vec![],
            addrs6: vec![],
            routes: vec![],
            vlans: vec![],
            next_ifindex: 2,
            dirs: Default::default(),
        };
        t.w("proc/self/limits", "Limit                     Soft Limit           Hard Limit           Units\nMax locked memory         unlimited            unlimited            bytes\n");
        t.w("proc/sys/kernel/hostname", "node");
        t.mk("sys/class/infiniband");
        t.mk("sys/class/net");
        t.mk("sys/bus/pci/devices");
        t
    }

    fn w(&self, rel: impl AsRef<Path>, content: &str) {
        let p = self.root.join(rel);
        let parent = p.parent().unwrap();
        // Real-sized trees have thousands of files in a few hundred directories.
        if self.dirs.borrow_mut().insert(parent.to_path_buf()) {
            fs::create_dir_all(parent).unwrap();
        }
        let mut f = fs::File::create(&p).unwrap();
        writeln!(f, "{content}").unwrap();
    }

    fn mk(&self, rel: impl AsRef<Path>) {
        fs::create_dir_all(self.root.join(rel)).unwrap();
    }

    /// A relative symlink at `at` pointing to `target` (both root-relative), as sysfs has them.
    fn link(&self, at: impl AsRef<Path>, target: impl AsRef<Path>) {
        let at = at.as_ref();
        let depth = at.parent().map(|p| p.components().count()).unwrap_or(0);
        let rel: PathBuf = std::iter::repeat_n("..", depth).collect::<PathBuf>().join(target);
        let abs = self.root.join(at);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        let _ = fs::remove_file(&abs);
        symlink(rel, abs).unwrap();
    }

    /// The running kernel's release (`/proc/sys/kernel/osrelease`).
    pub fn kernel(&self, release: &str) {
        self.w("proc/sys/kernel/osrelease", release);
    }

    /// `/proc/driver/nvidia/version` as the open or the proprietary module writes it.
    pub fn nvidia_module(&self, open: bool, version: &str) {
        let kind = if open { "NVIDIA UNIX Open Kernel Module for x86_64" } else { "NVIDIA UNIX x86_64 Kernel Module" };
        self.w(
            "proc/driver/nvidia/version",
            &format!("NVRM version: {kind}  {version}  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Oct 17 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)"),
        );
    }

    /// `groups` IOMMU groups, of type `identity` (passthrough) or `DMA-FQ` (translating).
    pub fn iommu(&self, groups: usize, passthrough: bool) {
        self.mk("sys/kernel/iommu_groups");
        for g in 0..groups {
            self.w(format!("sys/kernel/iommu_groups/{g}/type"), if passthrough { "identity" } else { "DMA-FQ" });
        }
    }

    /// Make `bdf`'s configuration space the 4 KiB root reads, with an AER capability at 0x100
    /// and, when `acs` is given, an ACS capability after it holding that control register.
    pub fn config_space_4k(&self, bdf: &str, acs: Option<u16>) {
        let p = self.root.join("sys/bus/pci/devices").join(bdf).join("config");
        let mut c = fs::read(&p).unwrap_or_default();
        c.resize(4096, 0);
        let next = if acs.is_some() { 0x148u32 } else { 0 };
        c[0x100..0x104].copy_from_slice(&(0x0001u32 | (1 << 16) | (next << 20)).to_le_bytes());
        if let Some(ctrl) = acs {
            c[0x148..0x14c].copy_from_slice(&(0x000du32 | (1 << 16)).to_le_bytes());
            c[0x14c..0x14e].copy_from_slice(&0x005fu16.to_le_bytes()); // capabilities: SV TB RR CR UF DT
            c[0x14e..0x150].copy_from_slice(&ctrl.to_le_bytes());
        }
        fs::write(p, c).unwrap();
    }

    pub fn hostname(&self, h: &str) {
        self.w("proc/sys/kernel/hostname", h);
    }

    pub fn numa(&self, id: u32, cpulist: &str) {
        self.w(format!("sys/devices/system/node/node{id}/cpulist"), cpulist);
    }

    /// A PCI function at `chain` (root complex first). Bridges on the way get bridge class.
    pub fn pci(&self, chain: &[String], vendor: u16, device: u16, class: u32, numa: i32) -> PathBuf {
        let mut dir = PathBuf::from("sys/devices");
        for (i, c) in chain.iter().enumerate() {
            dir.push(c);
            if i == 0 {
                continue;
            }
            let last = i == chain.len() - 1;
            if !self.root.join(&dir).join("vendor").exists() || last {
                let (v, d, k) = if last { (vendor, device, class) } else { (0x1000u16, 0xc030u16, 0x060400u32) };
                self.w(dir.join("vendor"), &format!("0x{v:04x}"));
                self.w(dir.join("device"), &format!("0x{d:04x}"));
                self.w(dir.join("class"), &format!("0x{k:06x}"));
                self.w(dir.join("numa_node"), &numa.to_string());
                self.w(dir.join("max_link_speed"), "32.0 GT/s PCIe");
                self.w(dir.join("max_link_width"), "16");
                self.w(dir.join("current_link_speed"), "32.0 GT/s PCIe");
                self.w(dir.join("current_link_width"), "16");
                let below = if last { None } else { chain.get(i + 1) };
                fs::write(self.root.join(&dir).join("config"), config_space(v, d, k, c, below)).unwrap();
                self.link(format!("sys/bus/pci/devices/{c}"), &dir);
            }
        }
        dir
    }

    pub fn gpu(&self, chain: &[String], numa: i32, device_id: u16) -> PathBuf {
        let dir = self.pci(chain, 0x10de, device_id, 0x030200, numa);
        // bound to the nvidia driver, as on a node with the driver loaded
        self.link(format!("sys/bus/pci/drivers/nvidia/{}", chain.last().unwrap()), &dir);
        dir
    }

    /// An RDMA device on the PCI function at `chain`, with a uverbs node and `/dev` entry.
    pub fn hca(&self, name: &str, chain: &[String], numa: i32, ports: &[Port], uverbs: u32) -> PathBuf {
        let pci = self.pci(chain, 0x15b3, 0x1021, 0x020700, numa);
        let dir = pci.join("infiniband").join(name);
        self.link(dir.join("device"), &pci);
        self.w(dir.join("node_type"), "1: CA");
        self.w(dir.join("node_guid"), &format!("a088:c203:00{:02x}:0000", uverbs));
        self.w(dir.join("sys_image_guid"), &format!("a088:c203:00{:02x}:0000", uverbs));
        self.w(dir.join("fw_ver"), "28.39.1002");
        self.w(dir.join("board_id"), "MT_0000000838");
        self.w(dir.join("hca_type"), "MT4129");
        for p in ports {
            let pd = dir.join("ports").join(p.num.to_string());
            self.w(pd.join("state"), p.state);
            self.w(pd.join("phys_state"), p.phys);
            self.w(pd.join("link_layer"), p.link_layer);
            self.w(pd.join("lid"), &format!("0x{:x}", p.lid));
            self.w(pd.join("sm_lid"), &format!("0x{:x}", p.sm_lid));
            self.w(pd.join("rate"), p.rate);
            self.w(pd.join("pkey_tbl_len"), &p.pkey_tbl_len.max(p.pkeys.len()).to_string());
            for i in 0..p.pkey_tbl_len.max(p.pkeys.len()) {
                self.w(
                    pd.join("pkeys").join(i.to_string()),
                    &format!("0x{:04x}", p.pkeys.get(i).copied().unwrap_or(0)),
                );
            }
            let roce = p.link_layer == "Ethernet";
            let n = p.gid_tbl_len.max(p.gids.iter().map(|g| g.0 as usize + 1).max().unwrap_or(0));
            self.w(pd.join("gid_tbl_len"), &n.to_string());
            for i in 0..n {
                let used = p.gids.iter().find(|g| g.0 as usize == i);
                let g = used.map(|g| g.1.as_str()).unwrap_or("0000:0000:0000:0000:0000:0000:0000:0000");
                self.w(pd.join("gids").join(i.to_string()), g);
                if roce {
                    // The kernel answers EINVAL for an unused entry's attributes; an empty file is
                    // the closest a plain tree gets (the reader treats both as "no value").
                    self.w(pd.join("gid_attrs/types").join(i.to_string()), used.map(|g| g.2).unwrap_or(""));
                    self.w(pd.join("gid_attrs/ndevs").join(i.to_string()), used.map(|g| g.3.as_str()).unwrap_or(""));
                }
            }
            for c in PORT_COUNTERS {
                self.w(pd.join("counters").join(c), "0");
            }
            for c in PORT_HW_COUNTERS {
                self.w(pd.join("hw_counters").join(c), "0");
            }
        }
        self.link(format!("sys/class/infiniband/{name}"), &dir);
        self.w(dir.join("uevent"), &format!("NAME={name}"));
        // What enroot's 99-mellanox.sh globs: drivers/mlx?_core/*/infiniband_verbs/*/uevent.
        let bdf = chain.last().unwrap();
        self.link(format!("sys/bus/pci/drivers/mlx5_core/{bdf}"), &pci);
        let u = pci.join("infiniband_verbs").join(format!("uverbs{uverbs}"));
        self.w(u.join("ibdev"), name);
        self.w(u.join("dev"), &format!("231:{}", 192 + uverbs));
        self.w(u.join("uevent"), &format!("MAJOR=231\nMINOR={}\nDEVNAME=infiniband/uverbs{uverbs}", 192 + uverbs));
        self.link(format!("sys/class/infiniband_verbs/uverbs{uverbs}"), &u);
        let m = pci.join("infiniband_mad").join(format!("umad{uverbs}"));
        self.w(m.join("ibdev"), name);
        self.w(m.join("port"), "1");
        self.w(m.join("uevent"), &format!("MAJOR=231\nMINOR={uverbs}\nDEVNAME=infiniband/umad{uverbs}"));
        self.link(format!("sys/class/infiniband_mad/umad{uverbs}"), &m);
        self.w(format!("dev/infiniband/uverbs{uverbs}"), "");
        self.w(format!("dev/infiniband/umad{uverbs}"), "");
        self.w("dev/infiniband/rdma_cm", "");
        // rdma_cm is a misc device (dynamic minor): its numbers are in sysfs, as on a node.
        self.w("sys/devices/virtual/misc/rdma_cm/dev", "10:58");
        self.link("sys/class/misc/rdma_cm", "sys/devices/virtual/misc/rdma_cm");
        pci
    }

    /// RoCE rail `i`: `mlx5_<i>` on its own root port, netdev `ens<i+1>np0` (MTU `mtu`) with
    /// 10.0.<i>.5/24 and the matching RoCE v2 GID.
    pub fn roce_rail(&mut self, i: u8, mtu: u32) {
        let rc = 0x10 + i * 0x10;
        let chain = under_root_port(rc, &[format!("0000:{:02x}:00.0", rc + 1)]);
        let nd = format!("ens{}np0", i + 1);
        let ip = format!("10.0.{i}.5");
        let pci = self.hca(&format!("mlx5_{i}"), &chain, 0, &[Port::roce(1, &nd, Some(&ip))], i as u32);
        self.netdev(&NetDev { mtu, ..NetDev::eth(&nd) }, Some(&pci));
        self.addr(&nd, &format!("{ip}/24"));
    }

    /// Mark the function at `vf` as an SR-IOV virtual function of `pf_dir`.
    pub fn make_vf(&self, vf_dir: &Path, pf_dir: &Path) {
        self.link(vf_dir.join("physfn"), pf_dir);
    }

    /// A network interface; `pci` is the function directory it belongs to (None = virtual).
    pub fn netdev(&mut self, n: &NetDev, pci: Option<&Path>) {
        let dir = match pci {
            Some(p) => {
                self.link(p.join("net").join(&n.name).join("device"), p);
                p.join("net").join(&n.name)
            }
            None => PathBuf::from("sys/devices/virtual/net").join(&n.name),
        };
        self.w(dir.join("type"), &n.if_type.to_string());
        self.w(dir.join("ifindex"), &self.next_ifindex.to_string());
        self.next_ifindex += 1;
        self.w(dir.join("operstate"), n.operstate);
        self.w(dir.join("flags"), if n.operstate == "down" { "0x1002" } else { "0x1003" });
        if let Some(c) = n.carrier {
            self.w(dir.join("carrier"), if c { "1" } else { "0" });
        }
        self.w(dir.join("mtu"), &n.mtu.to_string());
        self.w(dir.join("speed"), &n.speed.to_string());
        // What else a netdev directory holds, so listings and walks cost what they cost on a node.
        let mac = if n.if_type == 32 {
            "00:00:10:29:fe:80:00:00:00:00:00:00:a0:88:c2:03:00:00:00:00"
        } else {
            "0c:42:a1:00:00:01"
        };
        self.w(dir.join("address"), mac);
        self.w(dir.join("tx_queue_len"), "1000");
        for c in
            ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_dropped", "tx_dropped"]
        {
            self.w(dir.join("statistics").join(c), "0");
        }
        self.mk(dir.join("queues/rx-0"));
        self.mk(dir.join("queues/tx-0"));
        let mut uevent = format!("INTERFACE={}\nIFINDEX={}", n.name, self.next_ifindex - 1);
        if let Some(d) = n.devtype {
            uevent = format!("DEVTYPE={d}\n{uevent}");
            if d == "vlan" {
                self.vlans.push((n.name.clone(), n.lower.first().cloned().unwrap_or_default()));
            }
        }
        self.w(dir.join("uevent"), &uevent);
        if n.bonding {
            self.w(dir.join("bonding/mode"), "active-backup 1");
        }
        if n.bridge {
            self.w(dir.join("bridge/stp_state"), "0");
        }
        if let Some(m) = &n.master {
            self.link(dir.join("master"), format!("sys/devices/virtual/net/{m}"));
        }
        for l in &n.lower {
            self.link(dir.join(format!("lower_{l}")), format!("sys/class/net/{l}"));
        }
        self.link(format!("sys/class/net/{}", n.name), &dir);
    }

    pub fn addr(&mut self, ifname: &str, cidr: &str) {
        let (ip, len) = cidr.split_once('/').unwrap();
        let len: u8 = len.parse().unwrap();
        if ip.contains(':') {
            self.addrs6.push((ifname.into(), ip.into(), len));
        } else {
            self.addrs4.push((ifname.into(), ip.into(), len));
            let net: ipnet::Ipv4Net = cidr.parse().unwrap();
            self.routes.push((ifname.into(), net.trunc().addr().to_string(), len, None, 0));
        }
    }

    pub fn route(&mut self, ifname: &str, dest: &str, gw: Option<&str>, metric: u32) {
        let (ip, len) = dest.split_once('/').unwrap();
        self.routes.push((ifname.into(), ip.into(), len.parse().unwrap(), gw.map(str::to_string), metric));
    }

    /// Write `proc/net/{fib_trie,route,if_inet6}` from the addresses and routes given.
    pub fn finish(&self) {
        let hex = |ip: &str| {
            let a: std::net::Ipv4Addr = ip.parse().unwrap();
            format!("{:08X}", u32::from(a).swap_bytes())
        };
        let mut route =
            String::from("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT");
        for (i, d, l, g, m) in &self.routes {
            let mask = if *l == 0 { 0 } else { u32::MAX << (32 - l) };
            let mask = std::net::Ipv4Addr::from(mask).to_string();
            let flags = if g.is_some() { 3 } else { 1 };
            route.push_str(&format!(
                "\n{i}\t{}\t{}\t{flags:04X}\t0\t0\t{m}\t{}\t0\t0\t0",
                hex(d),
                hex(g.as_deref().unwrap_or("0.0.0.0")),
                hex(&mask)
            ));
        }
        self.w("proc/net/route", &route);
        let mut trie = String::from("Main:\n  +-- 0.0.0.0/0 3 0 5\nLocal:\n  +-- 0.0.0.0/0 3 0 5\n");
        for (_, ip, _) in &self.addrs4 {
            trie.push_str(&format!("     |-- {ip}\n        /32 host LOCAL\n"));
        }
        trie.push_str("     |-- 127.0.0.1\n        /32 host LOCAL");
        self.w("proc/net/fib_trie", &trie);
        let mut v6 = String::new();
        for (i, ip, l) in &self.addrs6 {
            let a: std::net::Ipv6Addr = ip.parse().unwrap();
            v6.push_str(&format!("{:032x} 02 {:02x} 20 80 {:>8}\n", u128::from(a), l, i));
        }
        self.w("proc/net/if_inet6", v6.trim_end());
        self.w("proc/net/ipv6_route", "");
        let mut vc = String::from("VLAN Dev name\t | VLAN ID\nName-Type: VLAN_NAME_TYPE_RAW_PLUS_VID_NO_PAD");
        for (v, parent) in &self.vlans {
            let id = v.rsplit('.').next().unwrap_or("0");
            vc.push_str(&format!("\n{v:<15}| {id:<5} | {parent}"));
        }
        self.w("proc/net/vlan/config", &vc);
    }
}

/// GPU i's root complex bus on the story node (4 per socket, one switch each).
pub const STORY_RC: [u8; 8] = [0x15, 0x26, 0x37, 0x59, 0x97, 0xa7, 0xb7, 0xd7];
/// The compute HCA paired with GPU i (mlx5_1/mlx5_2 became mlx5_bond_0).
pub const STORY_HCAS: [&str; 8] = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"];

/// GPU i and its HCA under one PCIe switch: RP → US → {DS → GPU, DS → NIC}.
/// A function's `config` file as sysfs shows it to an unprivileged reader: the first 64 bytes of
/// configuration space (type 0 header for an endpoint; type 1 for a bridge, with its primary,
/// secondary and subordinate bus numbers), so that `lspci -tv` reads the tree as a node's.
fn config_space(vendor: u16, device: u16, class: u32, bdf: &str, below: Option<&String>) -> Vec<u8> {
    let bus = |b: &str| b.split(':').nth(1).and_then(|x| u8::from_str_radix(x, 16).ok()).unwrap_or(0);
    let mut c = vec![0u8; 64];
    c[0..2].copy_from_slice(&vendor.to_le_bytes());
    c[2..4].copy_from_slice(&device.to_le_bytes());
    c[4] = 0x06; // memory space, bus master
    c[9] = class as u8;
    c[10] = (class >> 8) as u8;
    c[11] = (class >> 16) as u8;
    if let Some(next) = below {
        c[0x0e] = 0x01;
        c[0x18] = bus(bdf);
        c[0x19] = bus(next);
        c[0x1a] = bus(next);
    }
    c
}

pub fn story_chains(i: usize) -> (Vec<String>, Vec<String>) {
    let r = STORY_RC[i];
    let us = format!("0000:{:02x}:00.0", r + 1);
    let gpu = under_root_port(r, &[us.clone(), format!("0000:{:02x}:00.0", r + 2), format!("0000:{:02x}:00.0", r + 3)]);
    let nic = under_root_port(r, &[us, format!("0000:{:02x}:01.0", r + 2), format!("0000:{:02x}:00.0", r + 4)]);
    (gpu, nic)
}

/// Our users' node: 8 H200, IB HCAs mlx5_0 and mlx5_3..9 (ACTIVE, LIDs 0x11..), mlx5_bond_0
/// (IB link layer, ACTIVE, LID 0, P_Key 0xffff only) under the IPoIB bond `bond0` with VLANs
/// bond0.2102 (198.21.3.0/24), bond0.3102, bond0.4090, management `eno8303` (198.21.151.0/24,
/// default route), IPoIB `ibp*` on each HCA, docker0.
pub fn story(root: &Path) -> Tree {
    let mut t = Tree::new(root);
    t.hostname("gpu-001");
    t.numa(0, "0-55,112-167");
    t.numa(1, "56-111,168-223");
    for i in 0..8 {
        let numa = if i < 4 { 0 } else { 1 };
        let (g, n) = story_chains(i);
        t.gpu(&g, numa, 0x2335);
        let mut port = Port::ib(1, 0x11 + i as u32);
        port.pkeys = vec![0xffff, 0x8001];
        let uv = if i == 0 { 0 } else { i as u32 + 2 };
        let pci = t.hca(STORY_HCAS[i], &n, numa, &[port], uv);
        let bus = STORY_RC[i] + 4;
        t.netdev(&NetDev::ipoib(&format!("ibp{}s0", bus)), Some(&pci));
    }
    // The bonded dual-port card: one RDMA device on function .0, two IPoIB slaves.
    let f0 = under_root_port(0x48, &["0000:49:00.0".to_string()]);
    let f1 = under_root_port(0x48, &["0000:49:00.1".to_string()]);
    let mut bport = Port::ib(1, 0);
    bport.pkeys = vec![0xffff];
    bport.rate = "200 Gb/sec (4X HDR)";
    let p0 = t.hca("mlx5_bond_0", &f0, 0, &[bport], 1);
    let p1 = t.pci(&f1, 0x15b3, 0x101d, 0x020700, 0);
    for (nd, pci) in [("ibp73s0f0", &p0), ("ibp73s0f1", &p1)] {
        let mut d = NetDev::ipoib(nd);
        d.master = Some("bond0".into());
        t.netdev(&d, Some(pci));
    }
    let mut bond = NetDev::ipoib("bond0");
    bond.bonding = true;
    bond.devtype = Some("bond");
    bond.lower = vec!["ibp73s0f0".into(), "ibp73s0f1".into()];
    t.netdev(&bond, None);
    for (vlan, net) in
        [("bond0.2102", "198.21.3.17/24"), ("bond0.3102", "198.21.4.17/24"), ("bond0.4090", "10.40.90.17/24")]
    {
        let mut v = NetDev::ipoib(vlan);
        v.devtype = Some("vlan");
        v.lower = vec!["bond0".into()];
        t.netdev(&v, None);
        t.addr(vlan, net);
    }
    let lom = t.pci(&["pci0000:00".into(), "0000:00:1c.5".into(), "0000:04:00.0".into()], 0x14e4, 0x165f, 0x020000, 0);
    t.netdev(&NetDev::eth("eno8303"), Some(&lom));
    t.addr("eno8303", "198.21.151.17/24");
    t.route("eno8303", "0.0.0.0/0", Some("198.21.151.1"), 0);
    let mut docker = NetDev::eth("docker0").down();
    docker.bridge = true;
    docker.devtype = Some("bridge");
    t.netdev(&docker, None);
    t.addr("docker0", "172.17.0.1/16");
    // Container veths, as a node running a few jobs' containers has them: ~45 netdevs in all.
    for k in 0..28 {
        let mut v = NetDev::eth(&format!("veth{:07x}", 0x3a1f2c0 + k * 0x1d));
        v.master = Some("docker0".into());
        v.speed = 10000;
        t.netdev(&v, None);
    }
    let mut lo = NetDev::eth("lo");
    lo.if_type = 772;
    lo.operstate = "unknown";
    t.netdev(&lo, None);
    t.w("sys/module/nvidia_peermem/version", "550.54.15");
    t.w("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)");
    t.w("usr/lib/x86_64-linux-gnu/libibverbs.so.1", "");
    t.w("usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so", "");
    t.finish();
    t
}

/// A node with no GPU and no RDMA: one Ethernet NIC with an address and a default route.
pub fn plain(root: &Path) -> Tree {
    let mut t = Tree::new(root);
    let nic = t.pci(&["pci0000:00".into(), "0000:00:03.0".into()], 0x1af4, 0x1041, 0x020000, -1);
    t.netdev(&NetDev::eth("eth0"), Some(&nic));
    t.addr("eth0", "10.1.2.3/24");
    t.route("eth0", "0.0.0.0/0", Some("10.1.2.1"), 100);
    let mut lo = NetDev::eth("lo");
    lo.if_type = 772;
    lo.operstate = "unknown";
    t.netdev(&lo, None);
    t.finish();
    t
}

/// A node for the benchmarks: `gpus` GPUs, `hcas` RDMA devices (beyond 8, SR-IOV VFs of the
/// first eight), and ~`extra_netdevs` virtual interfaces.
pub fn scaled(root: &Path, hcas: usize, extra_netdevs: usize) -> Tree {
    scaled_with(root, hcas, extra_netdevs, false)
}

/// `scaled` as an SR-IOV node really looks: every virtual function also has its IPoIB netdev
/// on the function (mlx5 creates one per VF), so the netdev count grows with the functions.
pub fn sriov(root: &Path, hcas: usize) -> Tree {
    scaled_with(root, hcas, 0, true)
}

fn scaled_with(root: &Path, hcas: usize, extra_netdevs: usize, vf_netdevs: bool) -> Tree {
    let mut t = story(root);
    for k in 0..hcas.saturating_sub(9) {
        let pf = k % 8;
        let (_, pf_chain) = story_chains(pf);
        let mut chain = pf_chain.clone();
        let last = chain.pop().unwrap();
        let dev = (k / 8) % 32;
        let func = ((k / 8) / 32 % 7) + 1;
        let base = &last[..last.len() - 4];
        chain.push(format!("{base}{:02x}.{func}", dev + 1));
        let name = format!("mlx5_{}", 10 + k);
        let vf = t.hca(&name, &chain, if pf < 4 { 0 } else { 1 }, &[Port::ib(1, 0x100 + k as u32)], 10 + k as u32);
        let mut pf_dir = PathBuf::from("sys/devices");
        for c in &pf_chain {
            pf_dir.push(c);
        }
        t.make_vf(&vf, &pf_dir);
        if vf_netdevs {
            t.netdev(&NetDev::ipoib(&format!("ibp{}s0v{k}", pf)), Some(&vf));
        }
    }
    for k in 0..extra_netdevs {
        let mut v = NetDev::eth(&format!("veth{k:04x}"));
        v.master = Some("docker0".into());
        t.netdev(&v, None);
    }
    t.finish();
    t
}
