//! The node snapshot: every fact the decisions need, as plain data that saves and replays.
//!
//! Field names are part of the `--json`/`--yaml` contract. Unknown values are `None`, never a
//! guess; what went wrong while reading is in `notes`.

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// 2: `pkey0` added, `pkeys` filled only by `probe --all` (schema 1 snapshots load, migrated).
/// 3: `bridges` (ACS), `host.kernel`, `host.nvidia_module`, `host.iommu_*`, `host.rdma_cm_dev`,
/// `attributes_unread` (schema 1 and 2 snapshots load, migrated: those facts unknown).
pub const SCHEMA: u32 = 3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub schema: u32,
    /// `live`, or the `--root` directory the facts were read from.
    pub source: String,
    pub hostname: Option<String>,
    pub rdma: Vec<RdmaDevice>,
    pub net: Vec<NetIf>,
    pub routes: Vec<Route>,
    pub gpus: Vec<Gpu>,
    pub numa: Vec<NumaNode>,
    pub host: HostFacts,
    /// NVLink counts between GPUs (bus-order indices), from `nvidia-smi topo -m` when it ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlinks: Vec<NvLink>,
    /// The PCIe bridges above the GPUs and the (physical) RDMA devices, with their ACS state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bridges: Vec<Bridge>,
    pub notes: Vec<String>,
}

/// A PCIe bridge (switch or root port) on a GPU's or an HCA's path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bridge {
    pub bdf: String,
    pub acs: Acs,
    /// The ACS Control register (extended capability 0x000D, offset 6) when `acs` is `read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acs_ctrl: Option<u16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Acs {
    /// The capability was found and its control register read.
    Read,
    /// Configuration space was readable and has no ACS capability.
    Absent,
    /// Only the first 64 or 256 bytes were readable (an unprivileged reader, a captured tree
    /// without `config`): unknown, never taken for "off".
    Unreadable,
}

/// ACS Control bits that send peer-to-peer traffic away from the switch: P2P Request Redirect,
/// P2P Completion Redirect, P2P Egress Control (PCIe base spec, ACS Control register).
pub const ACS_P2P_RR: u16 = 1 << 2;
pub const ACS_P2P_CR: u16 = 1 << 3;
pub const ACS_P2P_EC: u16 = 1 << 5;

impl Bridge {
    /// Whether ACS redirects or blocks peer-to-peer through this bridge; None when unknown.
    pub fn redirects(&self) -> Option<bool> {
        match self.acs {
            Acs::Read => self.acs_ctrl.map(|c| c & (ACS_P2P_RR | ACS_P2P_CR | ACS_P2P_EC) != 0),
            Acs::Absent => Some(false),
            Acs::Unreadable => None,
        }
    }
}

/// NV# counts between GPUs, as `nvidia-smi topo -m` prints them (parsed by `crate::nvsmi`).
pub use crate::nvsmi::NvLink;

/// A PCI function and the chain of bridges above it, as the kernel's device tree shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PciFunction {
    /// `0000:1a:00.0`; 32-bit domains (`10000:00:04.0`) are kept as written.
    pub bdf: String,
    /// Root complex, e.g. `pci0000:00`.
    pub root: String,
    /// Bridges from the root port down to (not including) this function.
    pub bridges: Vec<String>,
    pub numa_node: Option<i32>,
    pub vendor: Option<u32>,
    pub device: Option<u32>,
    pub class: Option<u32>,
    pub link: PciLink,
    /// For an SR-IOV virtual function: its physical function.
    pub physfn: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PciLink {
    pub current_speed: Option<String>,
    pub current_width: Option<u32>,
    pub max_speed: Option<String>,
    pub max_width: Option<u32>,
}

impl PciLink {
    /// `(current, max)` lanes when the link trained narrower than it can run. Speed is left out:
    /// GPUs lower it when idle, so only the width is a fault on every device.
    pub fn narrower(&self) -> Option<(u32, u32)> {
        match (self.current_width, self.max_width) {
            (Some(c), Some(m)) if c < m => Some((c, m)),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RdmaDevice {
    pub name: String,
    pub pci: Option<PciFunction>,
    pub node_type: Option<String>,
    pub node_guid: Option<String>,
    pub sys_image_guid: Option<String>,
    pub fw_ver: Option<String>,
    pub board_id: Option<String>,
    pub hca_type: Option<String>,
    pub ports: Vec<RdmaPort>,
    /// `uverbs3`, from `/sys/class/infiniband_verbs/*/ibdev`.
    pub uverbs: Option<String>,
    /// `231:195`, the char device numbers of the uverbs node.
    pub uverbs_dev: Option<String>,
    /// Whether `/dev/infiniband/<uverbs>` exists under the root.
    pub uverbs_node_present: bool,
    /// `umadN`/`issmN` management nodes for this device.
    pub mad: Vec<String>,
    /// A link-aggregation device such as `mlx5_bond_0`.
    pub is_bond: bool,
    /// PCI functions behind a bond device (its netdev's bond slaves).
    pub bond_members: Vec<String>,
    pub virtual_function: bool,
    /// Network interfaces on this device's PCI function.
    pub netdevs: Vec<String>,
    /// An SR-IOV virtual function whose physical function is an RDMA device, as `probe` reads
    /// it without `--all`: excluded in favour of its PF, so its ports and descriptive attributes
    /// (and its PCI function's) were not read. Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attributes_unread: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
pub enum LinkLayer {
    InfiniBand,
    Ethernet,
    Unknown,
}

impl std::fmt::Display for LinkLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            LinkLayer::InfiniBand => "InfiniBand",
            LinkLayer::Ethernet => "Ethernet",
            LinkLayer::Unknown => "unknown",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RdmaPort {
    pub port: u32,
    /// Numeric state (4 = ACTIVE) and its name as sysfs prints it.
    pub state: Option<u8>,
    pub state_name: Option<String>,
    /// Numeric physical state (5 = LinkUp) and its name.
    pub phys_state: Option<u8>,
    pub phys_state_name: Option<String>,
    pub link_layer: Option<LinkLayer>,
    /// As sysfs prints it: `400 Gb/sec (4X NDR)`.
    pub rate: Option<String>,
    pub rate_gbps: Option<f64>,
    pub lid: Option<u32>,
    pub sm_lid: Option<u32>,
    /// The P_Key at index 0 of the port's table: the one NCCL's queue pairs use (net_ib sets
    /// `pkey_index` from NCCL_IB_PKEY, default 0), so the one that decides who can talk to whom.
    #[serde(default)]
    pub pkey0: Option<u16>,
    /// Every P_Key in use in the table, in index order (`probe --all` only: the table has 128
    /// entries on a ConnectX InfiniBand port, nearly all empty).
    pub pkeys: Vec<u16>,
    /// Non-zero GID table entries: InfiniBand, the port GID (index 0; every entry with
    /// `probe --all`); RoCE, every populated entry (the hook stops at the first usable one).
    pub gids: Vec<Gid>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gid {
    pub index: u32,
    pub gid: String,
    /// `IB/RoCE v1` or `RoCE v2`.
    pub gid_type: Option<String>,
    pub netdev: Option<String>,
}

impl Gid {
    /// The IPv4 address of an IPv4-mapped GID (`::ffff:a.b.c.d`), which is what RoCE v2 routes on.
    pub fn ipv4_mapped(&self) -> Option<std::net::Ipv4Addr> {
        let hex: String = self.gid.chars().filter(|c| *c != ':').collect();
        if hex.len() != 32 {
            return None;
        }
        let n = u128::from_str_radix(&hex, 16).ok()?;
        std::net::Ipv6Addr::from(n).to_ipv4_mapped()
    }

    pub fn is_link_local(&self) -> bool {
        self.gid.to_ascii_lowercase().starts_with("fe80:")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IfKind {
    /// Backed by a PCI function.
    Physical,
    Loopback,
    Bond,
    Vlan,
    Bridge,
    Veth,
    /// docker0, cni0, flannel.1, cali*, br-*, virbr*, vxlan, WireGuard, tailscale.
    Container,
    /// Any other software interface.
    Virtual,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IfType {
    Ethernet,
    Infiniband,
    Loopback,
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetIf {
    pub name: String,
    pub ifindex: Option<u32>,
    pub if_type: IfType,
    pub kind: IfKind,
    pub operstate: Option<String>,
    /// IFF_UP from the interface flags.
    pub admin_up: Option<bool>,
    pub carrier: Option<bool>,
    pub mtu: Option<u32>,
    pub speed_mbps: Option<u64>,
    pub master: Option<String>,
    pub lowers: Vec<String>,
    pub pci: Option<PciFunction>,
    pub rdma_device: Option<String>,
    pub addrs: Vec<IpNet>,
    /// An interface without an address on such a virtual function, as `probe` reads it without
    /// `--all`: name, kind and PCI function only. Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attributes_unread: bool,
}

impl NetIf {
    /// An interface known by name and kind only (the hook's probe reads nothing more of an
    /// address-less software interface).
    pub fn unread(name: &str, kind: IfKind) -> NetIf {
        NetIf {
            name: name.to_string(),
            ifindex: None,
            if_type: IfType::Other,
            kind,
            operstate: None,
            admin_up: None,
            carrier: None,
            mtu: None,
            speed_mbps: None,
            master: None,
            lowers: Vec::new(),
            pci: None,
            rdma_device: None,
            addrs: Vec::new(),
            attributes_unread: false,
        }
    }

    /// Up and with carrier, as NCCL's IFF_UP|IFF_RUNNING test wants it.
    pub fn is_running(&self) -> bool {
        let up = match self.operstate.as_deref() {
            Some("up") => true,
            // Loopback and some virtual devices report "unknown" while working.
            Some("unknown") => self.admin_up.unwrap_or(true),
            Some(_) => false,
            None => self.admin_up.unwrap_or(false),
        };
        up && self.carrier.unwrap_or(up)
    }

    pub fn routable_addr(&self, v4: bool) -> Option<IpNet> {
        self.addrs.iter().copied().find(|a| match a.addr() {
            IpAddr::V4(ip) if v4 => !ip.is_loopback() && !ip.is_link_local(),
            IpAddr::V6(ip) if !v4 => !ip.is_loopback() && (ip.segments()[0] & 0xffc0) != 0xfe80,
            _ => false,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    pub dest: IpNet,
    pub gateway: Option<IpAddr>,
    pub iface: String,
    pub metric: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub pci: PciFunction,
    pub model: String,
    pub uuid: Option<String>,
    pub minor: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumaNode {
    pub id: u32,
    pub cpulist: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct HostFacts {
    /// `nvidia_peermem` or `nv_peer_mem` when a GPUDirect peer-memory module is loaded.
    pub peermem: Option<String>,
    /// RLIMIT_MEMLOCK soft limit in bytes; None = unlimited or unknown (see memlock_unlimited).
    pub memlock_bytes: Option<u64>,
    pub memlock_unlimited: Option<bool>,
    /// Entries of `/dev/infiniband` under the root (`uverbs0`, `rdma_cm`, …).
    pub dev_infiniband: Vec<String>,
    /// Where `libibverbs.so.1` and an mlx5 provider were found, if anywhere.
    pub libibverbs: Option<String>,
    pub mlx5_provider: Option<String>,
    /// Whether the library directories were there to look in: a captured or test tree often
    /// holds none, and then "not found" above means "unknown".
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub libs_checked: bool,
    /// True when this process runs inside a container (enroot, docker, …).
    pub in_container: bool,
    /// The NVIDIA kernel driver's version (`/proc/driver/nvidia/version`), e.g. `550.54.15`; it
    /// fixes the CUDA driver API version too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvidia_driver: Option<String>,
    /// The running kernel (`/proc/sys/kernel/osrelease`): DMA-BUF needs ≥ 5.12.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// `open` or `proprietary`: the NVIDIA kernel module's kind, from the first line of
    /// `/proc/driver/nvidia/version` ("NVIDIA UNIX Open Kernel Module" for the open one). DMA-BUF
    /// export of GPU memory needs the open one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvidia_module: Option<String>,
    /// Entries of `/sys/kernel/iommu_groups` (0: no IOMMU translating DMA); None when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iommu_groups: Option<u32>,
    /// Whether the IOMMU passes DMA through untranslated: a group's `type` (`identity`, or
    /// `DMA`/`DMA-FQ`), else `iommu=pt` on the kernel command line; None when neither says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iommu_passthrough: Option<bool>,
    /// `10:58`, the char device numbers of `/dev/infiniband/rdma_cm` (a misc device with a
    /// dynamic minor), from `/sys/class/misc/rdma_cm/dev`; what `ibwire cdi` writes into a spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma_cm_dev: Option<String>,
}

impl Node {
    pub fn rdma_device(&self, name: &str) -> Option<&RdmaDevice> {
        self.rdma.iter().find(|d| d.name == name)
    }

    pub fn iface(&self, name: &str) -> Option<&NetIf> {
        self.net.iter().find(|i| i.name == name)
    }
}

/// Snapshots written before `libs_checked` existed looked for the libraries.
fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// `5.15.0-91-generic` → (5, 15); None when it does not start with two numbers.
pub fn kernel_version(k: &str) -> Option<(u32, u32)> {
    let mut it = k.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// `231:192` (a sysfs `dev` file) as (major, minor); None for anything else.
pub fn parse_dev_numbers(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    let ok = |x: &str| !x.is_empty() && x.len() <= 10 && x.bytes().all(|c| c.is_ascii_digit());
    if !ok(a) || !ok(b) {
        return None;
    }
    Some((a.parse().ok()?, b.parse().ok()?))
}
