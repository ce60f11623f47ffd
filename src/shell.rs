//! Environment variable names and shell words: what may be written where a shell, an environ
//! file or NCCL reads it.

/// An environment variable name we will write anywhere.
pub fn valid_name(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// A word for any POSIX shell (bash, dash, busybox ash): bare only when every character is one
/// that no shell expands (letters, digits, `_ . / : = , + @ % -`), else single-quoted with `'`
/// written as `'\''`. Braces, `~`, `*`, `[`, `!` and the like are therefore always quoted
/// (`{a,b}` is brace-expanded by bash, `~` and globs everywhere). An `=` at the start of the
/// value or of a `:`-separated part is quoted too: zsh expands `=cmd` there in an assignment
/// (`export X=:=+` leaves X empty; found by the property test).
pub fn sh_quote(v: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:=,+@%-".contains(c);
    if !v.is_empty() && v.chars().all(safe) && !v.starts_with('=') && !v.contains(":=") {
        return v.to_string();
    }
    format!("'{}'", v.replace('\'', "'\\''"))
}
