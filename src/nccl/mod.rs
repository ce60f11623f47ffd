//! Reading NCCL's own words: `NCCL_DEBUG=INFO` logs and nccl-tests output (spec nccl-rules.md
//! §7–8). Both readers accept what is seen in the field: optional timestamps, `srun` rank
//! prefixes (`0: `), mpirun tags (`[1,0]<stdout>:`, `[0] `), PyTorch's `[rank0]:`, pdsh's
//! `host: `, markdown indentation, CRLF, ANSI colour, several ranks interleaved, truncated last
//! lines. Both read one line at a time, so a log of any size is read in bounded memory.

pub mod bench;
pub mod filter;
pub mod log;
pub mod ras;
pub mod tests_output;
pub mod warns;

use std::borrow::Cow;

/// Is `c` a byte [`clean`] looks at: below 0x20 (TAB included), DEL or 0xC2 (a C1 control's lead)?
fn special(c: u8) -> bool {
    c < 0x20 || c == 0x7f || c == 0xc2
}

/// Where the first [`special`] byte of `b` is: sixteen bytes at a time with SSE2 on x86_64 (part
/// of every x86_64 CPU), byte by byte elsewhere and for the tail.
fn find_special(b: &[u8]) -> Option<usize> {
    find_special_but::<false>(b)
}

/// [`find_special`], LF and TAB passed over where `LF_TAB` (a buffer of lines, for
/// [`find_unclean`]).
#[inline]
fn find_special_but<const LF_TAB: bool>(b: &[u8]) -> Option<usize> {
    let wanted = |c: u8| special(c) && !(LF_TAB && (c == b'\n' || c == b'\t'));
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is baseline on x86_64; each unaligned load reads 16 bytes inside `b`.
        unsafe {
            let (space, minus1) = (_mm_set1_epi8(0x20), _mm_set1_epi8(-1));
            let (del, c2) = (_mm_set1_epi8(0x7f), _mm_set1_epi8(0xc2u8 as i8));
            let (lf, tab) = (_mm_set1_epi8(b'\n' as i8), _mm_set1_epi8(b'\t' as i8));
            while i + 16 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(i).cast());
                // signed: 0x00..=0x1f is below 0x20 and above -1
                let mut ctl = _mm_and_si128(_mm_cmplt_epi8(v, space), _mm_cmpgt_epi8(v, minus1));
                if LF_TAB {
                    ctl = _mm_andnot_si128(_mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, tab)), ctl);
                }
                let m = _mm_or_si128(ctl, _mm_or_si128(_mm_cmpeq_epi8(v, del), _mm_cmpeq_epi8(v, c2)));
                let bits = _mm_movemask_epi8(m);
                if bits != 0 {
                    return Some(i + bits.trailing_zeros() as usize);
                }
                i += 16;
            }
        }
    }
    b[i..].iter().position(|&c| wanted(c)).map(|j| i + j)
}

/// Does `b` hold a byte [`clean`] removes or reads (a [`special`] one but TAB)?
fn maybe_control(b: &[u8]) -> bool {
    let mut i = 0;
    while let Some(j) = find_special(&b[i..]) {
        if b[i + j] != b'\t' {
            return true;
        }
        i += j + 1;
    }
    false
}

/// A line without carriage returns and terminal escape sequences (CSI `ESC [ … letter`, OSC
/// `ESC ] … BEL|ESC \`, other two-byte escapes) and other control characters but TAB — C1
/// controls (U+0080–U+009F, e.g. U+009B, a one-character CSI on some terminals) included.
/// Borrowed when there is nothing to remove.
pub fn clean(l: &str) -> Cow<'_, str> {
    // C1 controls are 0xC2 0x80..=0x9F in UTF-8: any 0xC2 byte takes the slow path.
    // Without an early exit the loop vectorises: most lines are clean and read whole anyway.
    if !maybe_control(l.as_bytes()) {
        return Cow::Borrowed(l);
    }
    let mut out = Vec::with_capacity(l.len());
    clean_bytes(l.as_bytes(), &mut out);
    Cow::Owned(text_of(out))
}

/// As [`clean`], a line that needs cleaning written into `scratch` (its buffer kept from line
/// to line: no allocation per line).
pub fn clean_in<'a>(l: &'a str, scratch: &'a mut String) -> &'a str {
    if !maybe_control(l.as_bytes()) {
        return l;
    }
    let mut out = std::mem::take(scratch).into_bytes();
    out.clear();
    clean_bytes(l.as_bytes(), &mut out);
    *scratch = text_of(out);
    scratch
}

/// [`clean_bytes`]' output as text (it keeps UTF-8 whole; lossily should it not).
fn text_of(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// [`clean`]'s work: `b` without what it removes, appended to `out`.
fn clean_bytes(b: &[u8], out: &mut Vec<u8>) {
    // Byte by byte (what goes is ASCII, or a C1 control's two bytes, or the bytes of a whole
    // character after ESC), so the rest stays valid UTF-8; `tests::clean_matches_its_reference`
    // holds it to the character-by-character reading it replaced.
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            0x1b => i = past_escape(b, i + 1),
            b'\t' => {
                out.push(c);
                i += 1;
            }
            0..=0x1f | 0x7f => i += 1,
            0xc2 if b.get(i + 1).is_some_and(|d| (0x80..=0x9f).contains(d)) => i += 2,
            _ => {
                // a run of ordinary bytes, copied at once
                let start = i;
                i = find_special(&b[i + 1..]).map_or(b.len(), |j| i + 1 + j);
                out.extend_from_slice(&b[start..i]);
            }
        }
    }
}

/// Where the escape sequence whose ESC was before `i` ends: CSI (`ESC [` … a final byte in
/// @..~), a string (OSC, DCS, APC, PM: up to BEL or ST), or ESC and one character.
fn past_escape(b: &[u8], mut i: usize) -> usize {
    match b.get(i) {
        None => {}
        Some(b'[') => {
            // parameters and intermediates, then one final byte in @..~
            i += 1;
            while i < b.len() {
                let d = b[i];
                i += 1;
                if (b'@'..=b'~').contains(&d) {
                    break;
                }
            }
        }
        Some(b']' | b'P' | b'_' | b'^') => {
            // string until BEL or ST (ESC \)
            i += 1;
            while i < b.len() {
                let d = b[i];
                i += 1;
                if d == 0x07 {
                    break;
                }
                if d == 0x1b {
                    if b.get(i) == Some(&b'\\') {
                        i += 1;
                    }
                    break;
                }
            }
        }
        // any other character after ESC goes with it, all its bytes
        Some(&n) => i += utf8_len(n),
    }
    i
}

/// Bytes of the UTF-8 character that starts with `lead`.
fn utf8_len(lead: u8) -> usize {
    match lead {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xff => 4,
        _ => 1,
    }
}

/// `host:pid:tid` as NCCL prefixes its lines (the host may itself contain ':' only in odd
/// cases; two numeric fields at the end are what identifies the form).
fn looks_like_nccl_prefix(tok: &str) -> bool {
    let mut it = tok.rsplitn(3, ':');
    let (tid, pid, host) = (it.next(), it.next(), it.next());
    let num = |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    num(tid) && num(pid) && host.is_some_and(|h| !h.is_empty())
}

/// Strip what wraps a log line: a `[YYYY-MM-DD HH:MM:SS] ` timestamp, an `srun -l` prefix
/// (`12: `), mpirun's `[1,0]<stdout>:` and `[0] `, PyTorch's `[rank0]:`, a launcher's
/// `[tag]:`, pdsh's `host: ` before an NCCL line, a serving engine's logger (`ERROR 11-28
/// 11:22:27 [file.py:743] `), a leftover colour code (`[0m `), indentation, and e-mail
/// quoting (`> `).
pub fn unwrap_line(l: &str) -> &str {
    unwrap_line_fast(l).0
}

/// As [`unwrap_line`], and whether the line began with NCCL's `host:pid:tid [` as it came (the
/// bulk of a log: no other reader need look for a wrapper in it). A host the cut at NCCL's
/// prefix finds counts as one at a line's start: never merged into a known one with the same
/// pid (two containers `node1`, `gpunode1`, one behind a wrapper, stay two — review 13), so a
/// host two writes run together invent stays too: a false "not ok", never a false "ok".
pub fn unwrap_line_fast(l: &str) -> (&str, bool) {
    match unwrap_known(l) {
        (s, true) => (s, true),
        (s, false) => (nccl_prefixed(s), false),
    }
}

/// NCCL's `host:pid:tid [` at the start of `b` (a host holding no ' ' and no ':', digits):
/// where the host ends (its ':'), where the pid ends, and the ` [`'s space.
#[inline(always)]
pub(crate) fn host_pid_tid(b: &[u8]) -> Option<(usize, usize, usize)> {
    let host = memchr::memchr(b':', b)?;
    // (a host name holds no space: `Thu Jul 18 15:41:05 2024<stdout>:` is a wrapper; nor is a
    // time one: `kubectl logs --timestamps`' `2026-12-06T19:05:01.1Z host:…`, review 12)
    if host == 0 || b[..host].contains(&b' ') {
        return None;
    }
    let digits = |at: usize| b.get(at..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
    let pid = digits(host + 1);
    if pid == 0 || b.get(host + 1 + pid) != Some(&b':') {
        return None;
    }
    let tid = digits(host + 2 + pid);
    let bracket = host + 2 + pid + tid;
    (tid > 0 && b.get(bracket..bracket + 2) == Some(b" [")).then_some((host, host + 1 + pid, bracket))
}

/// The wrappers named below; `true` where the line needed none (the common case).
fn unwrap_known(l: &str) -> (&str, bool) {
    let l = relayed(l);
    // The common case first: `host:pid:tid …` (a letter or digit, then ':' and a digit) has
    // none of the wrappers below (they start with space, '>', '[', `N: ` or `host: `).
    let b = l.as_bytes();
    if b.first().is_some_and(u8::is_ascii_alphanumeric) && host_pid_tid(b).is_some() {
        return (l, true);
    }
    // Each wrapper is short: its end is looked for in the next WINDOW bytes only, and at most
    // MAX_WRAPPERS are taken off, so a line of repeated prefixes costs linear time.
    const MAX_WRAPPERS: usize = 64;
    let mut s = l.trim_start();
    for _ in 0..MAX_WRAPPERS {
        let before = s;
        s = s.trim_start_matches('>').trim_start();
        s = bracketed(s);
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && s[digits..].starts_with(": ") {
            s = s[digits + 2..].trim_start();
        }
        s = host_prefixed(s);
        s = mpi_timestamped(s);
        s = engine_logged(s);
        s = buildkit_step(s);
        if s.len() == before.len() {
            return (s, false);
        }
    }
    (s, false)
}

/// Any wrapper no rule above names (`journalctl`'s `Dec 06 19:05:01 node python3[12]: `,
/// `kubectl logs --prefix`'s `[pod/p/c] `, docker compose's `svc-1  | `, a CI runner's time):
/// NCCL's own prefix, `"%s:%d:%d [%d] NCCL %s"` (debug.cc), before the line's first tag marks
/// where NCCL's line begins, whatever came before it (review 12).
fn nccl_prefixed(s: &str) -> &str {
    static F: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let b = s.as_bytes();
    let Some(t) = F.get_or_init(|| memchr::memmem::Finder::new(" NCCL ")).find(b) else { return s };
    if !(b[t + 6..].starts_with(b"INFO") || b[t + 6..].starts_with(b"WARN")) {
        return s;
    }
    let start = line_start(b, t);
    // (not after an nccl-tests row, `  8589934592  2147483648  float  sum  -1mew0:…`: another
    // process's line glued onto it, whose host the cut would take with the row's last digits)
    let before = s[..start].trim_start();
    if before.split_whitespace().next().is_some_and(|w| w.bytes().all(|c| c.is_ascii_digit())) {
        return s;
    }
    // a host name's characters only (RFC 1123, and '_'): `2.7.8+cuda10.2workergpu22:…` is
    // NCCL's banner with another process's line glued on, no host
    let host_chars = |w: &str| {
        w.rsplitn(3, ':').nth(2).is_some_and(|h| h.bytes().all(|c| c.is_ascii_alphanumeric() || b"-._".contains(&c)))
    };
    let prefixed = start > 0
        && b[start - 1].is_ascii_whitespace()
        && s[start..].split_whitespace().next().is_some_and(|w| looks_like_nccl_prefix(w) && host_chars(w));
    if prefixed {
        return &s[start..];
    }
    // A wrapper the known ones take off (Open MPI's `--tag-output` `[1,0]<stdout>:`) behind that
    // one, glued to NCCL's prefix (SageMaker's local mode: docker compose's `name  | ` before
    // mpirun's tag — held-out set 95): the known wrappers read from the word on
    if start > 0 && b[start - 1].is_ascii_whitespace() && b[start] == b'[' {
        let inner = unwrap_known(&s[start..]).0;
        if inner.len() < s.len() - start
            && inner.split_whitespace().next().is_some_and(|w| looks_like_nccl_prefix(w) && host_chars(w))
        {
            return inner;
        }
    }
    s
}

/// A log flattened onto one line (a paste that lost its newlines: `[0] NCCL INFO a [0] NCCL
/// INFO b`, `h:1:2 [0] NCCL INFO a h:1:2 [0] NCCL INFO b`): its lines, each from the prefix of
/// its tag on. `None` for a line with one tag (every line NCCL writes): nothing is allocated.
/// Only lines longer than NCCL's usual (256 bytes) are searched for a second tag.
#[inline]
pub fn flattened(l: &str) -> Option<Vec<&str>> {
    if l.len() < 256 {
        return None;
    }
    flattened_long(l)
}

/// [`flattened`] of a line of 256 bytes or more.
fn flattened_long(l: &str) -> Option<Vec<&str>> {
    static F: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let f = F.get_or_init(|| memchr::memmem::Finder::new(" NCCL "));
    let b = l.as_bytes();
    let tags: Vec<usize> = f
        .find_iter(b)
        .filter(|&i| b[i + 6..].starts_with(b"INFO ") || b[i + 6..].starts_with(b"WARN "))
        .take(4096)
        .collect();
    if tags.len() < 2 {
        return None;
    }
    let mut starts = vec![0];
    for &t in &tags[1..] {
        let s = line_start(b, t);
        if s > *starts.last().unwrap_or(&0) {
            starts.push(s);
        }
    }
    if starts.len() < 2 {
        return None;
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(l.len());
        out.push(l[s..e].trim());
    }
    Some(out)
}

/// Where the line whose tag's space is at `t` begins: before its `[dev] ` and its
/// `host:pid:tid ` (each where it is there).
fn line_start(b: &[u8], t: usize) -> usize {
    let token_before = |end: usize| {
        let start = b[..end].iter().rposition(|c| *c == b' ').map_or(0, |i| i + 1);
        (start, &b[start..end])
    };
    let mut at = t;
    let (s, tok) = token_before(at);
    if tok.len() >= 3
        && tok[0] == b'['
        && tok[tok.len() - 1] == b']'
        && tok[1..tok.len() - 1].iter().all(u8::is_ascii_digit)
    {
        at = s;
        if at > 0 {
            let (s2, tok2) = token_before(at - 1);
            if std::str::from_utf8(tok2).is_ok_and(looks_like_nccl_prefix) {
                at = s2;
            }
        }
    }
    at
}

/// Ray's relay: `(RayWorkerWrapper pid=123, ip=10.0.0.2) <line> [repeated 7x across cluster]`.
fn relayed(l: &str) -> &str {
    let l = match l.as_bytes().last() {
        Some(b']') if l.ends_with(" across cluster]") => {
            static R: std::sync::OnceLock<memchr::memmem::FinderRev<'static>> = std::sync::OnceLock::new();
            R.get_or_init(|| memchr::memmem::FinderRev::new(" [repeated ")).rfind(l.as_bytes()).map_or(l, |i| &l[..i])
        }
        _ => l,
    };
    match l.strip_prefix('(') {
        Some(r) => match memchr::memchr_iter(b')', r.as_bytes()).find(|&e| r.as_bytes().get(e + 1) == Some(&b' ')) {
            // (` pid=` by its '=': a label holds one or two)
            Some(e)
                if memchr::memchr_iter(b'=', &r.as_bytes()[..e])
                    .any(|q| q >= 4 && &r.as_bytes()[q - 4..q] == b" pid") =>
            {
                r[e + 2..].trim_start()
            }
            _ => l,
        },
        None => l,
    }
}

/// The end of a wrapper is looked for in the next WINDOW bytes only.
const WINDOW: usize = 160;

fn head(s: &str) -> usize {
    s.len().min(WINDOW)
}

/// The first `] ` in `b` (a byte search: a substring searcher's set-up per line cost more).
fn close_space(b: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b']', b).find(|&i| b.get(i + 1) == Some(&b' '))
}

/// One pass of the bracketed wrappers: `[2024-05-01 10:00:00,123] `, `[0m `, `[rank0]:`,
/// `[1,0]<stdout>:`, mpirun's `[3] host:pid:tid …`.
fn bracketed(mut s: &str) -> &str {
    if let Some(rest) = s.strip_prefix('[') {
        if let Some(end) = close_space(&rest.as_bytes()[..head(rest)]) {
            let inner = &rest[..end];
            if inner.len() >= 19 && inner.as_bytes()[4] == b'-' && inner.as_bytes()[13] == b':' {
                s = rest[end + 2..].trim_start();
            }
        }
    }
    // `[0m ` (an ANSI colour code whose ESC was lost on the way).
    if let Some(rest) = s.strip_prefix('[') {
        let n = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b';').count();
        if n > 0 && n <= 8 && rest[n..].starts_with("m ") {
            s = rest[n + 2..].trim_start();
        }
    }
    if let Some(rest) = s.strip_prefix('[') {
        if let Some(end) = memchr::memchr(b']', &rest.as_bytes()[..head(rest)]) {
            let inner = &rest[..end];
            let after = &rest[end + 1..];
            let tight = !inner.is_empty() && !inner.contains(char::is_whitespace);
            if tight {
                if let Some(a) = after.strip_prefix("<stdout>:").or_else(|| after.strip_prefix("<stderr>:")) {
                    s = a.trim_start();
                } else if let Some(a) = after.strip_prefix(':') {
                    // `[rank0]:`, `[trainer0|0]:` — but not `[1a000] -> …` (no colon).
                    s = a.trim_start();
                } else if after.starts_with(' ')
                    && inner.bytes().all(|b| b.is_ascii_digit())
                    && after.split_whitespace().next().is_some_and(looks_like_nccl_prefix)
                {
                    // mpirun's `[3] host:pid:tid [0] NCCL INFO …`
                    s = after.trim_start();
                } else if after.starts_with(' ')
                    && inner.bytes().all(|b| b.is_ascii_digit())
                    && after.trim_start().starts_with(|c: char| c == '#' || c.is_ascii_digit())
                {
                    // MPICH's `-prepend-rank` and Intel MPI's `-l` before nccl-tests' header
                    // and rows: `[0] #  Rank  0 …`, `[0]    134217728 …` (review 12)
                    s = after.trim_start();
                }
            }
        }
    }
    s
}

/// A serving engine's logger (vLLM, SGLang: review 6): `ERROR 11-28 11:22:27 [file.py:743] `,
/// a level, the date without its year, the time, the source file and line in brackets.
fn engine_logged(s: &str) -> &str {
    let Some((level, r)) = s.split_once(' ') else { return s };
    if !["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"].contains(&level) {
        return s;
    }
    // (its end looked for in WINDOW bytes; "] " is ASCII, so the slices fall on characters)
    let Some(end) = close_space(&r.as_bytes()[..head(r)]) else { return s };
    let (head, rest) = (&r[..end], &r[end + 2..]);
    let b = head.as_bytes();
    let dated =
        b.len() > 16 && b[2] == b'-' && b[5] == b' ' && b[8] == b':' && head.contains(" [") && head.contains(".py:");
    if dated {
        rest.trim_start()
    } else {
        s
    }
}

/// Open MPI's `--timestamp-output`: `Thu Jul 18 15:41:05 2024<stdout>:` (ctime's date, then
/// the stream's tag), with `--tag-output` too: `Thu Jul 18 15:41:05 2024[1,0]<stdout>:`.
fn mpi_timestamped(s: &str) -> &str {
    let b = &s.as_bytes()[..s.len().min(48)];
    let Some(i) = memchr::memchr(b'<', b) else { return s };
    let rest = &s[i..];
    let Some(after) = rest.strip_prefix("<stdout>:").or_else(|| rest.strip_prefix("<stderr>:")) else { return s };
    let date = s[..i].split('[').next().unwrap_or("");
    // `Thu Jul 18 15:41:05 2024`: five words, the fourth a clock
    let w: Vec<&str> = date.split_whitespace().collect();
    if w.len() == 5 && w[3].len() == 8 && w[3].as_bytes()[2] == b':' && w[4].bytes().all(|c| c.is_ascii_digit()) {
        after.trim_start()
    } else {
        s
    }
}

/// Docker BuildKit's plain progress (`docker build --progress=plain`): `#12 1.234 ` (the
/// step, the seconds since it began), whose `#` would make the line a comment (review 26).
fn buildkit_step(s: &str) -> &str {
    let b = s.as_bytes();
    let digits = |at: usize| b.get(at..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
    let step = digits(1);
    let secs = digits(step + 2);
    let frac = digits(step + 3 + secs);
    let end = step + 3 + secs + frac;
    if b.first() == Some(&b'#')
        && (1..=4).contains(&step)
        && b.get(step + 1) == Some(&b' ')
        && secs > 0
        && b.get(step + 2 + secs) == Some(&b'.')
        && frac == 3
        && b.get(end) == Some(&b' ')
    {
        &s[end + 1..]
    } else {
        s
    }
}

/// pdsh/clush: `node07: node07:1234:1240 [0] NCCL INFO …`
fn host_prefixed(mut s: &str) -> &str {
    let colon = memchr::memchr(b':', &s.as_bytes()[..head(s)]);
    if let Some((first, rest)) = colon.map(|i| (&s[..i], &s[i + 1..])).filter(|(_, r)| r.starts_with(' ')) {
        if !first.is_empty()
            && !first.contains(char::is_whitespace)
            && (rest.split_whitespace().next().is_some_and(looks_like_nccl_prefix)
                // aws-ofi-nccl's test logger: `WARN: Function: … Line: …: NET/OFI …`
                || rest.trim_start().strip_prefix("WARN").or_else(|| rest.trim_start().strip_prefix("INFO")).is_some_and(|r| r.starts_with(": Function: ")))
        {
            s = rest.trim_start();
        }
    }
    s
}

/// A UTF-8 byte-order mark (editors and Windows tools write one) is not part of the first
/// line's host name (review 12: `\u{feff}ljm` was a second host): its bytes, skipped.
fn skip_bom<R: std::io::BufRead>(r: &mut R) -> std::io::Result<u64> {
    if r.fill_buf()?.starts_with(b"\xef\xbb\xbf") {
        r.consume(3);
        return Ok(3);
    }
    Ok(0)
}

/// Read `r` one line at a time (bytes, lossily decoded; a line longer than `max_line` is cut
/// there and its rest skipped), calling `f` on each. Memory stays at one line whatever the size.
/// A line that lies whole in the reader's buffer and is valid UTF-8 is handed over in place
/// (no copy, no allocation): the common case, and what keeps a 512 MiB log near the disk's speed.
pub fn for_each_line<R: std::io::BufRead>(r: R, max_line: usize, mut f: impl FnMut(&str)) -> std::io::Result<u64> {
    for_each_line_marked(r, max_line, |l, _| f(l))
}

/// Where the first byte [`clean`] would act on is in `b`, line breaks aside: a [`special`]
/// byte but LF and TAB.
fn find_unclean(b: &[u8]) -> Option<usize> {
    find_special_but::<true>(b)
}

/// A line read whole or put together from pieces (line breaks at its end dropped), decoded
/// lossily, to `f`: not known to be clean.
fn emit(line: &[u8], f: &mut dyn FnMut(&str, bool)) {
    let mut end = line.len();
    while end > 0 && (line[end - 1] == b'\n' || line[end - 1] == b'\r') {
        end -= 1;
    }
    let line = &line[..end];
    match std::str::from_utf8(line) {
        Ok(l) => f(l, false),
        Err(_) => f(&String::from_utf8_lossy(line), false),
    }
}

/// Does `chunk[at..end]` hold nothing [`clean`] acts on? `unclean` keeps where the next such
/// byte is from where it was last looked for (`chunk.len()`: none), so that one scan serves
/// every line before it.
#[inline]
fn clean_to(chunk: &[u8], at: usize, end: usize, unclean: &mut Option<usize>) -> bool {
    let u = match *unclean {
        Some(u) if u >= at => u,
        _ => find_unclean(&chunk[at..]).map_or(chunk.len(), |j| at + j),
    };
    *unclean = Some(u);
    u >= end
}

/// As [`for_each_line`], and with each line whether it is known to hold nothing [`clean`]
/// removes (`true`: `clean` would hand it back as it is). One scan of the buffer finds the next
/// such byte for every line before it, where a check per line cost a call and its set-up.
pub fn for_each_line_marked<R: std::io::BufRead>(
    mut r: R,
    max_line: usize,
    mut f: impl FnMut(&str, bool),
) -> std::io::Result<u64> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut cut = false;
    let mut total = 0u64;
    total += skip_bom(&mut r)?;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            if !buf.is_empty() || cut {
                emit(&buf, &mut f);
            }
            return Ok(total);
        }
        let n = chunk.len();
        // One UTF-8 check for the whole buffer (up to its last line break): its lines need none.
        let whole = memchr::memrchr(b'\n', chunk).map(|i| i + 1).unwrap_or(0);
        let valid = std::str::from_utf8(&chunk[..whole]).is_ok();
        let mut at = 0;
        // where the next byte `clean` acts on is (from `at`), once looked for
        let mut unclean: Option<usize> = None;
        while at < n {
            match memchr::memchr(b'\n', &chunk[at..]) {
                Some(i) => {
                    let line = &chunk[at..at + i + 1];
                    if buf.is_empty() && !cut && valid && line.len() <= max_line {
                        // SAFETY: inside `chunk[..whole]`, checked above, and cut at a line
                        // break (an ASCII byte), so a character boundary.
                        let l = unsafe { std::str::from_utf8_unchecked(line) }.trim_end_matches(['\n', '\r']);
                        f(l, clean_to(chunk, at, at + l.len(), &mut unclean));
                    } else if buf.is_empty() && !cut {
                        emit(&line[..line.len().min(max_line)], &mut f);
                    } else {
                        let room = max_line.saturating_sub(buf.len());
                        buf.extend_from_slice(&line[..line.len().min(room)]);
                        emit(&buf, &mut f);
                        buf.clear();
                        cut = false;
                    }
                    at += i + 1;
                }
                None => {
                    let rest = &chunk[at..];
                    let room = max_line.saturating_sub(buf.len());
                    if rest.len() > room {
                        cut = true;
                    }
                    buf.extend_from_slice(&rest[..rest.len().min(room)]);
                    at = n;
                }
            }
        }
        r.consume(n);
        total += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn unwraps() {
        assert_eq!(unwrap_line("[2026-03-13 22:26:02] host:1:2 [5] x"), "host:1:2 [5] x");
        assert_eq!(unwrap_line("0:   8   2 float"), "8   2 float");
        assert_eq!(unwrap_line("    # Avg bus bandwidth    : 443.007"), "# Avg bus bandwidth    : 443.007");
        assert_eq!(unwrap_line("[trainer3]:twshared:1:2 [3] NCCL INFO x"), "twshared:1:2 [3] NCCL INFO x");
        assert_eq!(
            unwrap_line("[rank0]: Bootstrap : no socket interface found"),
            "Bootstrap : no socket interface found"
        );
        assert_eq!(unwrap_line("[1,0]<stdout>:h:22:22 [0] NCCL INFO x"), "h:22:22 [0] NCCL INFO x");
        // vLLM's process label and logger (review 6); a level word that is not that logger stays
        assert_eq!(
            unwrap_line("(VllmWorker rank=0 pid=42) ERROR 11-28 11:22:27 [multiproc_executor.py:743] RuntimeError: x"),
            "RuntimeError: x"
        );
        assert_eq!(
            unwrap_line("INFO 11-28 11:22:20 [__init__.py:216] Automatically detected"),
            "Automatically detected"
        );
        assert_eq!(unwrap_line("ERROR occurred: disk full"), "ERROR occurred: disk full");
        assert_eq!(unwrap_line("INFO 11-28 ünïcödé without a bracket"), "INFO 11-28 ünïcödé without a bracket");
        // Open MPI's --timestamp-output (orte's iof: ctime's date, then the tag), alone and with
        // --tag-output
        assert_eq!(unwrap_line("Thu Jul 18 15:41:05 2024<stdout>:#  size  count"), "#  size  count");
        assert_eq!(unwrap_line("Thu Jul 18 15:41:05 2024[1,3]<stderr>:h:2:2 [0] NCCL INFO x"), "h:2:2 [0] NCCL INFO x");
        assert_eq!(unwrap_line("Thu Jul 18 is not a <stdout>: tag"), "Thu Jul 18 is not a <stdout>: tag");
        // BuildKit's `#N S.mmm ` (docker build --progress=plain), not a comment's `#`
        assert_eq!(unwrap_line("#12 1.234 #       size         count"), "#       size         count");
        assert_eq!(unwrap_line("#7 12.500 h:2:2 [0] NCCL INFO x"), "h:2:2 [0] NCCL INFO x");
        assert_eq!(unwrap_line("#12 DONE 1.2s"), "#12 DONE 1.2s");
        assert_eq!(unwrap_line("# 12 1.234 a comment"), "# 12 1.234 a comment");
        // docker compose's `name  | ` (a wrapper no rule names) before Open MPI's --tag-output,
        // glued to NCCL's prefix; a bracketed word that is no tag stays
        assert_eq!(
            unwrap_line(
                "abc-algo-1-xyz  | [1,mpirank:0,algo-1]<stdout>:algo-1-xyz:280:280 [0] NCCL INFO Using network Socket"
            ),
            "algo-1-xyz:280:280 [0] NCCL INFO Using network Socket"
        );
        assert_eq!(unwrap_line("svc-1  | [1,0]<stderr>:h:2:2 [0] NCCL WARN x"), "h:2:2 [0] NCCL WARN x");
        let odd = "svc-1  | [note]>:not:a:prefix [0] NCCL INFO x";
        assert_eq!(unwrap_line(odd), odd);
    }

    #[test]
    fn a_flattened_log_is_read_line_by_line() {
        let pad = "x".repeat(220);
        let l = format!("> > [0] NCCL INFO NCCL_IB_HCA set to mlx5_0:1 {pad} [0] NCCL INFO NET/IB : No device found. h:1:2 [3] NCCL WARN boom");
        assert_eq!(
            flattened(&l).unwrap(),
            vec![
                &format!("> > [0] NCCL INFO NCCL_IB_HCA set to mlx5_0:1 {pad}")[..],
                "[0] NCCL INFO NET/IB : No device found.",
                "h:1:2 [3] NCCL WARN boom"
            ]
        );
        // one tag, however long: the line as it is
        assert!(flattened(&format!("h:1:2 [0] NCCL INFO Channel 00/32 : {}", "0 1 ".repeat(200))).is_none());
        assert!(flattened("h:1:2 [0] NCCL INFO a [0] NCCL INFO b").is_none(), "short lines are not searched");
        assert_eq!(unwrap_line("[0] node0:13571:13571 [0] NCCL INFO x"), "node0:13571:13571 [0] NCCL INFO x");
        assert_eq!(unwrap_line("MLVM2: MLVM2:10802:10802 [7] NCCL INFO x"), "MLVM2:10802:10802 [7] NCCL INFO x");
        assert_eq!(unwrap_line("[0m ip-1:14605:14673 [0] NCCL INFO x"), "ip-1:14605:14673 [0] NCCL INFO x");
        // A channel fragment keeps its leading rank.
        assert_eq!(unwrap_line("9[1a000] -> 2[6b000] [send] via NET/IB/0"), "9[1a000] -> 2[6b000] [send] via NET/IB/0");
        assert_eq!(unwrap_line("[1a000] x"), "[1a000] x");
    }

    #[test]
    fn cleans_escapes_and_carriage_returns() {
        assert_eq!(clean("a\u{1b}[31mred\u{1b}[0m b\r"), "ared b");
        assert_eq!(clean("x\u{1b}]8;;http://e\u{7}link\u{1b}]8;;\u{7}y"), "xlinky");
        assert_eq!(clean("\u{1b}]0;title\u{1b}\\t"), "t");
        assert!(matches!(clean("plain line"), Cow::Borrowed(_)));
        // C1 controls (U+009B is CSI on some terminals) go; other non-ASCII text stays.
        assert_eq!(clean("a\u{9b}31mb\u{85}c é ü"), "a31mbc é ü");
        assert_eq!(clean("Grüße ±"), "Grüße ±");
    }

    fn clean_reference(l: &str) -> Cow<'_, str> {
        // C1 controls are 0xC2 0x80..=0x9F in UTF-8: any 0xC2 byte takes the slow path.
        // Without an early exit the loop vectorises: most lines are clean and read whole anyway.
        if !maybe_control(l.as_bytes()) {
            return Cow::Borrowed(l);
        }
        let mut out = String::with_capacity(l.len());
        let mut it = l.chars().peekable();
        while let Some(c) = it.next() {
            match c {
                '\u{1b}' => match it.next() {
                    Some('[') => {
                        // parameters and intermediates, then one final byte in @..~
                        for d in it.by_ref() {
                            if ('@'..='~').contains(&d) {
                                break;
                            }
                        }
                    }
                    Some(']') | Some('P') | Some('_') | Some('^') => {
                        // string until BEL or ST (ESC \)
                        while let Some(d) = it.next() {
                            if d == '\u{7}' {
                                break;
                            }
                            if d == '\u{1b}' {
                                if it.peek() == Some(&'\\') {
                                    it.next();
                                }
                                break;
                            }
                        }
                    }
                    _ => {}
                },
                '\t' => out.push('\t'),
                c if c.is_control() => {}
                c => out.push(c),
            }
        }
        Cow::Owned(out)
    }

    #[test]
    fn maybe_control_is_exact_at_every_offset_and_byte() {
        // Each byte value at each place of lines 0..=40 bytes long (SSE2 blocks and the tail),
        // against the byte-by-byte reading.
        let exact = |b: &[u8]| b.iter().any(|&c| (c < 0x20 && c != b'\t') || c == 0x7f || c == 0xc2);
        for len in 0..=40usize {
            for at in 0..len {
                for v in 0..=255u8 {
                    let mut b = vec![b'x'; len];
                    b[at] = v;
                    assert_eq!(maybe_control(&b), exact(&b), "byte {v:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn clean_matches_its_reference() {
        // The byte-wise cleaner against the character-wise one it replaced, on lines of escape
        // sequences, C1 controls, multi-byte characters and truncated sequences, mixed.
        let parts = [
            "a",
            "é",
            "\u{1b}[31m",
            "\u{1b}]8;;x\u{7}",
            "\u{1b}]0;t\u{1b}\\",
            "\u{1b}",
            "\u{1b}é",
            "\u{9b}",
            "\u{85}",
            "\t",
            "\r",
            "\u{7f}",
            "\u{1b}[",
            "\u{1b}]",
            "ü",
            "日本",
            "\u{0}",
            "[0m ",
        ];
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..20_000 {
            let mut l = String::new();
            for _ in 0..(x % 9) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                l.push_str(parts[(x % parts.len() as u64) as usize]);
            }
            assert_eq!(clean(&l), clean_reference(&l), "{l:?}");
            x = x.wrapping_add(1);
        }
    }

    #[test]
    fn a_line_marked_clean_is_one_clean_leaves_alone() {
        // Lines of the parts above (escapes, C1 controls, CR, TAB, long plain runs), read from
        // buffers of several sizes: a line marked clean is one `clean` hands back as it is,
        // and every line cleaned in a kept buffer is what `clean` makes of it.
        let parts = ["a", "é", "\u{1b}[31m", "\u{9b}", "\t", "\r", "\u{7f}", "\u{0}", "日本", "0123456789abcdef0123"];
        let mut x: u64 = 0x2545f4914f6cdd1d;
        let mut text = String::new();
        for _ in 0..3000 {
            for _ in 0..(x % 12) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push_str(parts[(x % parts.len() as u64) as usize]);
            }
            text.push_str(if x % 5 == 0 { "\r\n" } else { "\n" });
            x = x.wrapping_add(1);
        }
        let (mut marked, mut scratch) = (0, String::new());
        for cap in [7, 64, 1 << 16] {
            let mut lines = 0;
            for_each_line_marked(std::io::BufReader::with_capacity(cap, text.as_bytes()), 1 << 20, |l, ok| {
                lines += 1;
                if ok {
                    marked += 1;
                    assert!(matches!(clean(l), Cow::Borrowed(c) if c == l), "{l:?}");
                }
                assert_eq!(clean_in(l, &mut scratch), clean(l), "{l:?}");
            })
            .unwrap();
            assert_eq!(lines, 3000);
        }
        assert!(marked > 1000, "few lines marked clean: {marked}");
    }

    #[test]
    fn repeated_wrappers_cost_linear_time() {
        // At most 64 wrappers come off (a real line has a handful), each found within its
        // window: 16 000 colour prefixes no longer cost 16 000 scans of the line (hostile #10).
        let l = format!("{}h:1:2 [0] NCCL INFO x", "[0m ".repeat(100));
        assert_eq!(unwrap_known(&l).0, format!("{}h:1:2 [0] NCCL INFO x", "[0m ".repeat(36)));
        // (and NCCL's own prefix, looked for once, gives the line's start after them)
        assert_eq!(unwrap_line(&l), "h:1:2 [0] NCCL INFO x");
        let far = format!("[{}] [0] NCCL INFO x", "9".repeat(400));
        assert_eq!(unwrap_line(&far), far, "a ']' past the window is no wrapper");
        // but NCCL's own prefix after it marks where NCCL's line starts, whatever came before
        let far = format!("[{}] h:1:2 [0] NCCL INFO x", "9".repeat(400));
        assert_eq!(unwrap_line(&far), "h:1:2 [0] NCCL INFO x");
        assert_eq!(
            unwrap_line("[2026-12-02 06:30:00] node07: node07:1:2 [0] NCCL INFO x"),
            "node07:1:2 [0] NCCL INFO x"
        );
    }

    #[test]
    fn lines_are_bounded_and_all_read() {
        let text = format!("a\r\n{}\nlast", "x".repeat(100));
        let mut got = Vec::new();
        let n = for_each_line(std::io::BufReader::with_capacity(7, text.as_bytes()), 10, |l| got.push(l.to_string()))
            .unwrap();
        assert_eq!(got, vec!["a".to_string(), "x".repeat(10), "last".to_string()]);
        assert_eq!(n as usize, text.len());
    }
}
