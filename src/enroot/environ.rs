//! ENROOT_ENVIRON: reading what is already set (image, environ.d, `-e`, earlier hooks) the way
//! enroot's envfmt normalises it, so the user's values win over ours.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Look-ups answered by a scan of the whole file (a name outside `INDEXED`): the hook's debug
/// output reports it, and a test holds it at zero for the hook's own look-ups.
static SCANS: AtomicUsize = AtomicUsize::new(0);

pub fn scans() -> usize {
    SCANS.load(Ordering::Relaxed)
}

/// The names the hook asks about: only they are indexed. An image can hold 4 MiB of environment
/// (400 000 variables, any names it likes), read on every container start: indexing all of it
/// cost 160 ms, a match on a fixed set of names costs a scan. Any other name is still answered
/// correctly, by a scan of its own.
pub const INDEXED: &[&str] = &[
    "CUDA_DEVICE_ORDER",
    "CUDA_VISIBLE_DEVICES",
    "GLOO_SOCKET_IFNAME",
    "IBWIRE_ALLOW_SOCKET_FALLBACK",
    "IBWIRE_DEBUG",
    "IBWIRE_EXPECT_NET",
    "IBWIRE_HOOK_WARNINGS",
    "IBWIRE_STRICT",
    "IBWIRE_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
    "MASTER_ADDR",
    "MELLANOX_VISIBLE_DEVICES",
    "NCCL_IB_DISABLE",
    "NCCL_IB_HCA",
    "NCCL_NET",
    "NCCL_NET_PLUGIN",
    "NCCL_RAS_ADDR",
    "NCCL_SOCKET_FAMILY",
    "NCCL_SOCKET_IFNAME",
    "SLURM_JOBID",
    "SLURM_JOB_ID",
    "SLURM_JOB_NODELIST",
    "SLURM_JOB_NUM_NODES",
    "SLURM_NNODES",
    "SLURM_NODEID",
    "SLURM_NODELIST",
];

fn indexed(k: &str) -> bool {
    // Most names are rejected on their first byte.
    matches!(k.as_bytes().first(), Some(b'C' | b'G' | b'I' | b'L' | b'M' | b'N' | b'S')) && INDEXED.contains(&k)
}

/// The container's environment as enroot will load it, borrowed from the file's text (nothing
/// copied). The index is std's randomly keyed hash map: the image chooses the keys, and with a
/// hash it could predict it could make every insertion collide.
pub struct Environ<'a> {
    text: &'a str,
    map: HashMap<&'a str, &'a str>,
}

impl<'a> Environ<'a> {
    /// The value enroot will set for `k` (the last line wins).
    pub fn get(&self, k: &str) -> Option<&'a str> {
        if indexed(k) {
            return self.map.get(k).copied();
        }
        SCANS.fetch_add(1, Ordering::Relaxed);
        entries(self.text).filter(|(n, _)| *n == k).last().map(|(_, v)| v)
    }

    pub fn contains_key(&self, k: &str) -> bool {
        self.get(k).is_some()
    }

    /// The indexed variables that are set.
    pub fn indexed(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        self.map.iter().map(|(k, v)| (*k, *v))
    }

    pub fn len(&self) -> usize {
        entries(self.text).map(|(k, _)| k).collect::<std::collections::HashSet<_>>().len()
    }

    pub fn is_empty(&self) -> bool {
        entries(self.text).next().is_none()
    }
}

/// Every `NAME=value` line as enroot's envfmt reads it: one pair of surrounding quotes stripped,
/// comments, `export …`, malformed and ENROOT_* lines dropped.
fn entries(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.lines().filter_map(|raw| {
        let l = raw.trim_start();
        if l.is_empty() || l.starts_with('#') {
            return None;
        }
        let (k, v) = l.split_once('=')?;
        if !crate::shell::valid_name(k) || k.starts_with("ENROOT_") {
            return None;
        }
        let v = match (v.chars().next(), v.chars().last()) {
            (Some('"' | '\''), Some('"' | '\'')) if v.len() >= 2 => &v[1..v.len() - 1],
            _ => v,
        };
        Some((k, v))
    })
}

/// Keys and values as enroot will load them: later lines win.
pub fn parse(text: &str) -> Environ<'_> {
    let mut map = HashMap::new();
    for (k, v) in entries(text) {
        if indexed(k) {
            map.insert(k, v);
        }
    }
    Environ { text, map }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_enroot_normalises() {
        let m = parse("  A=1\n# c\nexport B=2\nC='single q'\nD=\"a'\nENROOT_X=y\nA=3\nbad line\n");
        assert_eq!(m.get("A"), Some("3"));
        assert_eq!(m.get("B"), None);
        assert_eq!(m.get("C"), Some("single q"));
        assert_eq!(m.get("D"), Some("a"));
        assert_eq!(m.get("ENROOT_X"), None);
    }

    #[test]
    fn indexed_and_scanned_names_answer_alike() {
        let m = parse("NCCL_IB_HCA=a\nFOO=1\nNCCL_IB_HCA=\"b\"\nFOO='2'\nSLURM_JOB_ID=7\nexport BAR=x\n");
        assert_eq!(m.get("NCCL_IB_HCA"), Some("b"));
        assert_eq!(m.get("FOO"), Some("2"));
        assert!(m.contains_key("FOO") && !m.contains_key("BAR") && !m.contains_key("NCCL_NET"));
        assert_eq!(m.indexed().filter(|(k, _)| k.starts_with("SLURM_")).collect::<Vec<_>>(), [("SLURM_JOB_ID", "7")]);
        assert_eq!(m.len(), 3);
    }
}
