//! `probe --capture DIR`: copy exactly what the probe reads into a tree `--root DIR` reads back.
//!
//! The probe runs once over a recording root; every file, directory and symlink it touched is
//! then reproduced: regular files at their resolved location, symlinks with their original
//! (relative) targets, so the captured tree resolves the same way the node did.

use super::sysroot::SysRoot;
use super::ProbeOptions;
use anyhow::{Context, Result};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files a replay needs where the live path asks the kernel instead (addresses: an rtnetlink
/// dump, probe/netlink.rs).
const LIVE_EXTRAS: &[&str] = &[
    "proc/net/fib_trie",
    "proc/net/route",
    "proc/net/if_inet6",
    "proc/net/ipv6_route",
    "proc/sys/kernel/hostname",
    "proc/net/vlan/config",
];

pub fn capture(opts: &ProbeOptions, dest: &Path) -> Result<usize> {
    // Everything any command reads, so that every command replays the capture as it ran live.
    let sys = SysRoot::recording(&opts.root).with_detail(super::Detail::All);
    let node = super::probe_with(&sys, &ProbeOptions { nvidia_smi: false, ..opts.clone() });
    for extra in LIVE_EXTRAS {
        sys.read(Path::new(extra));
    }
    prepare_dest(dest)?;
    // Reads made through symlinked directories (/proc/net → self/net) record only the final
    // path; resolving each one records the links on the way, which the tree needs too.
    for rel in sys.recorded() {
        sys.resolve(&rel);
    }
    let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut count = 0;
    let live = sys.is_live();
    for rel in sys.recorded() {
        // In a `--root` tree, where a path's parent leads is resolved inside the tree; one
        // that leaves it (a link such as proc/sys → /somewhere) is not copied (hostile round 4
        // #8). Live, the node's own links are the node.
        let real = match real_location(&sys, &rel) {
            Some(r) => r,
            None if live => rel.clone(),
            None => continue,
        };
        let src = if live { sys.abs(&rel) } else { sys.abs(&real) };
        let Ok(meta) = fs::symlink_metadata(&src) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            if let Ok(t) = fs::read_link(&src) {
                links.push((real, t));
            }
        } else if meta.is_dir() {
            let d = dest.join(&real);
            fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
        } else if meta.is_file() {
            count += usize::from(copy_file(&sys, live, &rel, &real, &src, dest)?);
        } else {
            // Device nodes (/dev/infiniband/uverbsN) become empty placeholder files: the
            // replay needs their presence, never their contents.
            let d = dest.join(&real);
            if let Some(p) = d.parent() {
                fs::create_dir_all(p).with_context(|| format!("cannot create {}", p.display()))?;
            }
            fs::write(&d, b"").with_context(|| format!("cannot write {}", d.display()))?;
            count += 1;
        }
    }
    count += make_links(dest, links)?;
    // The snapshot beside the tree lets a ticket reader compare what the node said live.
    let snap = dest.join("ibwire-snapshot.json");
    fs::write(&snap, serde_json::to_vec_pretty(&node)?).with_context(|| format!("cannot write {}", snap.display()))?;
    Ok(count)
}

/// The links recorded, made last (their targets are in the tree by then); one already there
/// is left.
fn make_links(dest: &Path, links: Vec<(PathBuf, PathBuf)>) -> Result<usize> {
    let mut count = 0;
    for (at, target) in links {
        let d = dest.join(&at);
        if let Some(p) = d.parent() {
            fs::create_dir_all(p).with_context(|| format!("cannot create {}", p.display()))?;
        }
        if fs::symlink_metadata(&d).is_err() {
            std::os::unix::fs::symlink(&target, &d).with_context(|| format!("cannot create link {}", d.display()))?;
            count += 1;
        }
    }
    Ok(count)
}

/// One regular file into the tree (live: read bounded; a tree: through the confined reader),
/// init's environment redacted. `false`: unreadable, not copied.
fn copy_file(sys: &SysRoot, live: bool, rel: &Path, real: &Path, src: &Path, dest: &Path) -> Result<bool> {
    let mut buf = Vec::new();
    if live {
        if fs::File::open(src).and_then(|f| f.take(4 << 20).read_to_end(&mut buf)).is_err() {
            return Ok(false); // unreadable on the node: the replay sees it missing, as the probe did
        }
    } else {
        // the confined reader: no link followed out of the tree, no FIFO blocking
        let Some(b) = sys.read_bytes(real) else { return Ok(false) };
        buf = b;
    }
    if rel == Path::new("proc/1/environ") {
        // Init's environment holds tokens and keys; the probe needs one fact from it.
        buf = redact_environ(&buf);
    }
    let d = dest.join(real);
    if let Some(p) = d.parent() {
        fs::create_dir_all(p).with_context(|| format!("cannot create {}", p.display()))?;
    }
    fs::write(&d, &buf).with_context(|| format!("cannot write {}", d.display()))?;
    Ok(true)
}

/// The capture writes only into a directory it owns alone: a new one (mode 0700), or an empty
/// one of this user's that nobody else can write. Anything already inside — a symlink planted
/// to redirect a write, say — is refused rather than followed.
fn prepare_dest(dest: &Path) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match fs::symlink_metadata(dest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs::DirBuilder::new().mode(0o700).create(dest).with_context(|| format!("cannot create {}", dest.display()))
        }
        Err(e) => Err(e).with_context(|| format!("cannot use {}", dest.display())),
        Ok(m) => {
            if !m.is_dir() {
                anyhow::bail!("{}: not a directory", dest.display());
            }
            if m.uid() != nix::unistd::geteuid().as_raw() || m.mode() & 0o022 != 0 {
                anyhow::bail!(
                    "{}: must be this user's and writable by nobody else (capture into a new directory)",
                    dest.display()
                );
            }
            if fs::read_dir(dest).with_context(|| format!("cannot list {}", dest.display()))?.next().is_some() {
                anyhow::bail!("{}: not empty; capture into a new or empty directory", dest.display());
            }
            Ok(())
        }
    }
}

/// Keep only `container=…` (what the probe reads it for) from a NUL-separated environment.
pub fn redact_environ(raw: &[u8]) -> Vec<u8> {
    raw.split(|b| *b == 0).filter(|e| e.starts_with(b"container=")).flat_map(|e| e.iter().copied().chain([0])).collect()
}

/// Where a recorded path really lives: its parent resolved, its own name kept (so a symlink is
/// recreated as a symlink rather than followed).
/// None when the parent does not resolve (inside the tree, for a `--root` tree).
fn real_location(sys: &SysRoot, rel: &Path) -> Option<PathBuf> {
    match (rel.parent(), rel.file_name()) {
        (Some(p), Some(n)) if !p.as_os_str().is_empty() => sys.resolve(p).map(|r| r.join(n)),
        _ => Some(rel.to_path_buf()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn environ_keeps_only_the_container_marker() {
        let e = super::redact_environ(b"HOME=/root\0AWS_SECRET_ACCESS_KEY=abc\0container=podman\0TOKEN=x\0");
        assert_eq!(e, b"container=podman\0");
    }
}
