//! fstab lines for enroot-mount: `SPEC TARGET TYPE OPTIONS 0 0`, fields octal-escaped as
//! getmntent(3) reads them (as pyxis writes them), passno 0 so enroot applies them after hooks.

use anyhow::{bail, Result};

/// Escape space, tab, newline and backslash as `\040`, `\011`, `\012`, `\134`.
pub fn escape(field: &str) -> String {
    let mut s = String::with_capacity(field.len());
    for c in field.chars() {
        match c {
            ' ' => s.push_str("\\040"),
            '\t' => s.push_str("\\011"),
            '\n' => s.push_str("\\012"),
            '\\' => s.push_str("\\134"),
            _ => s.push(c),
        }
    }
    s
}

pub fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            let v = (b[i + 1] - b'0') as u32 * 64 + (b[i + 2] - b'0') as u32 * 8 + (b[i + 3] - b'0') as u32;
            if v < 256 {
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A bind of a host device node onto the same path in the container. Never `nodev` (the node
/// must stay openable) and never mknod: enroot runs hooks in a user namespace where mknod fails.
pub fn device_bind(path: &str) -> Result<String> {
    if !path.starts_with("/dev/infiniband/") || path.contains("/../") || path.ends_with("/..") {
        bail!("refusing to bind {path:?}: only /dev/infiniband nodes are exposed");
    }
    let p = escape(path);
    Ok(format!("{p} {p} none x-create=file,bind,nosuid,noexec 0 0"))
}

/// A read-only bind of a directory prepared by the hook over a path in the container.
pub fn dir_bind(src: &str, target: &str) -> String {
    format!("{} {} none bind,ro,nosuid,noexec,nodev 0 0", escape(src), escape(target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        for s in ["/a b", "/tab\there", "/nl\nx", "/back\\slash", "/plain"] {
            assert_eq!(unescape(&escape(s)), s);
            assert!(!escape(s).contains([' ', '\t', '\n']));
        }
    }

    #[test]
    fn only_infiniband_nodes() {
        assert_eq!(
            device_bind("/dev/infiniband/uverbs3").unwrap(),
            "/dev/infiniband/uverbs3 /dev/infiniband/uverbs3 none x-create=file,bind,nosuid,noexec 0 0"
        );
        assert!(device_bind("/dev/infiniband/../../etc/shadow").is_err());
        assert!(device_bind("/etc/passwd").is_err());
    }
}
