//! Reading NCCL's own words: `NCCL_DEBUG=INFO` logs and nccl-tests output (spec nccl-rules.md
//! §7–8). Both readers accept what is seen in the field: optional timestamps, `srun` rank
//! prefixes (`0: `), markdown indentation, several ranks interleaved, truncated last lines.

pub mod filter;
pub mod log;
pub mod tests_output;

/// Strip what wraps a log line: a `[YYYY-MM-DD HH:MM:SS] ` timestamp, an `srun -l` prefix
/// (`12: `), indentation, and e-mail quoting (`> `).
pub fn unwrap_line(l: &str) -> &str {
    let mut s = l.trim_start();
    loop {
        let before = s;
        s = s.trim_start_matches('>').trim_start();
        if let Some(rest) = s.strip_prefix('[') {
            if let Some(end) = rest.find("] ") {
                let inner = &rest[..end];
                if inner.len() >= 19 && inner.as_bytes()[4] == b'-' && inner.as_bytes()[13] == b':' {
                    s = rest[end + 2..].trim_start();
                }
            }
        }
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && s[digits..].starts_with(": ") {
            s = s[digits + 2..].trim_start();
        }
        if s == before {
            return s;
        }
    }
}

/// Drop the header lines the fixtures add (`# source:` …) and excerpt markers.
pub fn is_added_header(l: &str) -> bool {
    ["# source:", "# machine:", "# notable:", "# NOTE:", "# excerpt note:", "# ----- [excerpt boundary"]
        .iter()
        .any(|p| l.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn unwraps() {
        assert_eq!(unwrap_line("[2026-03-13 22:26:02] host:1:2 [5] x"), "host:1:2 [5] x");
        assert_eq!(unwrap_line("0:   8   2 float"), "8   2 float");
        assert_eq!(unwrap_line("    # Avg bus bandwidth    : 443.007"), "# Avg bus bandwidth    : 443.007");
        assert_eq!(unwrap_line("[trainer3]:twshared:1 [3] NCCL INFO x"), "[trainer3]:twshared:1 [3] NCCL INFO x");
    }
}
