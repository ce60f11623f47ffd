//! Text that reaches a person. Anything ibwire prints may carry bytes someone else chose: a host
//! name from a snapshot, a netdev name from a `--root` tree, a line of a job's log, a value from
//! an image's environment. One rule for all of it: control characters are shown escaped (`\u{1b}`),
//! never written raw, so no escape sequence reaches a terminal (title changes, screen clears,
//! OSC 8 links, a C1 CSI); values are clipped where they are inserted. JSON and YAML output is
//! escaped by its serializer and does not pass through here.

use std::borrow::Cow;

/// `s` for a terminal: control characters shown escaped (no escape sequence reaches the
/// terminal), at most `max` characters of it, `…` when cut.
pub fn printable(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A whole report for a terminal: as [`printable`] but keeping line breaks and tabs, and not
/// clipped. Borrowed when there is nothing to escape (the common case costs one scan).
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if bad(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The width to fit a report to: the terminal's when `fd` is one (at least 40 columns), else
/// 100 columns (a pager, a file, a ticket: issue 41). Lines holding a tab (tables) are never
/// wrapped; scripts read `--json`.
fn width_of(fd: impl std::os::fd::AsFd) -> Option<usize> {
    match terminal_size::terminal_size_of(fd) {
        Some((w, _)) => Some((w.0 as usize).max(40)),
        None => Some(PIPED_WIDTH),
    }
}

/// Human output's width when it is not on a terminal.
const PIPED_WIDTH: usize = 100;

/// `for_terminal`, then `fit` to `width` when there is one.
fn fitted(s: &str, width: Option<usize>) -> String {
    let safe = for_terminal(s);
    match width {
        Some(w) => fit(&safe, w),
        None => safe.into_owned(),
    }
}

/// A report for a terminal `width` columns wide: lines longer than that are wrapped at spaces,
/// each continuation indented four columns more than its line; a word longer than the room is
/// left whole. Lines holding a tab (tables) are left as they are.
pub fn fit(s: &str, width: usize) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    for line in s.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width || body.contains('\t') {
            out.push_str(line);
            continue;
        }
        let indent = body.len() - body.trim_start_matches(' ').len();
        let cont = " ".repeat((indent + 4).min(width / 2));
        let mut col = 0;
        let mut first = true;
        for word in body.trim_start_matches(' ').split(' ') {
            let w = word.chars().count();
            if first {
                out.push_str(&body[..indent]);
                out.push_str(word);
                col = indent + w;
                first = false;
            } else if col + 1 + w > width {
                out.push('\n');
                out.push_str(&cont);
                out.push_str(word);
                col = cont.len() + w;
            } else {
                out.push(' ');
                out.push_str(word);
                col += 1 + w;
            }
        }
        out.push_str(nl);
    }
    out
}

/// `for_terminal`, then `fit` to standard output's width (a terminal's, else 100 columns).
pub fn for_stdout(s: &str) -> String {
    fitted(s, width_of(std::io::stdout()))
}

/// `for_terminal`, then `fit` to standard error's width (a terminal's, else 100; `--explain`).
pub fn for_stderr(s: &str) -> String {
    fitted(s, width_of(std::io::stderr()))
}

/// An error's text on one line (causes chained with `{:#}` may contain line breaks).
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

// Helpers for values read from files: clipping for notes, the natural order of device names,
// sysfs numbers.

/// Shorten a value for a note so a garbage file cannot flood the output.
pub fn clip(s: &str) -> String {
    clip_to(s, 60)
}

/// The first `n` characters of `s`, `…` when cut.
pub fn clip_to(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().nth(n).is_some() {
        out.push('…');
    }
    out
}

/// Order `mlx5_2` before `mlx5_10` and `uverbs9` before `uverbs10`, as a human would. Runs
/// of digits compare by value (then by length, so `007` sorts after `7`); no allocation, since
/// a node's /dev/infiniband and class listings have thousands of entries to sort.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering::Equal;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    // Names in one directory share long prefixes (`uverbs1`…`uverbs511`): skip the common part,
    // backed up to the start of a digit run so that a number is compared whole.
    let n = a.len().min(b.len());
    let mut k = 0;
    while k < n && a[k] == b[k] {
        k += 1;
    }
    while k > 0 && a[k - 1].is_ascii_digit() {
        k -= 1;
    }
    let (mut i, mut j) = (k, k);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            // Leading zeros aside, the longer run is the larger number; equal lengths compare
            // digit by digit; equal values: fewer zeros first.
            let (mut zi, mut zj) = (si, sj);
            while zi < i && a[zi] == b'0' {
                zi += 1;
            }
            while zj < j && b[zj] == b'0' {
                zj += 1;
            }
            let mut ord = (i - zi).cmp(&(j - zj));
            let mut d = 0;
            while ord == Equal && zi + d < i {
                ord = a[zi + d].cmp(&b[zj + d]);
                d += 1;
            }
            let ord = ord.then((i - si).cmp(&(j - sj)));
            if ord != Equal {
                return ord;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

/// Parse a sysfs number: decimal, or hex with a `0x` prefix.
pub fn parse_num(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// Parse a value that is hex with or without `0x` (PCI ids, LIDs, P_Keys).
pub fn parse_hex(s: &str) -> Option<u32> {
    let s = s.trim();
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    if h.is_empty() || h.len() > 8 {
        return None;
    }
    u32::from_str_radix(h, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = vec!["mlx5_10", "mlx5_2", "mlx5_bond_0", "mlx5_1"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["mlx5_1", "mlx5_2", "mlx5_10", "mlx5_bond_0"]);
    }

    /// The comparison before it learned to skip common prefixes: the reference.
    fn natural_cmp_reference(a: &str, b: &str) -> std::cmp::Ordering {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
                let (si, sj) = (i, j);
                while i < a.len() && a[i].is_ascii_digit() {
                    i += 1;
                }
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let (na, nb) = (&a[si..i], &b[sj..j]);
                let ta = &na[na.iter().position(|c| *c != b'0').unwrap_or(na.len())..];
                let tb = &nb[nb.iter().position(|c| *c != b'0').unwrap_or(nb.len())..];
                let ord = ta.len().cmp(&tb.len()).then(ta.cmp(tb)).then(na.len().cmp(&nb.len()));
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
            } else {
                if a[i] != b[j] {
                    return a[i].cmp(&b[j]);
                }
                i += 1;
                j += 1;
            }
        }
        (a.len() - i).cmp(&(b.len() - j))
    }

    proptest::proptest! {
        #[test]
        fn natural_cmp_matches_reference(a in "[a_0-9:.]{0,12}", b in "[a_0-9:.]{0,12}") {
            proptest::prop_assert_eq!(natural_cmp(&a, &b), natural_cmp_reference(&a, &b));
            // Equal only for equal names (list() sorts unstably on it).
            proptest::prop_assert_eq!(natural_cmp(&a, &b) == std::cmp::Ordering::Equal, a == b);
        }

        #[test]
        fn natural_cmp_matches_reference_on_shared_prefixes(n in 0u32..2000, m in 0u32..2000, z in 0usize..3) {
            let (a, b) = (format!("uverbs{}{n}", "0".repeat(z)), format!("uverbs{m}"));
            proptest::prop_assert_eq!(natural_cmp(&a, &b), natural_cmp_reference(&a, &b));
        }
    }

    #[test]
    fn hex_and_num() {
        assert_eq!(parse_hex("0x3a4"), Some(0x3a4));
        assert_eq!(parse_hex("ffff"), Some(0xffff));
        assert_eq!(parse_hex("zz"), None);
        assert_eq!(parse_num("-1"), Some(-1));
        assert_eq!(parse_num("0x10"), Some(16));
    }

    #[test]
    fn escapes_and_clips() {
        assert_eq!(printable("a\u{1b}]0;x\u{7}b", 100), "a\\u{1b}]0;x\\u{7}b");
        assert_eq!(printable("abcdef", 3), "abc…");
        assert_eq!(printable("x\u{9b}2J", 10), "x\\u{9b}2J");
    }

    #[test]
    fn fit_wraps_long_lines_with_a_hanging_indent() {
        let s =
            "Errors (1):\n  subject: one two three four five six seven\n\tGPU0\tX X X X X X X X X X X X X X\nshort\n";
        let f = fit(s, 20);
        assert_eq!(
            f,
            "Errors (1):\n  subject: one two\n      three four\n      five six seven\n\tGPU0\tX X X X X X X X X X X X X X\nshort\n"
        );
        assert!(f.lines().filter(|l| !l.contains('\t')).all(|l| l.chars().count() <= 20));
        assert_eq!(fit("averyveryverylongword x", 10), "averyveryverylongword\n    x");
    }

    #[test]
    fn reports_keep_their_lines() {
        assert!(matches!(for_terminal("a\n\tb é\n"), Cow::Borrowed("a\n\tb é\n")));
        assert_eq!(for_terminal("host\u{1b}[2J\nnext\r\n"), "host\\u{1b}[2J\nnext\\r\n");
    }
}
