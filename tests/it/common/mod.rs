//! Shared helpers for CLI tests: run the built binary, extract the real hwloc captures.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Say that a check was skipped, and why, where a plain `cargo test` shows it: written to the
/// process's stderr directly, which libtest's capture (of `eprintln!`) does not hold back.
pub fn skipped(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
}

/// Human output with its wrapping undone (piped, it is fitted to 100 columns): every run of
/// whitespace one space, so a phrase is found wherever a line broke it.
pub fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ibwire"))
}

pub fn ibwire(args: &[&str]) -> Output {
    Command::new(bin()).args(args).env_remove("IBWIRE_ROOT").env("NO_COLOR", "1").output().unwrap()
}

/// The real-machine fixtures, copied into the repository (tests/fixtures/real, with their
/// sources and licences) so that a clone tests without the project's shared folder.
pub fn real_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real")
}

/// Extract one of hwloc's tarballs into `dir`; returns the tree root.
pub fn hwloc_tree(tarball: &str, top: &str, dir: &Path) -> PathBuf {
    let src = real_fixtures().join("hwloc").join(tarball);
    let st = Command::new("tar").arg("-xjf").arg(&src).arg("-C").arg(dir).status().unwrap();
    assert!(st.success(), "tar failed on {}", src.display());
    dir.join(top)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory for generated node trees: in /dev/shm when it has room (a real-sized
/// tree is thousands of small files, ten times faster to create on tmpfs than on ext4), else
/// in the usual temporary directory.
pub fn tree_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    let roomy =
        nix::sys::statvfs::statvfs(shm).map(|s| s.blocks_available() * s.fragment_size() >= 1 << 30).unwrap_or(false);
    if roomy {
        if let Ok(t) = tempfile::Builder::new().prefix("ibwire-test").tempdir_in(shm) {
            return t;
        }
    }
    tempfile::tempdir().unwrap()
}
