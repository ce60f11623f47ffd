//! The interface NCCL bootstraps over: NCCL_SOCKET_IFNAME (and gloo's GLOO_SOCKET_IFNAME).
//!
//! Rank 0's bootstrap address is embedded in the unique id every rank connects to, so the
//! interface must reach the other nodes (spec nccl-rules.md §3.3). With a master address the
//! answer is the interface that routes to it; without one, a documented fallback order.

use super::{nccl_list_safe, Finding, Master, Severity};
use crate::probe::{IfKind, IfType, NetIf, Node};
use ipnet::IpNet;
use std::net::IpAddr;

#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub iface: String,
    pub addr: IpNet,
    /// Which rule applied and the evidence.
    pub reason: String,
    /// Said beside the choice: another interface's route ties with the chosen one.
    pub warning: Option<Finding>,
}

/// Interfaces whose routes to `ip` tie with the best one (same prefix length and metric) on
/// another interface: the kernel takes the first in its table, an application may take another
/// (NCCL's bootstrap and the job's own rendezvous then disagree). Empty without a tie.
pub fn route_ties(node: &Node, ip: IpAddr) -> Vec<String> {
    if node.net.iter().any(|i| i.addrs.iter().any(|a| a.addr() == ip)) {
        return Vec::new();
    }
    let matching: Vec<&crate::probe::Route> = node.routes.iter().filter(|r| r.dest.contains(&ip)).collect();
    let Some(best) = matching.iter().map(|r| (r.dest.prefix_len(), std::cmp::Reverse(r.metric))).max() else {
        return Vec::new();
    };
    let mut ifs: Vec<String> = matching
        .iter()
        .filter(|r| (r.dest.prefix_len(), std::cmp::Reverse(r.metric)) == best)
        .map(|r| r.iface.clone())
        .collect();
    ifs.sort();
    ifs.dedup();
    if ifs.len() > 1 {
        ifs
    } else {
        Vec::new()
    }
}

/// The route this node would use to reach `ip`: longest prefix, then lowest metric.
pub fn route_to(node: &Node, ip: IpAddr) -> Option<(&str, String)> {
    if let Some(i) = node.net.iter().find(|i| i.addrs.iter().any(|a| a.addr() == ip)) {
        return Some((i.name.as_str(), format!("{ip} is this node's own address on {}", i.name)));
    }
    if let Some(r) = node
        .routes
        .iter()
        .filter(|r| r.dest.contains(&ip))
        .max_by(|a, b| a.dest.prefix_len().cmp(&b.dest.prefix_len()).then(b.metric.cmp(&a.metric)))
    {
        let via = r.gateway.map(|g| format!(" via {g}")).unwrap_or_default();
        let what = if r.dest.prefix_len() == 0 { "the default route".to_string() } else { format!("route {}", r.dest) };
        return Some((r.iface.as_str(), format!("{what}{via} dev {} reaches {ip}", r.iface)));
    }
    // A snapshot without a route table: fall back to connected subnets.
    node.net.iter().find_map(|i| {
        i.addrs.iter().find(|a| a.contains(&ip)).map(|a| (i.name.as_str(), format!("{ip} is on {a} of {}", i.name)))
    })
}

fn usable(i: &NetIf, v4: bool) -> Result<IpNet, String> {
    if !i.is_running() {
        return Err(format!(
            "{} is not up with carrier (operstate {})",
            i.name,
            i.operstate.as_deref().unwrap_or("unknown")
        ));
    }
    i.routable_addr(v4)
        .ok_or_else(|| format!("{} has no {} address that is not link-local", i.name, if v4 { "IPv4" } else { "IPv6" }))
}

fn check_name(name: &str) -> Result<(), String> {
    if nccl_list_safe(name) {
        Ok(())
    } else {
        Err(format!("interface name {name:?} cannot be written exactly in NCCL_SOCKET_IFNAME"))
    }
}

/// `one_node`: Slurm says the job is one node, so no other node needs to reach the master.
pub fn choose(
    node: &Node,
    master: Option<&Master>,
    configured: Option<&str>,
    one_node: bool,
) -> Result<Choice, Finding> {
    match (master, configured) {
        (Some(m), _) => toward_master(node, m, configured, one_node),
        (None, Some(c)) => configured_iface(node, c),
        (None, None) => fallback(node),
    }
}

/// The bootstrap interface cannot be chosen: why, and what to do.
fn err(msg: String, fix: &str) -> Finding {
    Finding::new(Severity::Error, "NCCL_SOCKET_IFNAME", msg).fix(fix)
}

fn fail(msg: String, fix: &str) -> Result<Choice, Finding> {
    Err(err(msg, fix))
}

/// The interface that routes to the master (the configured one must be it).
fn toward_master(node: &Node, m: &Master, configured: Option<&str>, one_node: bool) -> Result<Choice, Finding> {
    let v4 = m.ip.is_ipv4();
    // Debian's installer writes `127.0.1.1 <hostname>` into /etc/hosts: the master's own
    // name then resolves to loopback, which no other node can reach — which matters only
    // for a job over nodes (under real pyxis every one-node job warned of it).
    if m.ip.is_loopback() && m.name.parse::<IpAddr>().is_err() && m.name != "localhost" && !one_node {
        return fail(
            format!(
                "the master {} resolves to {}, a loopback address (a `127.0.1.1 {}` line in /etc/hosts?): other nodes cannot reach it",
                m.name, m.ip, m.name
            ),
            "give the master's routable IP (--master-addr or MASTER_ADDR), or make its name resolve to that IP on every node (fix /etc/hosts)",
        );
    }
    if let Some(c) = loopback_master(node, m, configured) {
        return Ok(c);
    }
    let Some((ifname, why)) = route_to(node, m.ip) else {
        return fail(
            format!("no interface routes to the master {} ({})", m.name, m.ip),
            "check the master address, or add a route to it",
        );
    };
    if let Some(c) = configured {
        if c != ifname {
            return fail(
                format!("configured bootstrap interface {c} does not route to the master {} ({}): {why}", m.name, m.ip),
                &format!("remove bootstrap_interface from the config, or set it to {ifname}"),
            );
        }
    }
    let Some(i) = node.iface(ifname) else {
        return fail(format!("route to {} names {ifname}, which does not exist", m.ip), "check the routing table");
    };
    check_name(ifname).map_err(|e| err(e, "rename the interface or pin another one"))?;
    let addr = usable(i, v4).map_err(|e| {
        err(format!("{e}, but it is the route to the master {}", m.ip), "bring the interface up or fix its address")
    })?;
    let warning = tie_warning(node, m, ifname, configured);
    Ok(Choice {
        iface: ifname.to_string(),
        addr,
        reason: format!("routes to the master {} ({}): {why}; address {addr}", m.name, m.ip),
        warning,
    })
}

/// A loopback master given as such (127.0.0.1, ::1), or any loopback master of a one-node
/// job: bootstrapped on loopback. Other nodes cannot reach it; launch refuses it for a
/// job over nodes.
fn loopback_master(node: &Node, m: &Master, configured: Option<&str>) -> Option<Choice> {
    if !m.ip.is_loopback() || configured.is_some() {
        return None;
    }
    let (lo, addr) = node.net.iter().find_map(|i| i.addrs.iter().find(|a| a.contains(&m.ip)).map(|a| (i, *a)))?;
    Some(Choice {
        iface: lo.name.clone(),
        addr,
        reason: format!(
            "the master {} is this node's loopback ({}, address {addr}): a one-node job; a job over nodes needs the master's routable address (--master-addr)",
            m.name, lo.name
        ),
        warning: None,
    })
}

/// Routes to the master that tie (same prefix and metric): which one leaves is the kernel's pick.
fn tie_warning(node: &Node, m: &Master, ifname: &str, configured: Option<&str>) -> Option<Finding> {
    let ties = route_ties(node, m.ip);
    (ties.len() > 1 && configured.is_none()).then(|| {
        Finding::new(
            Severity::Warning,
            "NCCL_SOCKET_IFNAME",
            format!(
                "routes to the master {} ({}) tie on {} (same prefix and metric): ibwire takes {ifname}, the kernel the first in its table, and another program may take another one, so NCCL's bootstrap and the job's rendezvous can leave on different interfaces",
                m.name,
                m.ip,
                ties.join(" and ")
            ),
        )
        .fix(format!(
            "pick one: bootstrap_interface: {ifname} in the config (or NCCL_SOCKET_IFNAME={ifname}), or give the other route a higher metric"
        ))
    })
}

/// The configured interface, with no master to route to.
fn configured_iface(node: &Node, c: &str) -> Result<Choice, Finding> {
    let Some(i) = node.iface(c) else {
        return fail(
            format!("configured bootstrap interface {c} does not exist on this node"),
            "fix bootstrap_interface in the config",
        );
    };
    check_name(c).map_err(|e| err(e, "pin another interface"))?;
    let addr =
        usable(i, true).or_else(|_| usable(i, false)).map_err(|e| err(e, "bring it up or pin another interface"))?;
    Ok(Choice {
        iface: c.to_string(),
        addr,
        reason: format!("configured bootstrap_interface; address {addr}"),
        warning: None,
    })
}

/// No master and nothing configured: the default-route interface, else the first up physical one.
fn fallback(node: &Node) -> Result<Choice, Finding> {
    if let Some(r) =
        node.routes.iter().filter(|r| r.dest.prefix_len() == 0 && r.dest.addr().is_ipv4()).min_by_key(|r| r.metric)
    {
        if let Some(i) = node.iface(&r.iface) {
            if let (Ok(addr), Ok(())) = (usable(i, true), check_name(&i.name)) {
                return Ok(Choice {
                    iface: i.name.clone(),
                    addr,
                    reason: format!("no master address given: the default-route interface; address {addr}"),
                    warning: None,
                });
            }
        }
    }
    let first = node.net.iter().find(|i| {
        i.kind == IfKind::Physical
            && i.if_type != IfType::Loopback
            && usable(i, true).is_ok()
            && nccl_list_safe(&i.name)
    });
    match first {
        Some(i) => {
            let addr = usable(i, true).unwrap();
            Ok(Choice {
                iface: i.name.clone(),
                addr,
                reason: format!(
                    "no master address and no default route: the first up physical interface with IPv4; address {addr}"
                ),
                warning: None,
            })
        }
        None => fail(
            "no up physical interface with an IPv4 address: cannot choose a bootstrap interface".into(),
            "give --master-addr, or set bootstrap_interface in the config",
        ),
    }
}
