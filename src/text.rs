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

/// An error's text on one line (causes chained with `{:#}` may contain line breaks).
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_clips() {
        assert_eq!(printable("a\u{1b}]0;x\u{7}b", 100), "a\\u{1b}]0;x\\u{7}b");
        assert_eq!(printable("abcdef", 3), "abc…");
        assert_eq!(printable("x\u{9b}2J", 10), "x\\u{9b}2J");
    }

    #[test]
    fn reports_keep_their_lines() {
        assert!(matches!(for_terminal("a\n\tb é\n"), Cow::Borrowed("a\n\tb é\n")));
        assert_eq!(for_terminal("host\u{1b}[2J\nnext\r\n"), "host\\u{1b}[2J\nnext\\r\n");
    }
}
