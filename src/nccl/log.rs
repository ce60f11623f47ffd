//! Facts from an `NCCL_DEBUG=INFO` log: the network NCCL chose, the HCAs and OOB interface it
//! listed, the bootstrap interface, the transport of every channel, GPUDirect RDMA, warnings.

use super::{is_added_header, unwrap_line};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IbDev {
    pub index: u32,
    pub name: String,
    pub port: u32,
    /// `IB` or `RoCE`.
    pub link: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Channels {
    pub net_ib: usize,
    pub net_ib_gdr: usize,
    pub net_socket: usize,
    pub net_other: usize,
    pub p2p: usize,
    pub shm: usize,
    pub other: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogFacts {
    pub version: Option<String>,
    /// `IB`, `Socket`, `IBext_v8`, `AWS Libfabric`…; `mixed` when ranks disagree.
    pub network: Option<String>,
    pub networks_seen: Vec<String>,
    pub ib_devices: Vec<IbDev>,
    pub ib_no_device: bool,
    pub oob_if: Option<String>,
    pub bootstrap_ifs: Vec<String>,
    pub socket_ifs: Vec<String>,
    /// `NCCL_*` variables NCCL reported as set by the environment.
    pub env_set: Vec<(String, String)>,
    pub channels: Channels,
    /// Some(true) when inter-node channels carry `/GDRDMA`, Some(false) when they do not (or
    /// NCCL said "GPU Direct RDMA Disabled"), None when no network channel was logged.
    pub gdr: Option<bool>,
    pub warns: Vec<String>,
    /// errno of failed `ibv_modify_qp` calls (22 EINVAL, 110 ETIMEDOUT, 19 ENODEV).
    pub modify_qp_errnos: Vec<i32>,
    pub nranks: Option<usize>,
    pub hosts: Vec<String>,
    /// NCCL error results and their "Last error" text (ncclInternalError, unhandled system error…).
    pub errors: Vec<String>,
    pub lines: usize,
    /// Lines NCCL itself wrote (`NCCL INFO`/`NCCL WARN`): zero means NCCL never ran or logged.
    #[serde(default)]
    pub nccl_lines: usize,
}

impl LogFacts {
    /// The network NCCL used: its own word, else what the channel lines show.
    pub fn observed(&self) -> Option<String> {
        self.network.clone().or_else(|| {
            let c = &self.channels;
            if c.net_ib > 0 {
                Some("IB".into())
            } else if c.net_socket > 0 {
                Some("Socket".into())
            } else {
                None
            }
        })
    }
    /// RDMA: any network starting with IB (internal plugin, IBext) or libfabric/OFI (EFA).
    pub fn on_rdma(&self) -> bool {
        self.observed().map(|n| n.starts_with("IB") || n.contains("Libfabric") || n.contains("OFI")).unwrap_or(false)
    }
    /// Inter-node channels were logged: the job spans nodes whatever the excerpt's hosts.
    pub fn crossed_network(&self) -> bool {
        let c = &self.channels;
        c.net_ib + c.net_socket + c.net_other > 0
    }
    /// NVLink SHARP was turned off (NCCL_NVLS_ENABLE=0).
    pub fn nvls_off(&self) -> bool {
        self.env("NCCL_NVLS_ENABLE") == Some("0")
    }
    pub fn env(&self, k: &str) -> Option<&str> {
        self.env_set.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
}

/// `name:ip<port>` → `name`.
fn if_name(s: &str) -> String {
    s.split(':').next().unwrap_or("").trim().to_string()
}

fn after<'a>(l: &'a str, pat: &str) -> Option<&'a str> {
    l.find(pat).map(|i| &l[i + pat.len()..])
}

/// The host that wrote an NCCL line (`host:pid:tid [dev] NCCL …`), if it is one.
pub fn line_host(raw: &str) -> Option<&str> {
    let l = unwrap_line(raw);
    if !(l.contains(" NCCL INFO") || l.contains(" NCCL WARN")) {
        return None;
    }
    let head = &l[..l.find(" [")?];
    let mut it = head.rsplitn(3, ':');
    let (tid, pid, host) = (it.next()?, it.next()?, it.next()?);
    let num = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    (num(tid) && num(pid) && !host.is_empty() && !host.contains(' ')).then_some(host)
}

/// Each host's NCCL lines, for a per-node view of a log that several nodes wrote.
pub fn by_host(text: &str) -> std::collections::BTreeMap<String, String> {
    let mut m: std::collections::BTreeMap<String, String> = Default::default();
    for raw in text.lines() {
        if let Some(h) = line_host(raw) {
            let e = m.entry(h.to_string()).or_default();
            e.push_str(raw);
            e.push('\n');
        }
    }
    m
}

/// What one node's NCCL reported, in NCCL's words: `IB, GDRDMA, 8 HCAs` or `Socket`.
pub fn node_summary(f: &LogFacts) -> String {
    let net = f.observed().unwrap_or_else(|| "network not shown".into());
    let mut parts = vec![net];
    match f.gdr {
        Some(true) => parts.push("GDRDMA".into()),
        Some(false) if f.on_rdma() => parts.push("no GDRDMA".into()),
        _ => {}
    }
    if !f.ib_devices.is_empty() {
        parts.push(format!("{} HCA port{}", f.ib_devices.len(), if f.ib_devices.len() == 1 { "" } else { "s" }));
    }
    if f.ib_no_device {
        parts.push("NET/IB : No device found".into());
    }
    parts.join(", ")
}

pub fn analyse(text: &str) -> LogFacts {
    let mut f = LogFacts::default();
    let mut networks: BTreeSet<String> = BTreeSet::new();
    let mut boot: BTreeSet<String> = BTreeSet::new();
    let mut hosts: BTreeSet<String> = BTreeSet::new();
    let mut warns: Vec<String> = Vec::new();
    // Seen-sets beside the ordered lists: a log of 200 000 distinct WARN lines must stay linear.
    let mut seen: std::collections::HashSet<(u8, String)> = std::collections::HashSet::new();
    let mut seen_dev: std::collections::HashSet<(String, u32)> = std::collections::HashSet::new();
    let mut gdr_disabled = false;
    for raw in text.lines() {
        if is_added_header(raw) {
            continue;
        }
        let l = unwrap_line(raw);
        if l.is_empty() {
            continue;
        }
        f.lines += 1;
        if l.contains(" NCCL INFO") || l.contains(" NCCL WARN") {
            f.nccl_lines += 1;
            // `host:pid:tid [dev] …`: the host is what precedes the numeric pid and tid.
            if let Some(i) = l.find(" [") {
                let parts: Vec<&str> = l[..i].split(':').collect();
                let n = parts.len();
                if n >= 3
                    && [parts[n - 1], parts[n - 2]]
                        .iter()
                        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                {
                    let h = parts[..n - 2].join(":");
                    if !h.is_empty() && !h.contains(' ') {
                        hosts.insert(h);
                    }
                }
            }
        }
        if let Some(v) = after(l, "NCCL version ") {
            f.version.get_or_insert_with(|| v.split_whitespace().next().unwrap_or("").to_string());
        }
        if let Some(v) = after(l, "Using network ") {
            networks.insert(v.trim().to_string());
        }
        if let Some(v) = after(l, "Bootstrap : Using ").or_else(|| after(l, "Bootstrap: Using ")) {
            boot.insert(if_name(v));
        }
        if l.contains("NET/IB : No device found") {
            f.ib_no_device = true;
        }
        if let Some(v) = after(l, "NET/IB : Using ") {
            let (devs, oob) = match v.split_once("; OOB ") {
                Some((d, o)) => (d, Some(o)),
                None => (v, None),
            };
            if let Some(o) = oob {
                f.oob_if = Some(if_name(o));
            }
            for tok in devs.split_whitespace() {
                let Some(rest) = tok.strip_prefix('[') else { continue };
                let Some((idx, body)) = rest.split_once(']') else { continue };
                let Ok(index) = idx.parse::<u32>() else { continue };
                let mut sl = body.split('/');
                let id = sl.next().unwrap_or("");
                let link = sl.next().unwrap_or("").to_string();
                let mut c = id.split(':');
                let name = c.next().unwrap_or("").to_string();
                let port = c.next().and_then(|p| p.parse().ok()).unwrap_or(0);
                if seen_dev.insert((name.clone(), port)) {
                    f.ib_devices.push(IbDev { index, name, port, link });
                }
            }
        }
        if let Some(v) = after(l, "NET/Socket : Using ") {
            for tok in v.split_whitespace() {
                if let Some((_, body)) = tok.strip_prefix('[').and_then(|r| r.split_once(']')) {
                    let n = if_name(body);
                    if seen.insert((0, n.clone())) {
                        f.socket_ifs.push(n);
                    }
                }
            }
        }
        if let Some(v) = after(l, " set by environment to ") {
            let name = l[..l.find(" set by environment to ").unwrap()].rsplit(' ').next().unwrap_or("").to_string();
            let val = v.trim().trim_end_matches('.').to_string();
            if name.starts_with("NCCL_") && !f.env_set.iter().any(|(n, _)| n == &name) {
                f.env_set.push((name, val));
            }
        }
        if let Some(v) = after(l, " via ") {
            let t = v.split_whitespace().next().unwrap_or("");
            let c = &mut f.channels;
            if t.starts_with("NET/IB") {
                c.net_ib += 1;
                if t.contains("/GDRDMA") {
                    c.net_ib_gdr += 1;
                }
            } else if t.starts_with("NET/Socket") {
                c.net_socket += 1;
            } else if t.starts_with("NET/") {
                c.net_other += 1;
                if t.contains("/GDRDMA") {
                    c.net_ib_gdr += 1;
                }
            } else if t.starts_with("P2P") {
                c.p2p += 1;
            } else if t.starts_with("SHM") {
                c.shm += 1;
            } else {
                c.other += 1;
            }
        }
        if l.contains("GPU Direct RDMA Disabled") {
            gdr_disabled = true;
        }
        if let Some(v) = after(l, " nranks ") {
            if let Some(n) = v.split_whitespace().next().and_then(|n| n.parse().ok()) {
                f.nranks = Some(f.nranks.map_or(n, |m: usize| m.max(n)));
            }
        }
        for pat in [
            "ncclInternalError",
            "ncclSystemError",
            "ncclRemoteError",
            "ncclInvalidUsage",
            "unhandled system error",
            "ncclSocketInit:",
        ] {
            if let Some(i) = l.find(pat) {
                let msg = l[i..].trim().to_string();
                if seen.insert((1, msg.clone())) {
                    f.errors.push(msg);
                }
                break;
            }
        }
        if let Some(i) = l.find("NCCL WARN ") {
            let msg = l[i + "NCCL WARN ".len()..].trim().to_string();
            if let Some(m) = after(&msg, "ibv_modify_qp failed with ") {
                // ≥2.24: "with 22 Invalid argument, on dev …"; ≤2.23: "with error Invalid argument errno 22"
                let n = m.split_whitespace().next().and_then(|x| x.parse::<i32>().ok()).or_else(|| {
                    after(m, "errno ").and_then(|e| e.split_whitespace().next()).and_then(|x| x.parse().ok())
                });
                if let Some(n) = n {
                    f.modify_qp_errnos.push(n);
                }
            }
            if seen.insert((2, msg.clone())) {
                warns.push(msg);
            }
        }
    }
    f.modify_qp_errnos.sort_unstable();
    f.modify_qp_errnos.dedup();
    f.networks_seen = networks.iter().cloned().collect();
    f.network = match networks.len() {
        0 => None,
        1 => networks.into_iter().next(),
        _ => Some("mixed".into()),
    };
    f.bootstrap_ifs = boot.into_iter().collect();
    f.hosts = hosts.into_iter().collect();
    f.warns = warns;
    let net_channels = f.channels.net_ib + f.channels.net_socket + f.channels.net_other;
    f.gdr = if f.channels.net_ib_gdr > 0 {
        Some(true)
    } else if net_channels > 0 || gdr_disabled {
        Some(false)
    } else {
        None
    };
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_modify_qp_formats() {
        let t = "h:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR\n\
                 h:1:2 [0] misc/ibvwrap.cc:206 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110\n";
        assert_eq!(analyse(t).modify_qp_errnos, vec![22, 110]);
    }

    #[test]
    fn empty_using_list_on_a_real_h200() {
        let f = analyse(include_str!("../../tests/fixtures/h200-1gpu/nccl-allreduce-1gpu.log"));
        assert!(f.ib_no_device);
        assert!(f.ib_devices.is_empty());
        assert_eq!(f.oob_if.as_deref(), Some("eth0"));
        assert_eq!(f.network.as_deref(), Some("Socket"));
        assert_eq!(f.version.as_deref(), Some("2.28.9+cuda13.0"));
        assert_eq!(f.bootstrap_ifs, vec!["eth0"]);
    }

    #[test]
    fn truncated_and_garbage_lines_are_harmless() {
        let f = analyse("h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/I\n\u{0}\u{1}garbage\nh:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] via");
        assert_eq!(f.ib_devices.len(), 1);
        assert_eq!(f.channels, Channels::default());
    }
}
