//! NCCL's RAS (2.24+): every process of a job keeps a view of the whole job and answers a
//! client on `NCCL_RAS_ADDR` (default 127.0.0.1:28028) in a text protocol
//! (../shared/spec/nccl-2.27-2.32.md; captured answers in tests/fixtures/nccl-ras/). This reads
//! its `VERBOSE STATUS` answer: which communicators are in trouble, and in a hang, which ranks
//! lag behind the others ("MISMATCH": different operation counts).

/// One rank of a mismatch: how far it got, and where it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankAt {
    pub rank: u64,
    pub op: u64,
    pub gpu: Option<u64>,
    pub pid: Option<u64>,
    pub node: String,
}

/// A communicator whose ranks disagree on how many operations they launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// `#0-0 (a7e0051ed420c2aa)`: the communicator.
    pub comm: String,
    /// `Communicator ranks have different AllReduce operation counts`.
    pub what: String,
    pub ranks: Vec<RankAt>,
}

impl Mismatch {
    /// The ranks that launched the fewest operations: the ones the others wait for.
    pub fn lagging(&self) -> Vec<&RankAt> {
        let min = self.ranks.iter().map(|r| r.op).min().unwrap_or(0);
        self.ranks.iter().filter(|r| r.op == min).collect()
    }

    /// The most operations any rank launched.
    pub fn ahead(&self) -> u64 {
        self.ranks.iter().map(|r| r.op).max().unwrap_or(0)
    }
}

/// `Rank 1 has launched up to operation 1 -- GPU 0 managed by process 491 on node 192.0.2.2`
fn rank_line(l: &str) -> Option<RankAt> {
    let rest = l.trim().strip_prefix("Rank ")?;
    let (rank, rest) = rest.split_once(' ')?;
    let rest = rest.strip_prefix("has launched up to operation ")?;
    let (op, tail) = rest.split_once(' ').unwrap_or((rest, ""));
    let num = |s: &str| s.trim().parse::<u64>().ok();
    let after = |k: &str| tail.split_once(k).and_then(|(_, v)| v.split_whitespace().next());
    Some(RankAt {
        rank: num(rank)?,
        op: num(op)?,
        gpu: after("GPU ").and_then(num),
        pid: after("process ").and_then(num),
        node: after("on node ").unwrap_or("?").chars().take(255).filter(|c| !c.is_control()).collect(),
    })
}

/// The mismatches in a `VERBOSE STATUS` answer (text format).
pub fn mismatches(text: &str) -> Vec<Mismatch> {
    let mut out: Vec<Mismatch> = Vec::new();
    let mut cur: Option<Mismatch> = None;
    for l in text.lines().take(100_000) {
        let t = l.trim();
        if t.starts_with('#') && t.ends_with("MISMATCH") {
            out.extend(cur.take().filter(|m| !m.ranks.is_empty()));
            let comm = t.trim_end_matches("MISMATCH").trim().chars().take(80).collect();
            cur = Some(Mismatch { comm, what: String::new(), ranks: Vec::new() });
            continue;
        }
        let Some(m) = cur.as_mut() else { continue };
        if let Some(r) = rank_line(t) {
            if m.ranks.len() < 4096 {
                m.ranks.push(r);
            }
        } else if t.is_empty() || t.starts_with('#') || t.ends_with("====") {
            out.extend(cur.take().filter(|m| !m.ranks.is_empty()));
        } else if m.what.is_empty() {
            m.what = t.chars().take(200).filter(|c| !c.is_control()).collect();
        }
    }
    out.extend(cur.filter(|m| !m.ranks.is_empty()));
    out
}

/// One line for a person: who stopped, where, and how far the others got.
pub fn describe(m: &Mismatch) -> String {
    let lag = m.lagging();
    let who: Vec<String> = lag
        .iter()
        .take(8)
        .map(|r| {
            let mut s = format!("rank {} on {}", r.rank, r.node);
            match (r.gpu, r.pid) {
                (Some(g), Some(p)) => s.push_str(&format!(" (GPU {g}, process {p})")),
                (None, Some(p)) => s.push_str(&format!(" (process {p})")),
                _ => {}
            }
            s
        })
        .collect();
    let more = if lag.len() > 8 { format!(" and {} more", lag.len() - 8) } else { String::new() };
    format!(
        "{}{more} stopped at operation {} while other ranks reached {} ({}: {})",
        who.join(", "),
        lag.first().map(|r| r.op).unwrap_or(0),
        m.ahead(),
        m.comm,
        if m.what.is_empty() { "operation counts differ" } else { &m.what }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_hang_names_the_rank_that_stopped() {
        // NCCL 2.28.9 on the H200 (tests/device/failures.sh CASES=hang-watchdog)
        let m = mismatches(include_str!("../../tests/fixtures/nccl-ras/hang-2.28.9-verbose-status.txt"));
        assert_eq!(m.len(), 1);
        let lag = m[0].lagging();
        assert_eq!(
            (lag.len(), lag[0].rank, lag[0].op, lag[0].pid, lag[0].node.as_str()),
            (1, 1, 1, Some(930), "192.0.2.2")
        );
        assert_eq!(m[0].ahead(), 4);
        let d = describe(&m[0]);
        assert!(
            d.starts_with(
                "rank 1 on 192.0.2.2 (GPU 0, process 930) stopped at operation 1 while other ranks reached 4"
            ),
            "{d}"
        );
        assert!(d.contains("different AllReduce operation counts"), "{d}");
    }

    #[test]
    fn healthy_and_garbage_answers_have_none() {
        assert!(mismatches("Group Comms\n 0 1 1 2 2 2 RUNNING OK\n").is_empty());
        assert!(mismatches("#0-0 (x) MISMATCH\nRank x has launched up to operation y\n\u{0}\n").is_empty());
        let m = mismatches("#1-0 (ab) MISMATCH\n  Rank 3 has launched up to operation 9\n");
        assert_eq!((m[0].ranks[0].node.as_str(), m[0].ranks[0].gpu), ("?", None));
    }
}
