//! Host name → address, with a deadline: a dead DNS server must not stall a job start.

use anyhow::{anyhow, bail, Result};
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Duration;

pub fn resolve(host: &str, limit: Duration) -> Result<IpAddr> {
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
