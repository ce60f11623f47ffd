//! NCCL's device-list syntax and matching, as `NCCL_IB_HCA` and `NCCL_SOCKET_IFNAME` use it
//! (spec nccl-rules.md §1, nccl `misc/utils.cc` parseStringList/matchIfList): an optional
//! leading `^` (exclude), then an optional `=` (exact), then `name[:port]` entries separated by
//! commas; prefix matching unless `=`; no whitespace trimming.

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub port: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    pub exclude: bool,
    pub exact: bool,
    pub entries: Vec<Entry>,
}

/// Parse as NCCL does. It never fails (NCCL accepts anything); `problems` lists what a user
/// almost certainly did not mean.
pub fn parse(v: &str) -> (Filter, Vec<String>) {
    let mut problems = Vec::new();
    let mut s = v;
    let exclude = s.starts_with('^');
    if exclude {
        s = &s[1..];
    }
    let exact = s.starts_with('=');
    if exact {
        s = &s[1..];
    }
    if s.starts_with('^') {
        problems.push("`=^`: NCCL reads `^` after `=` as part of a device name, so nothing matches; write `^=`".into());
    }
    if exclude && s.is_empty() {
        problems.push("an exclusion list with nothing after it (`^` or `^=`) rejects every device".into());
    }
    // NCCL reads at most 32 entries (MAX_IFS): only those are kept, the rest counted, and at
    // most a few problems said, so a hostile value of megabytes costs its length, not a message
    // per entry (hostile round 4 #5).
    let mut entries = Vec::new();
    let mut more = 0usize;
    for raw in s.split(',') {
        if raw.is_empty() {
            continue;
        }
        if entries.len() >= 32 {
            more += 1;
            continue;
        }
        if problems.len() >= 8 {
            let mut f = raw.split(':');
            let name = f.next().unwrap_or("").to_string();
            entries.push(Entry { name, port: f.next().and_then(|p| p.parse().ok()) });
            continue;
        }
        let shown = crate::text::clip_to(raw, 64);
        if raw != raw.trim() {
            problems.push(format!("entry {shown:?} has spaces; NCCL does not trim them, so it matches nothing"));
        }
        if raw.contains('^') || raw.contains('=') {
            problems.push(format!("entry {shown:?}: `^`/`=` only count at the very start of the whole value"));
        }
        let mut f = raw.split(':');
        let name = f.next().unwrap_or("").to_string();
        let port = match f.next() {
            None | Some("") => None,
            Some(p) => match p.parse::<u32>() {
                Ok(p) => Some(p),
                Err(_) => {
                    problems.push(format!("entry {shown:?}: port {:?} is not a number", crate::text::clip_to(p, 16)));
                    None
                }
            },
        };
        entries.push(Entry { name, port });
    }
    if more > 0 {
        problems.push(format!("{} entries: NCCL reads at most 32", entries.len() + more));
    }
    (Filter { exclude, exact, entries }, problems)
}

impl Filter {
    /// NCCL's decision for one port of one device: `matches XOR exclude`, where an empty list
    /// matches everything.
    pub fn selects(&self, dev: &str, port: u32) -> bool {
        let m = if self.entries.is_empty() {
            true
        } else {
            self.entries.iter().any(|e| {
                let name_ok = if self.exact { e.name == dev } else { dev.starts_with(&e.name) };
                name_ok && e.port.map(|p| p == port).unwrap_or(true)
            })
        };
        m != self.exclude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NCCL 2.27+ reads `prefix:port:rail:plane` (misc/utils.cc parseStringList): the extra
    /// fields are accepted, not taken for errors, and the device and port still select.
    #[test]
    fn a_huge_value_costs_its_length_not_a_message_per_entry() {
        // hostile round 4 #5: 4 MB of entries made 407 MB peak in the hook.
        let v = "mlx5 x:y,".repeat(400_000);
        let (f, problems) = parse(&v);
        assert_eq!(f.entries.len(), 32);
        assert!(problems.len() <= 9, "{}", problems.len());
        assert!(problems.iter().all(|p| p.len() < 200));
        assert!(problems.last().unwrap().starts_with("400000 entries: NCCL reads at most 32"), "{problems:?}");
        let (_, p) = parse(&format!("{} ", "a".repeat(4 << 20)));
        assert!(p[0].len() < 200, "{}", p[0].len());
    }

    #[test]
    fn rail_and_plane_fields_are_accepted() {
        let (f, problems) = parse("=mlx5_0:1:0:0,mlx5_3:1:1");
        assert!(problems.is_empty(), "{problems:?}");
        assert!(f.selects("mlx5_0", 1) && f.selects("mlx5_3", 1) && !f.selects("mlx5_4", 1));
    }

    #[test]
    fn ncclish() {
        let (f, p) = parse("mlx5_1");
        assert!(p.is_empty());
        assert!(f.selects("mlx5_1", 1) && f.selects("mlx5_10", 1), "prefix");
        let (f, _) = parse("=mlx5_1:1");
        assert!(f.selects("mlx5_1", 1) && !f.selects("mlx5_10", 1) && !f.selects("mlx5_1", 2));
        let (f, _) = parse("^=mlx5_bond_0");
        assert!(!f.selects("mlx5_bond_0", 1) && f.selects("mlx5_0", 1));
        let (f, _) = parse("mlx5");
        assert!(f.selects("mlx5_bond_0", 1), "a bare prefix pulls in the bond");
        let (f, p) = parse("^");
        assert!(!f.selects("mlx5_0", 1) && !p.is_empty());
        let (f, p) = parse("=^mlx5_0");
        assert!(!f.selects("mlx5_0", 1) && !p.is_empty());
        let (_, p) = parse("^=a,^=b");
        assert!(!p.is_empty());
        let (f, p) = parse("mlx5_0, mlx5_1");
        assert!(!f.selects("mlx5_1", 1) && !p.is_empty());
        let (f, _) = parse("");
        assert!(f.selects("anything", 1), "empty is unset");
    }
}
