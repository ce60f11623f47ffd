//! Host name → address, with a deadline: a dead DNS server must not stall a job start.
//!
//! The static (musl) build's resolver reads `/etc/hosts` and DNS only; glibc's also asks the NSS
//! modules of `/etc/nsswitch.conf` (SSSD, LDAP, NIS, `myhostname`). Where a cluster's node names
//! resolve only through such a module, the static build asks the host's `getent ahosts` — glibc,
//! with every module — before it gives up, within the same deadline.

use anyhow::{anyhow, bail, Result};
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn resolve(host: &str, limit: Duration) -> Result<IpAddr> {
    let start = Instant::now();
    let r = resolve_libc(host, limit);
    if r.is_err() && cfg!(target_env = "musl") && !host.starts_with('-') && host.parse::<IpAddr>().is_err() {
        let left = limit.saturating_sub(start.elapsed());
        if let Some(ip) = getent(host, left) {
            return Ok(ip);
        }
    }
    r
}

/// The first address `getent ahosts NAME` prints (an IPv4 one if any), within `limit`.
pub fn getent(host: &str, limit: Duration) -> Option<IpAddr> {
    let bin = ["/usr/bin/getent", "/bin/getent"].into_iter().find(|p| std::path::Path::new(p).exists())?;
    if limit.is_zero() {
        return None;
    }
    let mut c = std::process::Command::new(bin);
    c.args(["ahosts", "--", host]).env_clear();
    let out = crate::subprocess::run(c, limit).ok()?;
    if out.status != Some(0) {
        return None;
    }
    let addrs: Vec<IpAddr> = out.stdout.lines().filter_map(|l| l.split_whitespace().next()?.parse().ok()).collect();
    addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()).copied()
}

fn resolve_libc(host: &str, limit: Duration) -> Result<IpAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(ip);
    }
    if host.is_empty() || host.len() > 253 || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!("{:?} is not a valid host name", crate::text::printable(host, 80));
    }
    let (tx, rx) = mpsc::channel();
    let h = host.to_string();
    std::thread::spawn(move || {
        let _ = tx.send((h.as_str(), 0u16).to_socket_addrs().map(|it| it.map(|a| a.ip()).collect::<Vec<_>>()));
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(addrs)) => addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or(addrs.first())
            .copied()
            .ok_or_else(|| anyhow!("{host} resolves to no address")),
        Ok(Err(e)) => bail!("cannot resolve {host}: {e}"),
        Err(_) => bail!("resolving {host} took longer than {}s", limit.as_secs()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn getent_answers_what_nss_knows() {
        if super::getent("localhost", std::time::Duration::from_secs(5)).is_none()
            && !std::path::Path::new("/usr/bin/getent").exists()
        {
            eprintln!("skipped: no getent on this machine");
            return;
        }
        assert!(super::getent("localhost", std::time::Duration::from_secs(5)).is_some_and(|ip| ip.is_loopback()));
        assert_eq!(super::getent("no-such-host.invalid", std::time::Duration::from_secs(5)), None);
        assert_eq!(super::getent("localhost", std::time::Duration::ZERO), None);
    }
}
