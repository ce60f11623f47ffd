//! The one place that opens files under the node's filesystem root.
//!
//! Every reader goes through `SysRoot` so that `--root DIR` (a captured tree, an hwloc test
//! tarball, a fixture built by a test) and `/` behave the same, and so that `--capture` can
//! record exactly what was read. Reading is forgiving by design: a missing attribute is `None`,
//! an unreadable or garbled one is `None` plus a note; nothing here panics or blocks (FIFOs and
//! device nodes are refused, reads are bounded).

use super::model::PciFunction;
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How much of the node a probe reads. Every level reads what the decisions use; the levels
/// differ in what they read beyond it, which is where the files are on a real node (a ConnectX
/// InfiniBand port has a 128-entry P_Key table, a RoCE port a 255-entry GID table, and SR-IOV
/// multiplies both by the number of functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Detail {
    /// The enroot hook's path (and `env`'s, `launch`'s): only the files a decision reads. No descriptive
    /// attributes, no port attributes of SR-IOV functions whose physical function is an RDMA
    /// device (they are excluded before their ports matter), interface attributes only for
    /// interfaces with an address, the P_Key at NCCL's index only.
    Hook,
    /// `probe`, `env`, `doctor`, `launch`, `verify`: every single-valued attribute, the P_Key at
    /// NCCL's index, the port GID of InfiniBand ports and the populated RoCE GIDs.
    #[default]
    Standard,
    /// `probe --all`: Standard plus the whole P_Key table (every entry in use) and every GID.
    All,
}

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
    resolved: Mutex<FxHashMap<String, Option<String>>>,
    detail: Detail,
    /// Open attempts (files and directories), for the budget tests: stable where time is not.
    opens: AtomicUsize,
    /// See ProbeOptions::mad.
    mad: bool,
    /// `physfn` link name per PCI function directory: an HCA's function is also its netdevs'.
    physfn: Mutex<FxHashMap<String, Option<String>>>,
    /// A PCI function read with its attributes, per canonical directory: the rdma and net
    /// sections both reach an HCA's function (the device and its netdevs), often at the same
    /// time; the second waits for the first instead of opening the same 8 files again.
    functions: Mutex<FxHashMap<String, Arc<OnceLock<Option<PciFunction>>>>>,
    /// A tree's root directory, opened once for openat2(RESOLVE_IN_ROOT) (see `open_in_tree`).
    tree_fd: std::sync::OnceLock<Option<fs::File>>,
    /// Cleared when the kernel refuses openat2 (before Linux 5.6, or a seccomp filter).
    openat2_ok: std::sync::atomic::AtomicBool,
}

/// Open `path` with `flags` and O_CLOEXEC through openat(AT_FDCWD), not open: musl's open()
/// adds an fcntl(F_SETFD) after every O_CLOEXEC open (68 of the static build's 616 system calls
/// in one hook run on the story node); its openat(), like glibc's open(), hands the flag to the
/// kernel.
fn open_cloexec(path: &Path, flags: nix::fcntl::OFlag) -> std::io::Result<fs::File> {
    let fd = nix::fcntl::openat(None, path, flags | nix::fcntl::OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty())?;
    // SAFETY: openat just returned this descriptor; nothing else owns it.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

/// The names in a directory, `.` and `..` left out: getdents64 into a buffer on the stack.
/// std's read_dir goes through opendir(3), which allocates its buffer with the C library's
/// malloc: in the static build that is musl's, which maps and unmaps a page pair for each
/// directory (and its open adds an fcntl): 7 system calls per listing where 4 do.
fn list_names(dir: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
    use nix::fcntl::OFlag;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let fd = open_cloexec(dir, OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NONBLOCK)?;
    let mut buf = [0u8; 8192];
    let mut names = Vec::new();
    loop {
        // SAFETY: the kernel writes at most buf.len() bytes into buf.
        let n = unsafe { nix::libc::syscall(nix::libc::SYS_getdents64, fd.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(names);
        }
        // struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name NUL-ended.
        let got = &buf[..(n as usize).min(buf.len())];
        let mut at = 0;
        while at + 19 <= got.len() {
            let reclen = u16::from_ne_bytes([got[at + 16], got[at + 17]]) as usize;
            let Some(rec) = got.get(at..at + reclen).filter(|_| reclen > 19) else { break };
            let name = &rec[19..];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if name != b"." && name != b".." {
                names.push(std::ffi::OsStr::from_bytes(name).to_os_string());
            }
            at += reclen;
        }
    }
}

impl SysRoot {
    pub fn new(root: &Path) -> SysRoot {
        let live = root == Path::new("/");
        SysRoot {
            root: root.to_path_buf(),
            live,
            notes: Mutex::new(Vec::new()),
            recorder: None,
            resolved: Mutex::new(FxHashMap::default()),
            detail: Detail::Standard,
            opens: AtomicUsize::new(0),
            mad: true,
            physfn: Mutex::new(FxHashMap::default()),
            functions: Mutex::new(FxHashMap::default()),
            tree_fd: std::sync::OnceLock::new(),
            openat2_ok: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// A root that remembers every path it touched, for `probe --capture`.
    pub fn recording(root: &Path) -> SysRoot {
        let mut r = SysRoot::new(root);
        r.recorder = Some(Mutex::new(BTreeSet::new()));
        r
    }

    pub fn with_detail(mut self, d: Detail) -> SysRoot {
        self.detail = d;
        self
    }

    pub fn with_mad(mut self, mad: bool) -> SysRoot {
        self.mad = mad;
        self
    }

    /// The PF's name (`0000:1a:00.0`) when the PCI function at `dir` is an SR-IOV virtual
    /// function; one readlink per function. A VF is asked about by its RDMA device, its netdev
    /// and the netdev's PCI read: on a 512-function node the map saved 1 500 readlinks.
    pub fn physfn(&self, dir: &Path) -> Option<String> {
        let key = text(dir.as_os_str());
        if let Some(v) = self.physfn.lock().unwrap().get(key.as_ref()) {
            return v.clone();
        }
        let v =
            self.read_link(&dir.join("physfn")).and_then(|t| t.file_name().map(|f| f.to_string_lossy().into_owned()));
        self.physfn.lock().unwrap().insert(key.into_owned(), v.clone());
        v
    }

    /// The PCI function at the canonical directory `dir`, read by `read` once per probe (see
    /// `functions`). The map's lock is not held while reading.
    pub fn function(&self, dir: &str, read: impl FnOnce() -> Option<PciFunction>) -> Option<PciFunction> {
        let cell = self.functions.lock().unwrap().entry(dir.to_string()).or_default().clone();
        cell.get_or_init(read).clone()
    }

    /// Whether umad/issm nodes are matched to devices (ProbeOptions::mad).
    pub fn wants_mad(&self) -> bool {
        self.mad
    }

    /// Tree reads without openat2, as on kernels before 5.6 (tests of that path).
    pub fn without_openat2(self) -> SysRoot {
        self.openat2_ok.store(false, Ordering::Relaxed);
        self
    }

    pub fn detail(&self) -> Detail {
        self.detail
    }

    /// Descriptive attributes too (firmware, GUIDs, link speeds…), not only what decisions use.
    pub fn full(&self) -> bool {
        self.detail >= Detail::Standard
    }

    /// Files and directories this root tried to open so far.
    pub fn opens(&self) -> usize {
        self.opens.load(Ordering::Relaxed)
    }

    fn count_open(&self) {
        self.opens.fetch_add(1, Ordering::Relaxed);
    }

    pub fn is_live(&self) -> bool {
        self.live
    }

    /// Live and not capturing: sysfs is the kernel's own, so its layout rules hold (see
    /// `resolve`); a capture walks everything so that the tree it writes is complete.
    pub fn kernfs_trusted(&self) -> bool {
        self.live && self.recorder.is_none()
    }

    /// A link (under sys/ or not) whose target, joined lexically, is `target`: taken as written
    /// only for sysfs links read live (kernfs writes the relative path between two real
    /// directories, so the joined target is canonical); anything else is walked.
    fn trusts_link(&self, link_in_sys: bool, target: &str) -> bool {
        self.kernfs_trusted() && link_in_sys && target.starts_with("sys/")
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

    /// `abs(rel/name)` built in one string (`Path::join` twice cost more than the open).
    fn abs_of(&self, rel: &str, name: Option<&str>) -> PathBuf {
        let root = text(self.root.as_os_str());
        let mut s = String::with_capacity(root.len() + rel.len() + name.map_or(0, str::len) + 2);
        s.push_str(&root);
        for part in [Some(rel), name].into_iter().flatten().filter(|p| !p.is_empty()) {
            if !s.ends_with('/') {
                s.push('/');
            }
            s.push_str(part.trim_start_matches('/'));
        }
        PathBuf::from(s)
    }

    /// The host path to open for `rel`. Live, the kernel's own resolution is the truth. Under a
    /// `--root` tree (a capture from a support ticket is untrusted input) every symlink is
    /// resolved by `resolve`, which never leaves the tree: the OS is never asked to follow a
    /// link, so `sys/x -> /etc` reads the tree's `etc`, not the host's. `follow_last: false`
    /// keeps the last component itself (for lstat and readlink).
    fn host_path(&self, rel: &Path, follow_last: bool) -> Option<PathBuf> {
        if self.live {
            return Some(self.abs(rel));
        }
        let s = text(rel.as_os_str());
        let name = last_slash(&s).map(|i| (i, &s[i + 1..]));
        match name {
            // The parent resolved in the tree, the last component kept as it is.
            Some((i, n)) if !follow_last && i > 0 && !matches!(n, "" | "." | "..") => {
                self.resolve(Path::new(&s[..i])).map(|r| self.abs_of(&text(r.as_os_str()), Some(n)))
            }
            Some(_) => self.resolve(rel).map(|r| self.abs_of(&text(r.as_os_str()), None)),
            None if follow_last || matches!(s.as_ref(), "." | "..") => {
                self.resolve(rel).map(|r| self.abs_of(&text(r.as_os_str()), None))
            }
            None => Some(self.abs(rel)),
        }
    }

    /// `/`-relative display form of a root-relative path, for notes.
    pub fn show(&self, rel: &Path) -> String {
        format!("/{}", rel.display())
    }

    pub fn exists(&self, rel: &Path) -> bool {
        self.record(rel);
        self.host_path(rel, false).is_some_and(|p| fs::symlink_metadata(p).is_ok())
    }

    pub fn is_dir(&self, rel: &Path) -> bool {
        self.record(rel);
        self.host_path(rel, true).is_some_and(|p| fs::symlink_metadata(p).map(|m| m.is_dir()).unwrap_or(false))
    }

    /// Names in a directory, sorted. A missing directory is an empty list (no note): absence is
    /// information (no InfiniBand on this node), not an error.
    pub fn list(&self, rel: &Path) -> Vec<String> {
        let mut names = self.list_unordered(rel);
        // Unstable is exact here: natural_cmp is Equal only for equal names.
        names.sort_unstable_by(|a, b| crate::text::natural_cmp(a, b));
        names
    }

    /// `list` in the directory's own order, for callers that look names up or sort what they
    /// keep: on an SR-IOV node /dev/infiniband and the uverbs/umad classes hold thousands.
    pub fn list_unordered(&self, rel: &Path) -> Vec<String> {
        self.record(rel);
        self.count_open();
        let cannot = |e: std::io::Error| {
            if e.kind() != std::io::ErrorKind::NotFound {
                self.note(format!("cannot list {}: {}", self.show(rel), e));
            }
            Vec::new()
        };
        // Not through openat2: fdopendir's own checks cost more system calls than the walk
        // of the directory's parent saves (measured on the 512-function tree).
        let Some(host) = self.host_path(rel, true) else { return Vec::new() };
        let raw = match list_names(&host) {
            Ok(names) => names,
            Err(e) => return cannot(e),
        };
        let mut names = Vec::new();
        for name in raw {
            match name.into_string() {
                Ok(n) => {
                    // A listed name is a fact (lower_* links, /dev/infiniband entries) even
                    // when nothing under it is read, so a capture must keep it.
                    if self.recorder.is_some() {
                        self.record(&rel.join(&n));
                    }
                    names.push(n)
                }
                Err(raw) => self.note(format!("skipped non-UTF-8 name {:?} in {}", raw, self.show(rel))),
            }
        }
        names
    }

    /// Open `rel` for reading inside a tree with the kernel doing the confinement:
    /// openat2(RESOLVE_IN_ROOT) resolves every symlink and `..` as if the tree were `/`, which is
    /// what `resolve` does in user space, without a readlink per new directory or a cache
    /// look-up per file. None where it does not apply (live, a capture, which must record the
    /// links on the way) or where the kernel refuses it (Linux < 5.6, seccomp): then the
    /// caller takes the user-space way.
    fn open_in_tree(&self, rel: &Path) -> Option<std::io::Result<fs::File>> {
        use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
        use std::os::fd::{AsRawFd, FromRawFd};
        if self.live || self.recorder.is_some() || !self.openat2_ok.load(Ordering::Relaxed) {
            return None;
        }
        let root = self.tree_fd.get_or_init(|| fs::File::open(&self.root).ok()).as_ref()?;
        let how = OpenHow::new()
            .flags(OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        match nix::fcntl::openat2(root.as_raw_fd(), rel, how) {
            // SAFETY: openat2 just returned this descriptor; nothing else owns it.
            Ok(fd) => Some(Ok(unsafe { fs::File::from_raw_fd(fd) })),
            Err(nix::errno::Errno::ENOSYS | nix::errno::Errno::EPERM | nix::errno::Errno::E2BIG) => {
                self.openat2_ok.store(false, Ordering::Relaxed);
                None
            }
            // A rename raced the walk (the kernel's own check): the user-space way decides.
            Err(nix::errno::Errno::EAGAIN) => None,
            Err(e) => Some(Err(e.into())),
        }
    }

    /// Read a small text file, trimmed. Missing → None silently; anything else that goes wrong
    /// → None and a note naming the file.
    pub fn read(&self, rel: &Path) -> Option<String> {
        let buf = self.read_bytes(rel)?;
        match String::from_utf8(buf) {
            Ok(s) => Some(s.trim_end_matches(['\n', '\r', ' ', '\t', '\0']).to_string()),
            Err(_) => {
                self.note(format!("{} is not UTF-8 text; ignored", self.show(rel)));
                None
            }
        }
    }

    /// A file's bytes (a PCI function's `config`), bounded as `read` is; None when absent or
    /// unreadable (with a note for faults other than absence).
    pub fn read_bytes(&self, rel: &Path) -> Option<Vec<u8>> {
        self.record(rel);
        self.count_open();
        // O_NONBLOCK: a FIFO or terminal planted in a tree answers at once instead of blocking.
        // O_NOFOLLOW: in a tree the OS never follows a link. The parent is resolved inside the
        // tree (cached: devices share it) and the file opened without following; only when the
        // file itself is a link (ELOOP) is it resolved too — one lstat saved per attribute.
        use nix::fcntl::OFlag;
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | if self.live { OFlag::empty() } else { OFlag::O_NOFOLLOW };
        let open = |p: &Path| open_cloexec(p, flags);
        let opened = match self.open_in_tree(rel) {
            Some(r) => r,
            None => match open(&self.host_path(rel, false)?) {
                Err(e) if !self.live && e.raw_os_error() == Some(nix::libc::ELOOP) => {
                    self.count_open();
                    open(&self.host_path(rel, true)?)
                }
                other => other,
            },
        };
        let mut f = match opened {
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
        let one_shot = text(rel.as_os_str()).starts_with("sys/");
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
        Some(buf)
    }

    /// Read and parse an attribute; garbage becomes None plus a note saying what was expected.
    pub fn parse<T>(&self, rel: &Path, what: &str, f: impl FnOnce(&str) -> Option<T>) -> Option<T> {
        let raw = self.read(rel)?;
        match f(&raw) {
            Some(v) => Some(v),
            None => {
                self.note(format!("{}: expected {}, found {:?}", self.show(rel), what, crate::text::clip(&raw)));
                None
            }
        }
    }

    /// The target of one symlink, as written.
    pub fn read_link(&self, rel: &Path) -> Option<PathBuf> {
        self.record(rel);
        fs::read_link(self.host_path(rel, false)?).ok()
    }

    /// Resolve symlinks inside the root: absolute link targets are taken relative to the root,
    /// `..` never climbs above it. Returns the root-relative canonical path, or None if a
    /// component is missing (dangling links are common in captured trees).
    ///
    /// One `readlink` per component not seen before (EINVAL: a plain entry; ENOENT: missing),
    /// cached by prefix: devices share long sysfs prefixes. Live, a link from `sys/` into `sys/`
    /// costs nothing more: kernfs writes every link as the relative path between two real
    /// directories (kernfs_get_target_path), so the target joined to the link's (canonical)
    /// directory is canonical. Under a `--root` tree nothing is taken on trust: every component
    /// of a target is walked again.
    pub fn resolve(&self, rel: &Path) -> Option<PathBuf> {
        let s = text(rel.as_os_str());
        // Fast path, the parent of nearly every attribute read: the path as it is, already
        // cached (a key is the exact component sequence it was built from, so a hit is right;
        // a path written unusually, `a/./b`, just takes the long way).
        let mut key = String::with_capacity(s.len() + 1);
        key.push('/');
        key.push_str(&s);
        if let Some(hit) = self.resolved.lock().unwrap().get(key.as_str()) {
            return hit.clone().map(PathBuf::from);
        }
        let comps: Vec<&str> = components(&s).collect();
        self.resolve_comps(&comps, 0).map(PathBuf::from)
    }

    /// `resolve(dir/name)` for a `dir` that `resolve` returned (canonical): one `readlink`, no
    /// cache. Live, a kernfs link's target is taken as written (see `resolve`); in a tree the
    /// target is walked. On an SR-IOV node this is the per-function path (class links,
    /// `device`), where the cache's bookkeeping cost more than the system calls.
    pub fn resolve_in(&self, dir: &Path, name: &str) -> Option<PathBuf> {
        self.entry_target(dir, name, 0)
    }

    /// The directory `up` levels above the place the link `dir/name` points to (`dir` canonical,
    /// as for `resolve_in`); `dir/name` itself when it is no link. The target's last components
    /// are not walked and need not exist: for questions of place (which PCI function a uverbs
    /// entry hangs under) that is one `readlink`; what is opened later still goes through
    /// `resolve`.
    pub fn link_dir(&self, dir: &Path, name: &str, up: usize) -> Option<PathBuf> {
        self.entry_target(dir, name, up)
    }

    /// `dir/name` as a root-relative string with room for a link target. A capture walks it
    /// the general way too, which records every directory on the way.
    fn entry_path(&self, dir: &Path, name: &str) -> String {
        let d = text(dir.as_os_str());
        let mut at = String::with_capacity(d.len() + name.len() + 160);
        at.push_str(&d);
        if !at.is_empty() {
            at.push('/');
        }
        at.push_str(name);
        if self.recorder.is_some() {
            self.resolve(Path::new(&at));
        }
        at
    }

    fn entry_target(&self, dir: &Path, name: &str, up: usize) -> Option<PathBuf> {
        let mut at = self.entry_path(dir, name);
        self.record(Path::new(&at));
        match fs::read_link(self.abs(Path::new(&at))) {
            Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => {
                // A plain entry of a canonical directory: canonical.
                for _ in 0..up {
                    pop_component(&mut at);
                }
                Some(PathBuf::from(at))
            }
            Err(_) => None,
            Ok(target) => self.follow_target(at, &target, up),
        }
    }

    /// Where the link `dir/name` (`dir` canonical) whose target `read_link` returned points:
    /// for callers that looked at the target first (one readlink, not two).
    pub fn follow(&self, dir: &Path, name: &str, target: &Path) -> Option<PathBuf> {
        self.follow_target(self.entry_path(dir, name), target, 0)
    }

    fn follow_target(&self, mut at: String, target: &Path, up: usize) -> Option<PathBuf> {
        let link_in_sys = at.starts_with("sys/");
        pop_component(&mut at);
        follow_lexically(&mut at, &text(target.as_os_str()));
        let trusted = self.trusts_link(link_in_sys, &at);
        for _ in 0..up {
            pop_component(&mut at);
        }
        if trusted {
            Some(PathBuf::from(at))
        } else {
            self.resolve(Path::new(&at))
        }
    }

    /// `comps` are relative to the root; the result is `a/b/c` ("" for the root itself).
    fn resolve_comps(&self, comps: &[&str], depth: u32) -> Option<String> {
        if depth > 40 {
            self.note(format!("symlink loop resolving /{}", comps.join("/")));
            return None;
        }
        // Keys are `/a/b/c` prefixes of one string; every walk caches each prefix it passes, so
        // the cached prefixes of a path are contiguous from the root: binary search finds the
        // longest (usually the parent).
        let mut key = String::with_capacity(comps.iter().map(|c| c.len() + 1).sum());
        let mut ends = Vec::with_capacity(comps.len());
        for c in comps {
            key.push('/');
            key.push_str(c);
            ends.push(key.len());
        }
        let (mut start, mut base) = (0, String::new());
        {
            let cache = self.resolved.lock().unwrap();
            if let Some(hit) = cache.get(key.as_str()) {
                return hit.clone();
            }
            let (mut lo, mut hi) = (0, ends.len()); // prefixes [0, lo) cached, [hi, ..) not
            while lo < hi {
                let mid = (lo + hi) / 2;
                if cache.contains_key(&key[..ends[mid]]) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if lo > 0 {
                (start, base) = (lo, cache.get(&key[..ends[lo - 1]]).cloned().flatten()?);
            }
        }
        for (k, c) in comps.iter().enumerate().skip(start) {
            let out = self.step(&base, c, depth);
            self.resolved.lock().unwrap().insert(key[..ends[k]].to_string(), out.clone());
            base = out?;
        }
        Some(base)
    }

    /// One component `c` after `base` (a path without symlinks): `..`, a real entry, or a link
    /// followed (lexically where the tree is trusted, else resolved again).
    fn step(&self, base: &str, c: &str, depth: u32) -> Option<String> {
        if c == ".." {
            let mut b = base.to_string();
            pop_component(&mut b);
            Some(b)
        } else {
            let mut next = String::with_capacity(base.len() + 1 + c.len());
            next.push_str(base);
            if !next.is_empty() {
                next.push('/');
            }
            next.push_str(c);
            self.record(Path::new(&next));
            match fs::read_link(self.abs(Path::new(&next))) {
                Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => Some(next),
                Err(_) => None,
                Ok(target) => {
                    // `base` holds no symlinks, so a relative target continues from it and
                    // its `..` can be applied at once.
                    let mut t = base.to_string();
                    follow_lexically(&mut t, &text(target.as_os_str()));
                    // A capture walks every target: the tree it writes needs each directory.
                    if self.trusts_link(next.starts_with("sys/"), &t) {
                        self.cache_real_dirs(&t);
                        Some(t)
                    } else {
                        let tc: Vec<&str> = components(&t).collect();
                        self.resolve_comps(&tc, depth + 1)
                    }
                }
            }
        }
    }

    /// Each directory on the way to a trusted link's target is a real one: cached as itself, so
    /// paths below it (`…/mlx5_0/device`) start from it; longest first, up to the first one
    /// cached (the cached prefixes of a path are contiguous from the root).
    fn cache_real_dirs(&self, t: &str) {
        let mut cache = self.resolved.lock().unwrap();
        let k = format!("/{t}");
        let mut end = k.len();
        while end > 1 && !cache.contains_key(&k[..end]) {
            cache.insert(k[..end].to_string(), Some(k[1..end].to_string()));
            end = last_slash(&k[..end]).unwrap_or(0);
        }
    }
}

/// A path as text: borrowed when it is UTF-8 (sysfs names are ASCII; `to_str` checks that much
/// faster than the lossy conversion, which a 512-function probe did 12 000 times).
fn text(s: &std::ffi::OsStr) -> std::borrow::Cow<'_, str> {
    match s.to_str() {
        Some(t) => std::borrow::Cow::Borrowed(t),
        None => s.to_string_lossy(),
    }
}

/// The components of a `/`-separated path, without empty ones and `.`. Byte search: `split('/')`
/// (a char searcher) was a tenth of the hook's instructions on SR-IOV nodes.
pub fn components(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || loop {
        if rest.is_empty() {
            return None;
        }
        let end = rest.as_bytes().iter().position(|&b| b == b'/').unwrap_or(rest.len());
        let c = &rest[..end];
        rest = &rest[(end + 1).min(rest.len())..];
        if !c.is_empty() && c != "." {
            return Some(c);
        }
    })
}

fn last_slash(s: &str) -> Option<usize> {
    s.as_bytes().iter().rposition(|&b| b == b'/')
}

/// Apply a link's target to the directory `at` (root-relative `a/b`) holding the link, without
/// looking at the filesystem: an absolute target starts from the root, `..` never climbs above it.
fn follow_lexically(at: &mut String, target: &str) {
    if target.starts_with('/') {
        at.clear();
    }
    at.reserve(target.len() + 1);
    // Kernfs writes `../../devices/pci…/name`: leading `..` then plain names. Pop those, then
    // append the rest in one piece unless it holds `.`, `..` or empty components.
    let mut rest = target.trim_start_matches('/');
    while let Some(r) = rest.strip_prefix("../") {
        pop_component(at);
        rest = r.trim_start_matches('/');
    }
    let b = rest.as_bytes();
    let plain = !b.is_empty()
        && b[0] != b'.'
        && b[b.len() - 1] != b'/'
        && !b.windows(2).any(|w| w[0] == b'/' && (w[1] == b'/' || w[1] == b'.'));
    if plain {
        if !at.is_empty() {
            at.push('/');
        }
        at.push_str(rest);
        return;
    }
    for c in components(rest) {
        match c {
            ".." => pop_component(at),
            c => {
                if !at.is_empty() {
                    at.push('/');
                }
                at.push_str(c);
            }
        }
    }
}

/// Drop the last component of a `a/b/c` path (the root stays the root).
fn pop_component(p: &mut String) {
    match last_slash(p) {
        Some(i) => p.truncate(i),
        None => p.clear(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// getdents64 by hand against std's read_dir: more names than one 8 KiB buffer holds, names
    /// of every length up to 255, non-UTF-8 bytes, a line break, a file and a missing path.
    #[test]
    fn list_names_is_read_dir() {
        use std::os::unix::ffi::OsStrExt;
        let t = tempfile::tempdir().unwrap();
        let mut want = Vec::new();
        for i in 0..700 {
            let len = 1 + i * 7 % 255;
            let mut n = format!("{i}-").into_bytes();
            n.resize(len.max(n.len()), b'x');
            want.push(std::ffi::OsStr::from_bytes(&n).to_os_string());
        }
        want.push(std::ffi::OsStr::from_bytes(b"\xff\xfe odd\nname").to_os_string());
        for n in &want {
            fs::write(t.path().join(n), "").unwrap();
        }
        fs::create_dir(t.path().join("sub")).unwrap();
        want.push("sub".into());
        let mut got = list_names(t.path()).unwrap();
        let mut std: Vec<_> = fs::read_dir(t.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        got.sort();
        std.sort();
        want.sort();
        assert_eq!(got, std);
        assert_eq!(got, want);
        assert!(list_names(&t.path().join("sub")).unwrap().is_empty());
        assert_eq!(list_names(&t.path().join("nope")).unwrap_err().kind(), std::io::ErrorKind::NotFound);
        assert_eq!(list_names(&t.path().join(&want[0])).unwrap_err().raw_os_error(), Some(nix::libc::ENOTDIR));
    }

    #[test]
    fn path_components() {
        fn c(s: &str) -> Vec<&str> {
            components(s).collect()
        }
        assert_eq!(c("sys/class//net/./eth0/"), ["sys", "class", "net", "eth0"]);
        assert_eq!(c("/../a"), ["..", "a"]);
        assert!(c("").is_empty() && c("/").is_empty() && c("./.").is_empty());
        let mut at = "sys/class/net".to_string();
        follow_lexically(&mut at, "../../devices/virtual/net/lo");
        assert_eq!(at, "sys/devices/virtual/net/lo");
        follow_lexically(&mut at, "/../../etc");
        assert_eq!(at, "etc", "an absolute target starts at the root and never climbs above it");
    }

    /// Live, a link from sys/ into sys/ is taken as kernfs writes it (no walk of the target):
    /// on whatever machine runs the tests, that must agree with the kernel's own resolution.
    #[test]
    fn live_sysfs_links_resolve_as_the_kernel_does() {
        let s = SysRoot::new(Path::new("/"));
        let mut checked = 0;
        for class in ["sys/class/net", "sys/bus/pci/devices", "sys/class/infiniband", "sys/block"] {
            let Ok(rd) = fs::read_dir(Path::new("/").join(class)) else { continue };
            for e in rd.flatten().take(64) {
                let rel = Path::new(class).join(e.file_name());
                for p in [rel.clone(), rel.join("device"), rel.join("subsystem")] {
                    let Ok(real) = fs::canonicalize(Path::new("/").join(&p)) else { continue };
                    let ours = s.resolve(&p).map(|r| Path::new("/").join(r));
                    assert_eq!(ours.as_deref(), Some(real.as_path()), "{}", p.display());
                    checked += 1;
                }
            }
        }
        // The driver-core rule rdma::read relies on: a class device with a parent sits at
        // `<parent>/<class>/<name>` and its `device` link points at `<parent>`.
        let mut glued = 0;
        for class in ["net", "infiniband", "nvme", "drm", "block"] {
            let Ok(rd) = fs::read_dir(Path::new("/sys/class").join(class)) else { continue };
            for e in rd.flatten().take(64) {
                let Ok(dir) = fs::canonicalize(e.path()) else { continue };
                let Ok(dev) = fs::canonicalize(dir.join("device")) else { continue };
                if dir.parent().and_then(Path::file_name).is_some_and(|n| n == class) {
                    assert_eq!(Some(dev.as_path()), dir.parent().and_then(Path::parent), "{}", dir.display());
                    glued += 1;
                }
            }
        }
        eprintln!("live sysfs links checked against the kernel: {checked}; class devices under their parent: {glued}");
        assert!(checked > 0 || !Path::new("/sys/class/net").exists());
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
        // Reads through links, `..` included, stay in the tree (the tree's etc, not the host's).
        fs::create_dir_all(r.join("etc")).unwrap();
        fs::write(r.join("etc/hostname"), "tree\n").unwrap();
        std::os::unix::fs::symlink("/etc", r.join("sys/class/x/etc")).unwrap();
        // Both ways of opening inside a tree: openat2(RESOLVE_IN_ROOT) and the user-space walk.
        for s in [SysRoot::new(r), SysRoot::new(r).without_openat2()] {
            for p in ["sys/class/x/etc/hostname", "sys/class/x/escape/hostname", "sys/class/x/etc/../etc/hostname"] {
                assert_eq!(s.read(Path::new(p)).as_deref(), Some("tree"), "{p}");
            }
            assert_eq!(s.read(Path::new("sys/class/x/etc/../../../../etc/passwd")), None);
        }
        let s = SysRoot::new(r);
        assert!(
            s.list(Path::new("sys/class/x/etc/..")).contains(&"sys".to_string()),
            "`..` of the tree's etc is the tree"
        );
        assert!(!s.exists(Path::new("sys/class/x/etc/../../../../etc/passwd")));
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
}
