//! Which RDMA devices a container gets: IBWIRE_VISIBLE_DEVICES, or MELLANOX_VISIBLE_DEVICES read
//! exactly as enroot's stock 99-mellanox.sh reads it, or the healthy set.
//!
//! The stock hook's index i is the i-th verbs device in PCI order (its glob is sorted by BDF,
//! then by name); names, PCI addresses and indices are accepted here, unknown entries are warned
//! about and the rest proceed.

use crate::probe::{gpu::bus_key, Node, RdmaDevice};

#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The variable that selected them (IBWIRE_VISIBLE_DEVICES, MELLANOX_VISIBLE_DEVICES, …).
    pub var: String,
    /// Device names, in PCI order.
    pub devices: Vec<String>,
    /// Which variable decided, and how.
    pub source: String,
    /// Entries that named nothing on this node (the first `MAX_UNKNOWN` of them).
    pub unknown: Vec<String>,
    /// How many more named nothing, or were past `MAX_ENTRIES` and not read.
    pub unknown_more: usize,
    /// `void` (the stock hook's "do nothing"): no device decision at all.
    pub void: bool,
}

/// Verbs devices in the stock hook's order: PCI address, then name.
pub fn pci_order(node: &Node) -> Vec<&RdmaDevice> {
    type Keyed<'a> = ((u32, u32, u32, u32), &'a str, &'a RdmaDevice);
    let mut v: Vec<Keyed> = node
        .rdma
        .iter()
        .filter(|d| d.uverbs.is_some())
        .map(|d| (d.pci.as_ref().map(|p| bus_key(&p.bdf)).unwrap_or((u32::MAX, 0, 0, 0)), d.name.as_str(), d))
        .collect();
    v.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    v.into_iter().map(|x| x.2).collect()
}

/// `value` is IBWIRE_VISIBLE_DEVICES (names, PCI addresses, indices) or, with `mellanox`,
/// MELLANOX_VISIBLE_DEVICES (indices only, as the stock hook). `healthy` is the decided set.
/// Entries of a selection read at most: a node has at most a few hundred verbs devices, and
/// the value comes from the job or the image (300 000 names cost 100 ms and 50 MiB unbounded).
pub const MAX_ENTRIES: usize = 4096;
/// Unknown entries named in the warning; the rest are counted.
pub const MAX_UNKNOWN: usize = 16;

pub fn select(node: &Node, var: &str, value: &str, mellanox: bool, healthy: &[String]) -> Selection {
    let order = pci_order(node);
    let v = value.trim();
    let all = || order.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
    let shown = crate::text::printable(v, 200);
    let mk = |devices: Vec<String>, how: &str| Selection {
        var: var.to_string(),
        devices,
        source: format!("{var}={shown} ({how})"),
        unknown: vec![],
        unknown_more: 0,
        void: v == "void",
    };
    match v {
        "" | "none" | "void" => return mk(vec![], "no device"),
        "all" => return mk(all(), "every verbs device"),
        "auto" if !mellanox => {
            let d = order.iter().filter(|d| healthy.contains(&d.name)).map(|d| d.name.clone()).collect();
            return mk(d, "the healthy set");
        }
        _ => {}
    }
    let mut picked: Vec<String> = Vec::new();
    let mut unknown = Vec::new();
    let mut unknown_more = 0;
    let mut entries = v.split(',').map(str::trim).filter(|e| !e.is_empty());
    for e in entries.by_ref().take(MAX_ENTRIES) {
        let hit = if let Ok(i) = e.parse::<usize>() {
            order.get(i).map(|d| d.name.clone())
        } else if mellanox {
            None
        } else {
            order
                .iter()
                .find(|d| {
                    // a name, a full PCI address, or its tail after a ':' (`17:00.0`)
                    d.name == e
                        || d.pci.as_ref().is_some_and(|p| {
                            p.bdf == e
                                || (p.bdf.len() > e.len()
                                    && p.bdf.ends_with(e)
                                    && p.bdf.as_bytes()[p.bdf.len() - e.len() - 1] == b':')
                        })
                })
                .map(|d| d.name.clone())
        };
        match hit {
            Some(n) if !picked.contains(&n) => picked.push(n),
            Some(_) => {}
            None if unknown.len() < MAX_UNKNOWN => unknown.push(e.chars().take(64).collect()),
            None => unknown_more += 1,
        }
    }
    unknown_more += entries.count();
    let mut devices: Vec<String> = order.iter().filter(|d| picked.contains(&d.name)).map(|d| d.name.clone()).collect();
    devices.dedup();
    Selection { var: var.to_string(), devices, source: format!("{var}={shown}"), unknown, unknown_more, void: false }
}
