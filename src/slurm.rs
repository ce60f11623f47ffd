//! The Slurm job as the environment describes it: node list (hostlist syntax), node rank, job id.

use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub nodes: Vec<String>,
    pub node_rank: Option<usize>,
    pub job_id: Option<u64>,
}

/// Hosts one node list may expand to: far beyond any cluster, small enough that a hostile
/// `n[0-999999999]` cannot exhaust memory.
const MAX_HOSTS: usize = 100_000;

/// Expand `gpu-[001-004,010],login1` into host names, in order, as Slurm does: a range takes the
/// width of its lower bound (`[096-100]` → 096 … 100, `[9-11]` → 9 10 11), several bracket groups
/// in one name multiply out. Whitespace, nesting, empty or inverted ranges are errors.
///
/// (Written here rather than taken from the hostlist-parser crate, which expands `a[096-100]`
/// to `a96`… and drops repeated names; found by tests/it/properties.rs.)
pub fn expand_hostlist(s: &str) -> Result<Vec<String>> {
    let s = s.trim();
    if s.is_empty() {
        bail!("empty node list");
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!("node list {s:?} contains whitespace or control characters");
    }
    let mut out = Vec::new();
    for item in split_top(s).map_err(|e| anyhow!("malformed node list {s:?}: {e}"))? {
        let hosts = expand_item(item).map_err(|e| anyhow!("malformed node list {s:?}: {e}"))?;
        if out.len() + hosts.len() > MAX_HOSTS {
            bail!("node list {s:?} expands to more than {MAX_HOSTS} hosts");
        }
        out.extend(hosts);
    }
    Ok(out)
}

/// Split on commas outside brackets.
fn split_top(s: &str) -> std::result::Result<Vec<&str>, String> {
    let (mut depth, mut start, mut items) = (0i32, 0usize, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '[' => {
                depth += 1;
                if depth > 1 {
                    return Err(format!("nested '[' at {i}"));
                }
            }
            ']' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unmatched ']' at {i}"));
                }
            }
            ',' if depth == 0 => {
                items.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unclosed '['".into());
    }
    items.push(&s[start..]);
    if items.iter().any(|i| i.is_empty()) {
        return Err("empty host name".into());
    }
    Ok(items)
}

/// A host name is at most 255 characters (RFC 1123 names: 253); a longer item is refused
/// before anything is built.
const MAX_NAME: usize = 255;

/// One item (`gpu-[01-04]x[1-2]`) into its names. The item is cut into literal text and
/// bracket groups first and the count checked; each name is then built once, so the work is the
/// length of the names made (at most MAX_HOSTS × MAX_NAME), never the item's length times its
/// group count (hostile round 4 #4: 1.8 MB of groups took the hook's whole deadline).
/// A host list item's pieces: literal text and bracketed groups.
enum Part<'a> {
    Lit(&'a str),
    Any(Vec<String>),
}

fn expand_item(item: &str) -> std::result::Result<Vec<String>, String> {
    let (parts, count, len) = parts(item)?;
    Ok(names(&parts, count, len))
}

/// The pieces of `item`, how many names they make and the longest name's length (bounded).
fn parts(item: &str) -> std::result::Result<(Vec<Part<'_>>, usize, usize), String> {
    let mut parts = Vec::new();
    let mut rest = item;
    let (mut count, mut len) = (1usize, 0usize);
    while !rest.is_empty() {
        match rest.find('[') {
            None => {
                len += rest.len();
                parts.push(Part::Lit(rest));
                break;
            }
            Some(i) => {
                let close = rest[i..].find(']').ok_or("unclosed '['")? + i;
                len += i;
                parts.push(Part::Lit(&rest[..i]));
                let values = expand_range_list(&rest[i + 1..close])?;
                count = count.saturating_mul(values.len());
                if count > MAX_HOSTS {
                    return Err(format!("expands to more than {MAX_HOSTS} hosts"));
                }
                len += values.iter().map(String::len).max().unwrap_or(0);
                parts.push(Part::Any(values));
                rest = &rest[close + 1..];
            }
        }
        if len > MAX_NAME {
            return Err(format!("a host name longer than {MAX_NAME} characters"));
        }
    }
    Ok((parts, count, len))
}

/// The names in order: the last group varies fastest (an odometer over the groups).
fn names(parts: &[Part], count: usize, len: usize) -> Vec<String> {
    let groups: Vec<&Vec<String>> =
        parts.iter().filter_map(|p| if let Part::Any(v) = p { Some(v) } else { None }).collect();
    let mut at = vec![0usize; groups.len()];
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let mut name = String::with_capacity(len);
        let mut g = 0;
        for p in parts {
            match p {
                Part::Lit(l) => name.push_str(l),
                Part::Any(v) => {
                    name.push_str(&v[at[g]]);
                    g += 1;
                }
            }
        }
        out.push(name);
        for k in (0..groups.len()).rev() {
            at[k] += 1;
            if at[k] < groups[k].len() {
                break;
            }
            at[k] = 0;
        }
    }
    out
}

fn expand_range_list(body: &str) -> std::result::Result<Vec<String>, String> {
    if body.is_empty() {
        return Err("empty brackets".into());
    }
    // Validate and count every range before allocating any name: many ranges in one bracket
    // (`[0-99999,0-99999,…]`) must fail in a few bytes of memory, not after gigabytes.
    let mut ranges = Vec::new();
    let mut total: u64 = 0;
    for part in body.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let digits = |x: &str| !x.is_empty() && x.len() <= 18 && x.bytes().all(|b| b.is_ascii_digit());
        if !digits(lo) || !digits(hi) {
            return Err(format!("{part:?} is not a number or a range of numbers"));
        }
        let (a, b): (u64, u64) = (lo.parse().unwrap(), hi.parse().unwrap());
        if a > b {
            return Err(format!("range {part:?} runs backwards"));
        }
        total = total.saturating_add(b - a + 1);
        if total > MAX_HOSTS as u64 {
            return Err(format!("brackets expand to more than {MAX_HOSTS} hosts"));
        }
        ranges.push((a, b, lo.len()));
    }
    let mut out = Vec::with_capacity(total as usize);
    for (a, b, width) in ranges {
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

/// The canonical order of host names for `compress_hostlist`: by prefix, then by the number at
/// the end (names without one first within their prefix), then by the number's width.
pub fn host_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (pa, na) = split_num(a);
    let (pb, nb) = split_num(b);
    pa.cmp(pb).then_with(|| match (na, nb) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => {
            let (vx, vy) = (x.parse::<u128>().unwrap_or(u128::MAX), y.parse::<u128>().unwrap_or(u128::MAX));
            vx.cmp(&vy).then(x.len().cmp(&y.len())).then(x.cmp(y))
        }
    })
}

/// `gpu-017` → (`gpu-`, Some(`017`)); `login` → (`login`, None).
fn split_num(s: &str) -> (&str, Option<&str>) {
    let digits = s.bytes().rev().take_while(u8::is_ascii_digit).count().min(18);
    if digits == 0 {
        (s, None)
    } else {
        (&s[..s.len() - digits], Some(&s[s.len() - digits..]))
    }
}

/// Slurm's compressed form of a set of host names (`gpu-[001-016,018-064],login1`), the inverse
/// of `expand_hostlist` for names in `host_order` without repeats. A run is extended only while
/// each number, written with the width of the run's first, is exactly the name: `n[9-10]`
/// expands to `n9,n10`, and `n09`,`n10` stay apart from `n9`.
pub fn compress_hostlist(names: &[String]) -> String {
    let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
    sorted.sort_by(|a, b| host_order(a, b));
    sorted.dedup();
    /// (first, last, width) of a run of numbers.
    type Run = (u128, u128, usize);
    let mut groups: Vec<(String, Vec<Run>)> = Vec::new();
    for n in sorted {
        let (prefix, num) = split_num(n);
        // A name that cannot be one of a bracket's members stays whole.
        let bracketable = !prefix.contains(['[', ']', ',']);
        let Some(num) = num.filter(|_| bracketable) else {
            groups.push((n.to_string(), Vec::new()));
            continue;
        };
        let v: u128 = num.parse().unwrap_or(0);
        if let Some((p, runs)) = groups.last_mut() {
            if !runs.is_empty() && p == prefix {
                let (_, hi, w) = runs.last_mut().unwrap();
                if v == *hi + 1 && format!("{v:0w$}", w = *w) == num {
                    *hi = v;
                    continue;
                }
                runs.push((v, v, num.len()));
                continue;
            }
        }
        groups.push((prefix.to_string(), vec![(v, v, num.len())]));
    }
    let mut out: Vec<String> = Vec::new();
    for (prefix, runs) in groups {
        match runs.as_slice() {
            [] => out.push(prefix),
            [(a, b, w)] if a == b => out.push(format!("{prefix}{a:0w$}", w = *w)),
            _ => {
                let body: Vec<String> = runs
                    .iter()
                    .map(
                        |(a, b, w)| {
                            if a == b {
                                format!("{a:0w$}", w = *w)
                            } else {
                                format!("{a:0w$}-{b:0w$}", w = *w)
                            }
                        },
                    )
                    .collect();
                out.push(format!("{prefix}[{}]", body.join(",")));
            }
        }
    }
    out.join(",")
}

/// The job's node count from Slurm's variables (`SLURM_JOB_NUM_NODES`, or the older
/// `SLURM_NNODES`); 1 outside Slurm or when unreadable.
pub fn num_nodes(var: impl Fn(&str) -> Option<String>) -> usize {
    ["SLURM_JOB_NUM_NODES", "SLURM_NNODES"]
        .iter()
        .find_map(|k| var(k).and_then(|v| v.trim().parse::<usize>().ok()))
        .unwrap_or(1)
}

/// Read the job from Slurm's variables; None outside Slurm.
pub fn from_env(env: &BTreeMap<String, String>) -> Result<Option<Job>> {
    let Some(list) = env.get("SLURM_JOB_NODELIST").or_else(|| env.get("SLURM_NODELIST")) else {
        return Ok(None);
    };
    let nodes = expand_hostlist(list).map_err(|e| anyhow!("SLURM_JOB_NODELIST: {e}"))?;
    let node_rank = match env.get("SLURM_NODEID") {
        Some(v) => Some(v.trim().parse().map_err(|_| anyhow!("SLURM_NODEID={v:?} is not a number"))?),
        None => None,
    };
    Ok(Some(Job { nodes, node_rank, job_id: job_id(env) }))
}

/// The job id (`SLURM_JOB_ID`, or the older `SLURM_JOBID`). Slurm's job ids are numbers; one
/// that is not only loses what it is used for (the rendezvous and RAS ports, which then take
/// their defaults), never the job itself.
pub fn job_id(env: &BTreeMap<String, String>) -> Option<u64> {
    env.get("SLURM_JOB_ID").or_else(|| env.get("SLURM_JOBID")).and_then(|v| v.trim().parse().ok())
}

/// A rendezvous port per job, outside Linux's default ephemeral range (32768–60999) and away
/// from torchrun's 29500, so two jobs sharing a node do not collide.
pub fn port_for_job(job_id: u64) -> u16 {
    (20000 + job_id % 9000) as u16
}

/// NCCL's RAS (2.24+) listens for `ncclras` on NCCL_RAS_ADDR, default localhost:28028, with
/// SO_REUSEPORT (src/ras/client_support.cc): jobs of one user on a shared node share that port,
/// and an `ncclras` query lands on any of them; another user's job cannot bind it. A loopback
/// port per job, in 11000–19999 (below launch's 20000–28999 rendezvous ports and outside
/// Linux's ephemeral range), keeps each job's RAS its own.
pub fn ras_port_for_job(job_id: u64) -> u16 {
    (11000 + job_id % 9000) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostlists() {
        assert_eq!(
            expand_hostlist("gpu-[001-004,010],login1").unwrap(),
            ["gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-010", "login1"]
        );
        assert_eq!(expand_hostlist("n[9-11]").unwrap(), ["n9", "n10", "n11"]);
        assert_eq!(expand_hostlist("a[1-2]b[3-4]").unwrap(), ["a1b3", "a1b4", "a2b3", "a2b4"]);
        assert_eq!(expand_hostlist("gpu-[096-100]").unwrap(), ["gpu-096", "gpu-097", "gpu-098", "gpu-099", "gpu-100"]);
        assert_eq!(expand_hostlist("a[0-1],a[1-2]").unwrap(), ["a0", "a1", "a1", "a2"]);
        assert!(expand_hostlist("n[0-999999999]").is_err(), "bounded");
        assert_eq!(expand_hostlist("single").unwrap(), ["single"]);
        for bad in ["gpu-[001-", "gpu-[]", "", "a b", "x[3-1]x]", "a[[1]]", "a]", "a,,b", "a[x-y]", "a[1-]"] {
            assert!(expand_hostlist(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn groups_multiply_in_order_and_a_long_item_costs_its_length() {
        assert_eq!(expand_hostlist("a[1-2]b[7,9]").unwrap(), ["a1b7", "a1b9", "a2b7", "a2b9"]);
        assert_eq!(expand_hostlist("x[01-02]").unwrap(), ["x01", "x02"]);
        // hostile round 4 #4: 1.8 MB of bracket groups in one name: refused as a name too long,
        // after one pass over the item (before, every group copied the name built so far).
        let long = "n[1-1]".repeat(300_000);
        let e = expand_hostlist(&long).unwrap_err().to_string();
        assert!(e.contains("longer than 255"), "{}", &e[e.len().saturating_sub(80)..]);
        assert_eq!(expand_hostlist(&"n[1-1]".repeat(40)).unwrap(), ["n1".repeat(40)]);
    }

    #[test]
    fn many_ranges_in_one_bracket_fail_before_allocating() {
        let body: Vec<String> = (0..400).map(|_| "0-99999".to_string()).collect();
        let t = std::time::Instant::now();
        let e = expand_hostlist(&format!("n[{}]", body.join(","))).unwrap_err().to_string();
        assert!(e.contains("more than 100000 hosts"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_millis(500));
        // A product of brackets is bounded the same way.
        assert!(expand_hostlist("n[0-999][0-999]").is_err());
        assert_eq!(expand_hostlist("n[0-9,20-29]").unwrap().len(), 20);
    }

    #[test]
    fn an_unparsable_job_id_keeps_the_node_list() {
        let env: BTreeMap<String, String> =
            [("SLURM_JOB_NODELIST", "gpu-[001-002]"), ("SLURM_JOB_ID", "12x"), ("SLURM_NODEID", "1")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let j = from_env(&env).unwrap().unwrap();
        assert_eq!(j.nodes, vec!["gpu-001", "gpu-002"]);
        assert_eq!((j.node_rank, j.job_id), (Some(1), None));
    }

    #[test]
    fn job_id_from_either_name() {
        let env = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
        assert_eq!(job_id(&env("SLURM_JOB_ID", " 77 ")), Some(77));
        assert_eq!(job_id(&env("SLURM_JOBID", "78")), Some(78));
        assert_eq!(job_id(&env("SLURM_JOB_ID", "12x")), None);
        assert_eq!(job_id(&BTreeMap::new()), None);
    }

    #[test]
    fn compressed_lists() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut v: Vec<String> = (1..=64).filter(|i| *i != 17).map(|i| format!("gpu-{i:03}")).collect();
        assert_eq!(compress_hostlist(&v), "gpu-[001-016,018-064]");
        v.push("login1".into());
        assert_eq!(compress_hostlist(&v), "gpu-[001-016,018-064],login1");
        assert_eq!(compress_hostlist(&names(&["gpu-017"])), "gpu-017");
        assert_eq!(compress_hostlist(&names(&["n9", "n10", "n11"])), "n[9-11]");
        assert_eq!(compress_hostlist(&names(&["n09", "n10", "n9"])), "n[9,09-10]");
        assert_eq!(compress_hostlist(&names(&["a", "b1", "b2", "c"])), "a,b[1-2],c");
        for s in ["gpu-[001-016,018-064],login1", "n[9,09-10]", "a,b[1-2],c", "n[9-11]"] {
            assert_eq!(compress_hostlist(&expand_hostlist(s).unwrap()), s);
        }
    }

    #[test]
    fn order_is_kept() {
        assert_eq!(expand_hostlist("b1,a1").unwrap(), ["b1", "a1"]);
    }

    #[test]
    fn ports() {
        let p = port_for_job(123456);
        assert!((20000..29000).contains(&p));
        assert_ne!(port_for_job(1), port_for_job(2));
    }
}
