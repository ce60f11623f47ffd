//! The trust boundary: every file ibwire reads that someone else wrote (configs, the container's
//! environ file, snapshots, NCCL logs, nccl.conf) goes through here, and every scratch file
//! ibwire writes lives in a private directory made here.
//!
//! A read is bounded in size, refuses what is not a regular file (a FIFO would block, /dev/zero
//! would never end; the open is non-blocking so even the refusal cannot hang), and turns
//! non-UTF-8 bytes into U+FFFD instead of failing the whole file. Sysfs trees under `--root`
//! have their own confined reader (`probe::sysroot`), which follows no symlink out of the tree.

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Snapshots, logs, environ files, nccl.conf: 4 MiB is a hundred times what a real one holds.
pub const MAX_INPUT: u64 = 4 << 20;
/// A configuration file: a few hundred bytes in practice.
pub const MAX_CONFIG: u64 = 256 << 10;

/// Open `path` for reading without blocking on a FIFO, and check it is a regular file.
fn open_regular(path: &Path) -> std::io::Result<(File, std::fs::Metadata)> {
    open_regular_with(path, 0)
}

fn open_regular_with(path: &Path, flags: i32) -> std::io::Result<(File, std::fs::Metadata)> {
    let f = OpenOptions::new().read(true).custom_flags(nix::libc::O_NONBLOCK | flags).open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok((f, m))
}

/// The bytes of a regular file of at most `limit` bytes. `NotFound` (and `ENOTDIR`, a path
/// under a file such as `HOME=/dev/null`) keep their kind so callers can treat absence as such.
pub fn read_bytes(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let (f, m) = open_regular(path)?;
    read_limited(f, m.len(), limit)
}

fn read_limited(f: File, len: u64, limit: u64) -> std::io::Result<Vec<u8>> {
    if len > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} KiB ({} bytes)", limit >> 10, len),
        ));
    }
    let mut buf = Vec::with_capacity(len as usize);
    // The size can change under us (a log still being written): never read past the limit.
    f.take(limit + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("larger than {} KiB", limit >> 10)));
    }
    Ok(buf)
}

/// As [`read_text`], for a file found by listing a directory someone else can write: a final
/// symbolic link is refused (`O_NOFOLLOW`, so a link planted after the listing is refused too),
/// never followed to whatever it names.
pub fn read_text_nofollow(path: &Path, limit: u64) -> std::io::Result<String> {
    let (f, m) = open_regular_with(path, nix::libc::O_NOFOLLOW).map_err(|e| {
        if e.raw_os_error() == Some(nix::libc::ELOOP) {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "a symbolic link, not followed")
        } else {
            e
        }
    })?;
    read_limited(f, m.len(), limit).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Text of a regular file, invalid UTF-8 replaced (one bad byte must not cost the rest).
pub fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    read_bytes(path, limit).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Absence as the caller sees it: no such file, or a path through something that is not a
/// directory (`HOME=/dev/null` makes `~/.config/ibwire.yaml` such a path).
pub fn is_absent(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(nix::libc::ENOTDIR)
}

/// A configuration file, which can change what root does: besides the bounds above, refuse it
/// when others than its owner and root could have written it (group- or world-writable), or
/// when it belongs to someone other than root or the user running ibwire.
pub fn read_config(path: &Path) -> std::io::Result<String> {
    let (f, m) = open_regular(path)?;
    let euid = nix::unistd::geteuid().as_raw();
    if m.mode() & 0o022 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("refused: writable by group or others (mode {:o}); chmod go-w it", m.mode() & 0o7777),
        ));
    }
    if m.uid() != 0 && m.uid() != euid && !owned_outside_namespace(m.uid()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("refused: owned by uid {}, neither root nor this user (uid {euid})", m.uid()),
        ));
    }
    read_limited(f, m.len(), MAX_CONFIG).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Is `uid` the kernel's overflow uid standing for an owner outside this user namespace?
///
/// enroot starts every unprivileged container (pyxis runs enroot as the job's user) in a user
/// namespace that maps only the caller's uid (`1000 1000 1`, or `0 1000 1` with `--root`):
/// there a root-owned `/etc/ibwire.yaml` reads as owned by the overflow uid (65534). No one in
/// the namespace can have written such a file, since only mapped uids create files and they show
/// as themselves; with the mode check (no group or other write) it is as safe as root's own,
/// and nothing a config says there gives anyone more than the user who started the namespace
/// already has. Read only when such an owner is seen, so the hook's usual path opens nothing
/// more. In the initial namespace (or one where the overflow uid is itself mapped, as for a
/// `nobody` caller) the overflow uid is an ordinary owner and refused as before.
pub fn owned_outside_namespace(uid: u32) -> bool {
    let overflow = std::fs::read_to_string("/proc/sys/kernel/overflowuid")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(65534);
    uid == overflow && std::fs::read_to_string("/proc/self/uid_map").map(|m| unmapped_in(&m, uid)).unwrap_or(false)
}

/// `uid_map` describes a non-initial user namespace in which the inside id `uid` is not mapped.
/// The initial namespace's map is `0 0 4294967295`; a map that cannot be parsed counts as the
/// initial one (refuse rather than accept on a guess).
pub fn unmapped_in(uid_map: &str, uid: u32) -> bool {
    let mut rows = Vec::new();
    for line in uid_map.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<u64> = match line.split_whitespace().map(str::parse).collect() {
            Ok(f) => f,
            Err(_) => return false,
        };
        if f.len() != 3 {
            return false;
        }
        rows.push((f[0], f[1], f[2]));
    }
    if rows.is_empty() || rows == [(0, 0, 4_294_967_295)] {
        return false;
    }
    !rows.iter().any(|&(inside, _, count)| (inside..inside.saturating_add(count)).contains(&u64::from(uid)))
}

/// A private scratch directory (mode 0700, unpredictable name, made by mkdtemp so an existing
/// path or a planted symlink is never reused), removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    pub fn new(prefix: &str) -> Result<Scratch> {
        let template = std::env::temp_dir().join(format!("{prefix}-XXXXXX"));
        let path = nix::unistd::mkdtemp(&template)
            .with_context(|| format!("cannot create a private directory like {}", template.display()))?;
        Ok(Scratch { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keep the directory (its contents are evidence the user needs): no removal on drop.
    pub fn keep(self) -> PathBuf {
        let p = self.path.clone();
        std::mem::forget(self);
        p
    }

    /// Create `name` inside, exclusively (never through an existing file or link), mode 0600.
    pub fn write(&self, name: &str, content: &[u8]) -> Result<PathBuf> {
        use std::io::Write;
        if name.contains('/') || name == ".." || name == "." {
            bail!("bad scratch file name {name:?}");
        }
        let p = self.path.join(name);
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&p)
            .with_context(|| format!("cannot create {}", p.display()))?;
        f.write_all(content).with_context(|| format!("cannot write {}", p.display()))?;
        Ok(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Nesting deeper than any document of ours (a snapshot is 6 levels deep).
const MAX_YAML_DEPTH: usize = 64;

/// A parser's message about a file someone else wrote, without that file's bytes. serde's
/// messages quote what they found (`unknown field \`root:$6$…\``, `invalid type: string "…"`):
/// given a planted link to `/etc/shadow` or a token file, the quote is the secret. Every quoted
/// span before `, expected` is dropped (what follows is ibwire's own schema: field names, types);
/// `missing field`/`duplicate field` name ibwire's own fields and are kept. The position
/// (` at line L column C`) is dropped: callers put `LINE:COLUMN` in front. One line, bounded.
pub fn parse_error_text(msg: &str) -> String {
    let mut msg = msg.to_string();
    while let Some(i) = msg.find(" at line ") {
        // ` at line 3 column 7` (serde_json, serde_yaml): cut up to the column number's end
        let tail = &msg[i + 9..];
        let end = tail
            .find(" column ")
            .map(|c| c + 8 + tail[c + 8..].find(|ch: char| !ch.is_ascii_digit()).unwrap_or(tail.len() - c - 8))
            .unwrap_or_else(|| tail.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(tail.len()));
        msg.replace_range(i..i + 9 + end, "");
    }
    let ours = msg.starts_with("missing field") || msg.starts_with("duplicate field");
    let (head, expected) = match msg.find(", expected") {
        Some(i) => msg.split_at(i),
        None => (msg.as_str(), ""),
    };
    let mut out = String::with_capacity(head.len().min(200) + expected.len().min(400));
    if ours {
        out.push_str(head);
    } else {
        let mut quote: Option<char> = None;
        for c in head.chars() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '`' || c == '"' => {
                    quote = Some(c);
                    out.push_str("(not shown)");
                }
                None => out.push(c),
            }
        }
    }
    out.push_str(expected);
    // A misspelt key or value: which of ibwire's own names it resembles (the user's word stays
    // unquoted, as above; only the name it is closest to is said).
    if let Some(near) = did_you_mean(&msg, expected) {
        out.push_str(&format!("; did you mean `{near}`?"));
    }
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::text::printable(&out, 400)
}

/// For `unknown field|variant `X`, expected one of `a`, `b`…`: the expected name within a small
/// edit distance of X (a letter or two for a short name, a quarter of a long one), if one is.
fn did_you_mean(msg: &str, expected: &str) -> Option<String> {
    // `unknown field …` at the top, `health: unknown field …` in a section
    let at = |p: &str| msg.find(p).map(|i| &msg[i + p.len()..]);
    let rest = at("unknown field `").or_else(|| at("unknown variant `"))?;
    let word = &rest[..rest.find('`')?];
    if word.is_empty() || word.len() > 64 {
        return None;
    }
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let limit = (word.chars().count() / 4).max(1);
    names
        .iter()
        .map(|n| (edit_distance(word, n), *n))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.to_string())
}

/// Levenshtein distance over characters (both words at most 64 characters here).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j])).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Refuse, before the YAML parser sees it, what makes it slow or large: anchors and aliases
/// (an alias bomb expands kilobytes into gigabytes; neither configs nor snapshots use them) and
/// nesting deeper than `MAX_YAML_DEPTH` in flow (`[[[[…`) or block (indentation) style. The scan
/// is lexical and linear: quoted scalars and comments are skipped.
pub fn yaml_guard(text: &str) -> Result<()> {
    for (n, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 2 * MAX_YAML_DEPTH {
            bail!("{}:1: nested deeper than {MAX_YAML_DEPTH} levels", n + 1);
        }
    }
    let (mut depth, mut quote, mut comment, mut line) = (0usize, None::<u8>, false, 1usize);
    let b = text.as_bytes();
    let mut prev = b'\n'; // last significant byte outside quotes
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            line += 1;
            comment = false;
            // a quoted scalar may span lines: `quote` stays open
            prev = b'\n';
            continue;
        }
        if comment {
            continue;
        }
        if let Some(q) = quote {
            if c == q && !(q == b'"' && i > 0 && b[i - 1] == b'\\') {
                quote = None;
                prev = b'x';
            }
            continue;
        }
        match c {
            b'#' if matches!(prev, b' ' | b'\t' | b'\n') || i == 0 => comment = true,
            b'"' | b'\'' if matches!(prev, b'\n' | b' ' | b'\t' | b':' | b'-' | b'[' | b'{' | b',' | b'?') => {
                quote = Some(c)
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_YAML_DEPTH {
                    bail!("{line}:1: nested deeper than {MAX_YAML_DEPTH} levels");
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'&' | b'*' if matches!(prev, b'\n' | b' ' | b'\t' | b':' | b'-' | b'[' | b'{' | b',' | b'?') => {
                let next = b.get(i + 1).copied().unwrap_or(b' ');
                let at_value = {
                    // only a token start: the byte before must be a separator or whitespace
                    let before = if i == 0 { b'\n' } else { b[i - 1] };
                    matches!(before, b'\n' | b' ' | b'\t' | b'[' | b'{' | b',')
                };
                if at_value && !matches!(next, b' ' | b'\t' | b'\n' | b',' | b']' | b'}') {
                    bail!("{line}:1: YAML anchors and aliases (&name, *name) are not accepted");
                }
            }
            _ => {}
        }
        if !matches!(c, b' ' | b'\t') {
            prev = c;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_never_quote_the_file() {
        let e = parse_error_text(
            "unknown field `root:$6$secrethash:19000:0:99999:7::`, expected one of `schema`, `source` at line 1 column 1",
        );
        assert_eq!(e, "unknown field (not shown), expected one of `schema`, `source`");
        let e = parse_error_text("invalid type: string \"TOKEN-abc\", expected a sequence at line 2 column 11");
        assert_eq!(e, "invalid type: string (not shown), expected a sequence");
        assert_eq!(parse_error_text("missing field `schema` at line 1 column 1"), "missing field `schema`");
        assert_eq!(
            parse_error_text("did not find expected key at line 4 column 3, while parsing"),
            "did not find expected key, while parsing"
        );
        // a misspelt key: the name it resembles, never the word itself
        let e = parse_error_text(
            "unknown field `bootstrap_interfce`, expected one of `hca`, `bootstrap_interface`, `hook`",
        );
        assert!(e.ends_with("; did you mean `bootstrap_interface`?") && !e.contains("interfce"), "{e}");
        let e = parse_error_text("unknown field `zzz`, expected one of `hca`, `hook`");
        assert!(!e.contains("did you mean"), "{e}");
        let e = parse_error_text(&format!("unknown variant `{}\u{1b}[2J`, expected `IB`", "x".repeat(10_000)));
        assert!(!e.contains("xx") && !e.contains('\u{1b}') && e.len() < 100, "{e}");
    }
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn fifo_device_and_oversize_are_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read_text(&fifo, MAX_INPUT).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(read_text(Path::new("/dev/zero"), MAX_INPUT).is_err());
        let big = t.path().join("big");
        std::fs::write(&big, vec![b'a'; 2048]).unwrap();
        assert!(read_text(&big, 1024).unwrap_err().to_string().contains("larger than 1 KiB"));
        assert!(is_absent(&read_text(Path::new("/dev/null/x"), 10).unwrap_err()));
    }

    #[test]
    fn invalid_utf8_costs_one_character() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("env");
        std::fs::write(&f, b"A=1\nB=\xff\nC=3\n").unwrap();
        assert_eq!(read_text(&f, 100).unwrap(), "A=1\nB=\u{fffd}\nC=3\n");
    }

    #[test]
    fn configs_writable_by_others_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("c.yaml");
        std::fs::write(&f, "hook: {strict: true}\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read_config(&f).is_ok());
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(read_config(&f).unwrap_err().to_string().contains("writable by group or others"));
    }

    #[test]
    fn overflow_owner_counts_as_outside_only_in_a_namespace_that_does_not_map_it() {
        // enroot's maps (../shared/spec/enroot-hook-contract.md): the caller onto itself or onto 0
        assert!(unmapped_in("      1000       1000          1\n", 65534));
        assert!(unmapped_in("         0       1000          1\n", 65534));
        // the initial namespace, a nobody caller mapped onto itself, garbage: not outside
        assert!(!unmapped_in("         0          0 4294967295\n", 65534));
        assert!(!unmapped_in("     65534      65534          1\n", 65534));
        assert!(!unmapped_in("0 100000 65536\n1000 1000 x\n", 65534));
        assert!(!unmapped_in("", 65534));
        assert!(!unmapped_in("0 100000\n", 65534));
        // a wide subordinate range that covers the overflow uid maps it
        assert!(!unmapped_in("0 100000 65537\n", 65534));
        assert!(unmapped_in("0 100000 65534\n", 65534));
    }

    #[test]
    fn scratch_is_private_and_removed() {
        let s = Scratch::new("ibwire-test").unwrap();
        let p = s.path().to_path_buf();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o700);
        let f = s.write("x.py", b"print(1)").unwrap();
        assert!(s.write("x.py", b"again").is_err(), "never through an existing file");
        assert_eq!(std::fs::read(&f).unwrap(), b"print(1)");
        drop(s);
        assert!(!p.exists());
    }
}
