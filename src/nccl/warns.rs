//! NCCL's WARN messages as its sources write them (`warns.tsv`: every distinct format string of
//! NCCL 2.3–2.31, aws-ofi-nccl, the SHARP plugin, Google's GPUDirect-TCPX plugin and RCCL's own,
//! with the releases that print it and a class), and what each class means
//! (`warn-classes.tsv`). A WARN that the specific readers of `log.rs` do not know is looked up
//! here: a harmless one is passed over, a classified one is a finding with its class's cause and
//! fix, and one that NCCL prints but no one has classified is "a warning no rule knows" — never
//! silence (issue 38).

use std::sync::OnceLock;

const TABLE: &str = include_str!("warns.tsv");
const CLASSES: &str = include_str!("warn-classes.tsv");

/// One format string of the producer's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub format: &'static str,
    /// `harmless`, `unclassified`, or a class of `warn-classes.tsv`.
    pub class: &'static str,
    /// `nccl`, `ofi` (aws-ofi-nccl), `sharp` (nccl-rdma-sharp-plugins), `tcpx` (Google's
    /// GPUDirect-TCPX plugin) or `rccl` (AMD's RCCL, the formats NCCL does not print).
    pub source: &'static str,
    pub first: &'static str,
    pub last: &'static str,
    /// NCCL: the releases scanned that print it (`2.24.3..2.31.0-dev`).
    pub releases: &'static str,
    pieces: Vec<&'static str>,
    anchored: bool,
    /// The format ends with literal text, not a conversion: an instance ends where it does.
    closed: bool,
    /// The format ends `%c'`: a character that may be a line break, leaving the quote on the
    /// next line.
    char_last: bool,
}

/// The literal text between a format's conversions (`%s`, `%d`, `%lu`, `%.*s`, `{name}`…).
fn pieces(format: &str) -> (Vec<&str>, bool, bool) {
    let b = format.as_bytes();
    let (mut out, mut start, mut i) = (Vec::new(), 0, 0);
    while i < b.len() {
        let conv_end = match b[i] {
            b'%' if b.get(i + 1) == Some(&b'%') => None,
            b'%' => {
                let mut j = i + 1;
                while j < b.len() && b"-+ #0123456789.*hlzjtLqI".contains(&b[j]) {
                    j += 1;
                }
                (j < b.len()).then_some(j + 1)
            }
            b'{' => format[i..].find('}').filter(|e| *e < 40 && !format[i + 1..i + e].contains(' ')).map(|e| i + e + 1),
            _ => None,
        };
        match conv_end {
            Some(e) => {
                out.push(&format[start..i]);
                start = e;
                i = e;
            }
            None if b[i] == b'%' => i += 2,
            None => i += 1,
        }
    }
    out.push(&format[start.min(format.len())..]);
    let anchored = !out[0].is_empty();
    let trailing = out.len() > 1 && out.last().is_some_and(|p| p.is_empty());
    (out.into_iter().filter(|p| !p.is_empty()).collect(), anchored, trailing)
}

pub fn rows() -> &'static [Row] {
    static ROWS: OnceLock<Vec<Row>> = OnceLock::new();
    ROWS.get_or_init(|| {
        TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let mut c = l.split('\t');
                let format = c.next()?;
                // A format of several lines (`\n` in the table) prints its first as the WARN line.
                let first = format.split("\\n").next().unwrap_or(format);
                let (pieces, anchored, trailing) = pieces(first);
                Some(Row {
                    format,
                    class: c.next()?,
                    source: c.next()?,
                    first: c.next().unwrap_or(""),
                    last: c.next().unwrap_or(""),
                    releases: c.next().unwrap_or(""),
                    closed: !trailing && !first.trim_end().is_empty(),
                    pieces,
                    anchored,
                    char_last: format.ends_with("%c'"),
                })
            })
            .collect()
    })
}

impl Row {
    /// Who prints the row's message, in words.
    pub fn producer(&self) -> &'static str {
        match self.source {
            "rccl" => "RCCL",
            "ofi" => "aws-ofi-nccl",
            "sharp" => "the SHARP plugin",
            "tcpx" => "Google's GPUDirect-TCPX plugin",
            _ => "NCCL",
        }
    }
}

/// A class's cause and fix.
pub fn class(name: &str) -> Option<(&'static str, &'static str)> {
    CLASSES.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let mut c = l.split('\t');
        (c.next()? == name).then(|| (c.next().unwrap_or(""), c.next().unwrap_or("")))
    })
}

/// `r`'s literal pieces found in `msg` in order: `Ok` with where the last one ends and how
/// many literal characters matched; `Err` with the first piece not found and where its search
/// began (`Err((0, 0))`: an anchored row's first piece not at the start).
fn walk(r: &Row, msg: &str) -> Result<(usize, usize), (usize, usize)> {
    let (mut at, mut n) = (0, 0);
    for (k, p) in r.pieces.iter().enumerate() {
        if k == 0 && r.anchored {
            if !msg.starts_with(p) {
                return Err((0, 0));
            }
            at = p.len();
        } else if at == msg.len() && k + 1 == r.pieces.len() && r.char_last {
            // a `%c` that printed a line break (xml.cc's `expected %c, got '%c'` on a file cut
            // mid-tag) leaves the closing quote on the next line: the message ends before it
            break;
        } else {
            at += msg[at..].find(p).ok_or((k, at))? + p.len();
        }
        n += p.len();
    }
    Ok((at, n))
}

/// How much of `msg` the row's literal text explains, when `msg` is an instance of it.
fn score(r: &Row, msg: &str) -> Option<usize> {
    let (at, n) = walk(r, msg).ok()?;
    // A harmless row explains the whole message or none of it: text after its last words
    // (another rank's warning run onto it — review 14) is not harmless by its say.
    if r.class == "harmless" && r.closed && msg[at..].trim() != "" {
        return None;
    }
    // Too little literal text to tell one message from another (`%s:%d -> %d`).
    (n >= 8).then_some(n)
}

/// The row `msg` (a WARN's text after `NCCL WARN `, its `file:line` gone) is an instance of:
/// the one whose literal text explains most of it.
pub fn lookup(msg: &str) -> Option<&'static Row> {
    let msg = msg.trim();
    rows().iter().filter_map(|r| score(r, msg).map(|s| (s, r))).max_by_key(|(s, _)| *s).map(|(_, r)| r)
}

/// Where in `line` (a line that is no NCCL line: no tag, no prefix) an NCCL, aws-ofi-nccl,
/// SHARP-plugin or TCPX-plugin WARN's text begins, where the line holds one whole: a format of
/// [`BARE_LITERAL`] characters of its own text or more, all its literal pieces in order, from
/// its first piece's place in the line (a relay's prefix before it is left out) to its end.
/// Harmless and unclassified formats are not taken, nor [`ADVISORY`] classes, nor RCCL's, nor a
/// format that names nothing of NCCL's [`DOMAIN`], nor a text behind a quote, a call or an
/// assignment.
pub fn lookup_bare(line: &str) -> Option<usize> {
    static BARE: OnceLock<Vec<&'static Row>> = OnceLock::new();
    let rows = BARE.get_or_init(|| {
        rows()
            .iter()
            .filter(|r| r.pieces.iter().map(|p| p.len()).sum::<usize>() >= BARE_LITERAL)
            .filter(|r| !matches!(r.class, "harmless" | "unclassified") && !ADVISORY.contains(&r.class))
            .filter(|r| r.source != "rccl" && r.pieces.iter().any(|p| DOMAIN.iter().any(|w| p.contains(w))))
            .collect()
    });
    let mut best: Option<(usize, usize)> = None;
    for r in rows.iter() {
        let at = match r.anchored {
            true => match line.find(r.pieces[0]) {
                Some(at) => at,
                None => continue,
            },
            false => 0,
        };
        // before the text: nothing, or a log's prefix (a rank's, a time's, a host's); never a
        // quote, a call or an assignment that quotes it (review 29: `echo "…"`, raise(…))
        if line[..at].contains(['"', '\'', '`', '(', '=', '$']) {
            continue;
        }
        if let Ok((end, n)) = walk(r, &line[at..]) {
            // a closed format ends where its text does (a full stop, a quote may follow)
            let rest = line[at + end..].trim();
            if (!r.closed || rest.len() <= 2) && best.is_none_or(|(m, _)| n > m) {
                best = Some((n, at));
            }
        }
    }
    best.map(|(_, at)| at)
}

/// The literal text a format needs for [`lookup_bare`] to take a line without NCCL's prefix as
/// one of its instances (review 29: 40 took generic words of NCCL's Windows sources, such as
/// `GetProcessAffinityMask failed with error: %d`).
pub const BARE_LITERAL: usize = 60;

/// Words of NCCL's own domain, one of which a format's text must hold for [`lookup_bare`]: a
/// sentence any program may print (`Failed to set environment variable %s to %s: error %d`)
/// names none of them.
const DOMAIN: [&str; 24] = [
    "NCCL",
    "NET",
    "IB",
    "P2P",
    "NVL",
    "GPU",
    "CUDA",
    "Cuda",
    "cuda",
    "ibv",
    "NVML",
    "nvml",
    "rank",
    "peer",
    "channel",
    "proxy",
    "Proxy",
    "ootstrap",
    "lugin",
    "RDMA",
    "GDR",
    "SHARP",
    "CollNet",
    "ommunicator",
];

/// Classes of warnings after which NCCL goes on with a default (a value it ignores, a policy it
/// replaces): quoted alone they say nothing failed (review 29).
const ADVISORY: [&str; 5] =
    ["config-invalid", "nic-fusion-config", "ib-config-invalid", "topo-file-skipped", "gid-change"];

/// The row of a warning cut short (a pasted fragment, an excerpt's last line: `Call to
/// ibv_reg_mr` of `Call to %s failed`): the formats whose leading literal text begins with all of
/// `msg`, where they share one class (the first of them); too short a fragment (under 16
/// characters) or one that begins formats of several classes says nothing. (Whether that class
/// may be taken from a cut line is the reader's call: log.rs's `cut_may_take`.)
pub fn lookup_cut(msg: &str) -> Option<&'static Row> {
    let msg = msg.trim_start();
    if msg.len() < 16 {
        return None;
    }
    let mut heads =
        rows().iter().filter(|r| r.anchored && r.pieces[0].len() > msg.len() && r.pieces[0].starts_with(msg));
    if let Some(first) = heads.next() {
        return heads.all(|r| r.class == first.class).then_some(first);
    }
    // cut after its first value: the row's pieces in order, then the start of the next one
    // (set 117's nccl#626, wrapped after `message truncated :`)
    let msg = msg.trim_end();
    let mut rows = rows().iter().filter(|r| cut_within(r, msg));
    let first = rows.next()?;
    rows.all(|r| r.class == first.class).then_some(first)
}

/// `msg` is an instance of `r` cut inside one of its literal pieces after the first: its
/// pieces up to that one in order ([`walk`]), then that piece's first eight characters or more
/// at the message's end.
fn cut_within(r: &Row, msg: &str) -> bool {
    match walk(r, msg) {
        Err((k, at)) if k > 0 && r.anchored => {
            let p = r.pieces[k].trim_end();
            (8..=p.len()).rev().any(|j| p.is_char_boundary(j) && msg[at..].ends_with(&p[..j]))
        }
        _ => false,
    }
}

/// A message an instance of `format` would be, for tests: each conversion given a value.
pub fn instance(format: &str) -> String {
    let (p, anchored, trailing) = pieces(format);
    let mut s = String::new();
    if !anchored {
        s.push_str("x7");
    }
    s.push_str(&p.join("x7"));
    if trailing {
        s.push_str("x7");
    }
    s.replace("%%", "%")
}

/// Per release of NCCL: the WARN formats it prints, and how many of them have a class (a
/// specific reader, a class with cause and fix, or known harmless). From `releases`.
pub fn coverage() -> Vec<(String, usize, usize)> {
    const RELEASES: [&str; 29] = [
        "2.3.7",
        "2.4.8",
        "2.5.7",
        "2.6.4",
        "2.7.8",
        "2.8.4",
        "2.9.9",
        "2.10.3",
        "2.11.4",
        "2.12.12",
        "2.13.4",
        "2.14.3",
        "2.15.5",
        "2.16.5",
        "2.17.1",
        "2.18.6",
        "2.19.4",
        "2.20.5",
        "2.21.5",
        "2.22.3",
        "2.23.4",
        "2.24.3",
        "2.25.1",
        "2.26.6",
        "2.27.7",
        "2.28.9",
        "2.29.7",
        "2.30.7",
        "2.31.0-dev",
    ];
    let idx = |r: &str| RELEASES.iter().position(|x| *x == r);
    RELEASES
        .iter()
        .map(|rel| {
            let me = idx(rel).unwrap_or(0);
            let present: Vec<&Row> = rows()
                .iter()
                .filter(|r| r.source == "nccl")
                .filter(|r| {
                    r.releases.split(',').any(|span| {
                        let (a, b) = span.split_once("..").unwrap_or((span, span));
                        matches!((idx(a.trim()), idx(b.trim())), (Some(a), Some(b)) if a <= me && me <= b)
                    })
                })
                .collect();
            let known = present.iter().filter(|r| r.class != "unclassified").count();
            (rel.to_string(), present.len(), known)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_split_into_their_literal_text() {
        let f = "Call to ibv_modify_qp failed with %d %s, on dev %s:%d, curr state %s";
        assert_eq!(pieces(f).0, ["Call to ibv_modify_qp failed with ", " ", ", on dev ", ":", ", curr state "]);
        assert_eq!(pieces("%s:%d -> %d").0, [":", " -> "]);
        assert!(!pieces("%s:%d -> %d").1);
        assert_eq!(pieces("Call to {name} failed: %s").0, ["Call to ", " failed: "]);
        assert_eq!(pieces("100%% done %lu").0, ["100%% done "]);
    }

    #[test]
    fn the_table_reads_and_every_class_has_its_text() {
        assert!(rows().len() > 1500, "{}", rows().len());
        for r in rows() {
            assert!(["nccl", "ofi", "sharp", "rccl", "tcpx"].contains(&r.source), "{r:?}");
            if r.class != "harmless" && r.class != "unclassified" {
                assert!(class(r.class).is_some(), "class {} of {:?} has no cause/fix row", r.class, r.format);
            }
        }
    }

    #[test]
    fn a_quote_cut_by_a_printed_line_break_still_finds_its_format() {
        // device set 7: a truncated NCCL_TOPO_FILE, `graph/xml.cc:175 NCCL WARN XML Parse :
        // expected >, got '` then a line with the quote alone
        assert_eq!(lookup("XML Parse : expected >, got '").map(|r| r.class), Some("topo-xml"));
        assert_eq!(lookup("XML Parse : expected >, got 'x'").map(|r| r.class), Some("topo-xml"));
    }

    #[test]
    fn a_message_finds_its_own_format() {
        let r = lookup("NET/IB: Got completion from peer 10.0.0.2<1234> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) reqSize=0 vendor_err=129 req_type=Send localGid ::ffff:10.0.0.1 remoteGids ::ffff:10.0.0.2 hca mlx5_0");
        assert!(r.is_some_and(|r| r.format.contains("Got completion from peer")), "{r:?}");
        assert!(lookup("something NCCL never said at all").is_none());
    }

    /// A warning cut short takes the class of the formats it begins, where they share one
    /// (held-out set 79: trixie#77's `misc/ibvwrap.cc:252 NCCL WARN Call to ibv_reg_mr`; set 7b:
    /// pie#499's `init.cc:314 NCCL WARN Attempt to use communicator`).
    #[test]
    fn a_warning_cut_short_takes_the_class_of_the_formats_it_begins() {
        for r in rows().iter().filter(|r| r.anchored && r.pieces[0].len() > 24) {
            let cut = &r.pieces[0][..r.pieces[0].len() - 4];
            if !cut.is_char_boundary(cut.len()) {
                continue;
            }
            let same = rows().iter().filter(|o| o.anchored && o.pieces[0].starts_with(cut));
            let classes: std::collections::BTreeSet<_> = same.map(|o| o.class).collect();
            let got = lookup_cut(cut).map(|x| x.class);
            if classes.len() == 1 {
                assert_eq!(got, Some(r.class), "{cut:?}");
            } else {
                assert_eq!(got, None, "{cut:?} begins formats of {classes:?}");
            }
        }
        assert_eq!(lookup_cut("Call to ibv_reg_mr").map(|r| r.class), Some("ibv-reg-mr-failed"));
        assert_eq!(lookup_cut("Call to ibv_query").map(|r| r.class), Some("ibv-query-failed"));
        // too short, or the formats of several classes (ibv_reg_mr, ibv_reg_dmabuf_mr)
        assert_eq!(lookup_cut("Call to ibv_"), None);
        // cut inside a later piece (a WARN wrapped onto two lines)
        assert_eq!(
            lookup_cut("NET/Socket : peer 192.168.161.30<59210> message truncated :").map(|r| r.class),
            Some("collective-mismatch")
        );
        assert_eq!(lookup_cut("NET/Socket : peer 192.168.161.30<59210> mes"), None);
        assert_eq!(lookup_cut("Call to ibv_reg_"), None);
    }

    #[test]
    fn no_two_rows_have_the_same_words() {
        // review 14: RCCL rows that were NCCL's formats with a trailing `\n` won every tie
        // (lookup keeps the last of equal scores) and overrode NCCL's classes
        let mut seen = std::collections::HashMap::new();
        let mut same = Vec::new();
        for r in rows() {
            if let Some(o) = seen.insert((r.pieces.clone(), r.anchored), r) {
                // (a format of several lines told apart by its later ones, aws-ofi-nccl's CQ
                // error with and without its security-group banner, is not a tie in the source)
                let several = |r: &Row| r.format.contains("\\n");
                if o.class != r.class && !several(o) && !several(r) {
                    same.push(format!(
                        "{:?} ({} {}) and {:?} ({} {})",
                        o.format, o.source, o.class, r.format, r.source, r.class
                    ));
                }
            }
        }
        assert!(same.is_empty(), "{}", same.join("\n"));
    }

    #[test]
    fn a_harmless_row_explains_the_whole_message_or_none_of_it() {
        // review 14: another rank's warning run onto a harmless one is not passed over with it
        let glued = "Missing \"iommu=pt\" from kernel command line which can lead to system instablity or hang!\
                     nodeA:100:101 [0] graph/paths.cc:1 NCCL WARN Failed to find reverse path from remNode 0/0 nlinks 0 to node 1/0";
        assert_ne!(lookup(glued).map(|r| r.class), Some("harmless"));
        let alone = "Missing \"iommu=pt\" from kernel command line which can lead to system instablity or hang!";
        assert_eq!(lookup(alone).map(|r| (r.class, r.source)), Some(("harmless", "rccl")));
    }

    #[test]
    fn coverage_counts_each_release() {
        let c = coverage();
        assert_eq!(c.len(), 29);
        for (rel, n, known) in &c {
            // (2.3's sources have the fewest: 89 formats of one literal, read 2026-12-07)
            assert!(*n > 80 && known <= n, "{rel}: {known}/{n}");
        }
        // 2.18.6 on: every release's formats
        assert!(c.iter().skip_while(|(r, ..)| r != "2.18.6").all(|(_, n, _)| *n > 200));
    }
}

#[cfg(test)]
mod rows {
    use super::*;
    use crate::nccl::log::{analyse, classify};

    /// One check per row of the table, each built from the row's own format string: an instance
    /// of it finds its row (or one of the same text), and the log reader makes of it what the
    /// class says: nothing for a harmless one unless a specific reader knows better, a failure
    /// for every other one (never silence).
    #[test]
    fn every_row_is_read_as_its_class() {
        let (mut bad, mut checked) = (Vec::new(), 0);
        let first = |f: &'static str| f.split("\\n").next().unwrap_or(f);
        for r in rows() {
            if r.pieces.iter().map(|p| p.len()).sum::<usize>() < 8 {
                continue; // too little literal text to be told apart (`%s:%d -> %d`)
            }
            checked += 1;
            let msg = instance(first(r.format));
            let Some(found) = lookup(&msg) else {
                bad.push(format!("{:?}: its instance {msg:?} finds no row", r.format));
                continue;
            };
            if found.class != r.class && instance(first(found.format)) != msg && found.pieces.len() <= r.pieces.len() {
                bad.push(format!("{:?} ({}) is read as {:?} ({})", r.format, r.class, found.format, found.class));
            }
            let f = analyse(&format!("h:1:2 [0] f.cc:1 NCCL WARN {msg}\n"));
            if r.class == "ibverbs-not-loaded" {
                // a fact, not a failure of its own (log.rs `by_table`)
                if !f.ibverbs_missing || !f.failures.is_empty() {
                    bad.push(format!("{:?} is not read as libibverbs missing", r.format));
                }
                continue;
            }
            if r.class == "topo-file-skipped" {
                // a fact the verdict notes: NCCL went on without the file
                if f.topo_file_skipped.is_none() || !f.failures.is_empty() {
                    bad.push(format!("{:?} is not read as a topology file skipped", r.format));
                }
                continue;
            }
            if found.class == "harmless" && classify(&msg).is_none() && !f.failures.is_empty() {
                bad.push(format!("harmless {:?} made {:?}", r.format, f.failures[0].kind));
            }
            if found.class != "harmless" && f.failures.is_empty() {
                bad.push(format!("{:?} ({}) made no finding", r.format, found.class));
            }
        }
        assert!(checked > 1500, "{checked} rows checked");
        assert!(bad.is_empty(), "{} of {checked} rows:\n{}", bad.len(), bad.join("\n"));
    }
}
