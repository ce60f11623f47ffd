//! The one place that opens files under the node's filesystem root.
//!
//! Every reader goes through `SysRoot` so that `--root DIR` (a captured tree, an hwloc test
//! tarball, a fixture built by a test) and `/` behave the same, and so that `--capture` can
//! record exactly what was read. Reading is forgiving by design: a missing attribute is `None`,
//! an unreadable or garbled one is `None` plus a note; nothing here panics or blocks (FIFOs and
//! device nodes are refused, reads are bounded).

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Attribute files in sysfs are at most a page; procfs tables we read are small too. A bound
/// keeps a hostile tree (a symlink to /dev/zero, a huge file) from stalling the probe.
const MAX_READ: u64 = 4 << 20;

pub struct SysRoot {
    root: PathBuf,
    live: bool,
    notes: Mutex<Vec<String>>,
    recorder: Option<Mutex<BTreeSet<PathBuf>>>,
    /// Resolved form of every prefix seen: devices share long sysfs prefixes, and lstat-ing
    /// each of them once instead of once per device is most of the probe's speed.
    resolved: Mutex<HashMap<String, Option<PathBuf>>>,
    /// Read descriptive attributes too (firmware, GUIDs, link speeds…), not only what decisions
    /// use. Off for the enroot hook, which runs on every container start.
    full: bool,
}

impl SysRoot {
    pub fn new(root: &Path) -> SysRoot {
        let live = root == Path::new("/");
        SysRoot {
            root: root.to_path_buf(),
            live,
            notes: Mutex::new(Vec::new()),
            recorder: None,
            resolved: Mutex::new(HashMap::new()),
            full: true,
        }
    }

    /// A root that remembers every path it touched, for `probe --capture`.
    pub fn recording(root: &Path) -> SysRoot {
        let mut r = SysRoot::new(root);
        r.recorder = Some(Mutex::new(BTreeSet::new()));
        r
    }

    /// A root that reads only what the decisions need.
    pub fn decisions_only(mut self) -> SysRoot {
        self.full = false;
        self
    }

    pub fn full(&self) -> bool {
        self.full
    }

    pub fn is_live(&self) -> bool {
        self.live
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn note(&self, msg: impl Into<String>) {
        self.notes.lock().unwrap().push(msg.into());
    }

    /// Notes in a stable order (devices may be read on several threads).
    pub fn take_notes(&self) -> Vec<String> {
        let mut n = std::mem::take(&mut *self.notes.lock().unwrap());
        n.sort();
        n.dedup();
        n
    }

    pub fn recorded(&self) -> Vec<PathBuf> {
        self.recorder.as_ref().map(|r| r.lock().unwrap().iter().cloned().collect()).unwrap_or_default()
    }

    fn record(&self, rel: &Path) {
        if let Some(r) = &self.recorder {
            r.lock().unwrap().insert(rel.to_path_buf());
        }
    }

    pub fn abs(&self, rel: &Path) -> PathBuf {
        self.root.join(rel)
    }

    /// `/`-relative display form of a root-relative path, for notes.
    pub fn show(&self, rel: &Path) -> String {
        format!("/{}", rel.display())
    }

    pub fn exists(&self, rel: &Path) -> bool {
        self.record(rel);
        fs::symlink_metadata(self.abs(rel)).is_ok()
    }

    pub fn is_dir(&self, rel: &Path) -> bool {
        self.record(rel);
        fs::metadata(self.abs(rel)).map(|m| m.is_dir()).unwrap_or(false)
    }

    /// Names in a directory, sorted. A missing directory is an empty list (no note): absence is
    /// information (no InfiniBand on this node), not an error.
    pub fn list(&self, rel: &Path) -> Vec<String> {
        self.record(rel);
        let rd = match fs::read_dir(self.abs(rel)) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                self.note(format!("cannot list {}: {}", self.show(rel), e));
                return Vec::new();
            }
        };
        let mut names = Vec::new();
        for ent in rd.flatten() {
            match ent.file_name().into_string() {
                Ok(n) => {
                    // A listed name is a fact (lower_* links, /dev/infiniband entries) even
                    // when nothing under it is read, so a capture must keep it.
                    self.record(&rel.join(&n));
                    names.push(n)
                }
                Err(raw) => self.note(format!("skipped non-UTF-8 name {:?} in {}", raw, self.show(rel))),
            }
        }
        names.sort_by(|a, b| natural_cmp(a, b));
        names
    }

    /// Read a small text file, trimmed. Missing → None silently; anything else that goes wrong
    /// → None and a note naming the file.
    pub fn read(&self, rel: &Path) -> Option<String> {
        self.record(rel);
        let abs = self.abs(rel);
        // O_NONBLOCK: a FIFO or terminal planted in a tree answers at once instead of blocking.
        let mut f = match fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_NONBLOCK).open(&abs) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) if e.raw_os_error() == Some(nix::libc::ENOTDIR) => return None,
            Err(e) => {
                self.note(format!("cannot read {}: {}", self.show(rel), e));
                return None;
            }
        };
        // sysfs returns a whole attribute (at most a page) in one read; procfs tables may take
        // several. A short first read under sys/ is therefore the end.
        let one_shot = rel.starts_with("sys");
        let mut buf = Vec::new();
        // Small: zeroing a page per attribute was a sixth of the probe's instructions.
        let mut chunk = [0u8; 512];
        loop {
            match f.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    if (one_shot && n < chunk.len() && buf.len() < 4096) || buf.len() as u64 >= MAX_READ {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // sysfs answers EINVAL for attributes that have no value in the current state
                // (carrier or speed of a down link): that is "unknown", not a fault.
                Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => return None,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    self.note(format!("cannot read {}: {}", self.show(rel), e));
                    return None;
                }
            }
        }
        if buf.is_empty() && !f.metadata().map(|m| m.is_file()).unwrap_or(false) {
            self.note(format!("{} is not a regular file; ignored", self.show(rel)));
            return None;
        }
        match String::from_utf8(buf) {
            Ok(s) => Some(s.trim_end_matches(['\n', '\r', ' ', '\t', '\0']).to_string()),
            Err(_) => {
                self.note(format!("{} is not UTF-8 text; ignored", self.show(rel)));
                None
            }
        }
    }

    /// Read and parse an attribute; garbage becomes None plus a note saying what was expected.
    pub fn parse<T>(&self, rel: &Path, what: &str, f: impl FnOnce(&str) -> Option<T>) -> Option<T> {
        let raw = self.read(rel)?;
        match f(&raw) {
            Some(v) => Some(v),
            None => {
                self.note(format!("{}: expected {}, found {:?}", self.show(rel), what, clip(&raw)));
                None
            }
        }
    }

    /// The target of one symlink, as written.
    pub fn read_link(&self, rel: &Path) -> Option<PathBuf> {
        self.record(rel);
        fs::read_link(self.abs(rel)).ok()
    }

    /// Resolve symlinks inside the root: absolute link targets are taken relative to the root,
    /// `..` never climbs above it. Returns the root-relative canonical path, or None if a
    /// component is missing (dangling links are common in captured trees).
    pub fn resolve(&self, rel: &Path) -> Option<PathBuf> {
        let mut comps: Vec<String> = Vec::new();
        push_components(&mut comps, rel);
        self.resolve_comps(&comps, 0)
    }

    fn resolve_comps(&self, comps: &[String], depth: u32) -> Option<PathBuf> {
        if depth > 40 {
            self.note(format!("symlink loop resolving /{}", comps.join("/")));
            return None;
        }
        // Prefix keys are built incrementally: hashing a str is cheap, hashing a Path walks it.
        let mut key = String::new();
        let mut base = PathBuf::new();
        for c in comps {
            key.push('/');
            key.push_str(c);
            let hit = self.resolved.lock().unwrap().get(&key).cloned();
            let out = match hit {
                Some(h) => h,
                None => {
                    let out = if c == ".." {
                        let mut b = base.clone();
                        b.pop();
                        Some(b)
                    } else {
                        let next = base.join(c);
                        self.record(&next);
                        match fs::symlink_metadata(self.abs(&next)) {
                            Err(_) => None,
                            Ok(m) if !m.file_type().is_symlink() => Some(next),
                            Ok(_) => match fs::read_link(self.abs(&next)) {
                                Err(_) => None,
                                Ok(target) => {
                                    // `base` holds no symlinks, so a relative target continues from it
                                    // and its `..` can be applied at once: the keys of shared prefixes
                                    // (`sys/devices/pci0000:37/…`) are then the same for every device.
                                    let mut t: Vec<String> = Vec::new();
                                    if !target.is_absolute() {
                                        push_components(&mut t, &base);
                                    }
                                    let mut rel: Vec<String> = Vec::new();
                                    push_components(&mut rel, &target);
                                    for c in rel {
                                        if c == ".." {
                                            t.pop();
                                        } else {
                                            t.push(c);
                                        }
                                    }
                                    self.resolve_comps(&t, depth + 1)
                                }
                            },
                        }
                    };
                    self.resolved.lock().unwrap().insert(key.clone(), out.clone());
                    out
                }
            };
            base = out?;
        }
        Some(base)
    }
}

/// Map `f` over `items`, on a few threads when there are enough items to pay for them (nodes
/// with hundreds of SR-IOV functions); order is kept.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(4);
    if items.len() < 48 || threads < 2 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = items.chunks(chunk).map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    })
}

fn push_components(out: &mut Vec<String>, p: &Path) {
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s.to_string_lossy().into_owned()),
            Component::ParentDir => out.push("..".into()),
            _ => {}
        }
    }
}

/// Shorten a value for a note so a garbage file cannot flood the output.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if s.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// Order `mlx5_2` before `mlx5_10` and `uverbs9` before `uverbs10`, as a human would.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut ai, mut bi) = (a.char_indices().peekable(), b.char_indices().peekable());
    loop {
        match (ai.peek().copied(), bi.peek().copied()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some((_, ca)), Some((_, cb))) if ca.is_ascii_digit() && cb.is_ascii_digit() => {
                let mut na = String::new();
                while let Some(&(_, c)) = ai.peek() {
                    if !c.is_ascii_digit() {
                        break;
                    }
                    na.push(c);
                    ai.next();
                }
                let mut nb = String::new();
                while let Some(&(_, c)) = bi.peek() {
                    if !c.is_ascii_digit() {
                        break;
                    }
                    nb.push(c);
                    bi.next();
                }
                let ta = na.trim_start_matches('0');
                let tb = nb.trim_start_matches('0');
                let ord = ta.len().cmp(&tb.len()).then(ta.cmp(tb)).then(na.len().cmp(&nb.len()));
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
            }
            (Some((_, ca)), Some((_, cb))) => {
                if ca != cb {
                    return ca.cmp(&cb);
                }
                ai.next();
                bi.next();
            }
        }
    }
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

    #[test]
    fn resolve_stays_inside_root() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir_all(r.join("sys/devices/pci0000:00/0000:00:01.0")).unwrap();
        fs::create_dir_all(r.join("sys/class/x")).unwrap();
        std::os::unix::fs::symlink("/sys/devices/pci0000:00/0000:00:01.0", r.join("sys/class/x/abs")).unwrap();
        std::os::unix::fs::symlink("../../../../../../../etc", r.join("sys/class/x/escape")).unwrap();
        let s = SysRoot::new(r);
        assert_eq!(
            s.resolve(Path::new("sys/class/x/abs")).unwrap(),
            PathBuf::from("sys/devices/pci0000:00/0000:00:01.0")
        );
        // climbing out of the root stops at the root; /etc does not exist in the tree
        assert_eq!(s.resolve(Path::new("sys/class/x/escape")), None);
    }

    #[test]
    fn garbage_and_fifo_become_notes() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("bin"), [0xff, 0xfe, 0x00]).unwrap();
        nix::unistd::mkfifo(&t.path().join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let s = SysRoot::new(t.path());
        assert_eq!(s.read(Path::new("bin")), None);
        assert_eq!(s.read(Path::new("fifo")), None);
        assert_eq!(s.read(Path::new("missing")), None);
        let notes = s.take_notes();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[1].contains("not a regular file"));
    }

    #[test]
    fn hex_and_num() {
        assert_eq!(parse_hex("0x3a4"), Some(0x3a4));
        assert_eq!(parse_hex("ffff"), Some(0xffff));
        assert_eq!(parse_hex("zz"), None);
        assert_eq!(parse_num("-1"), Some(-1));
        assert_eq!(parse_num("0x10"), Some(16));
    }
}
