//! PCI functions and the bridge chain above them, from the realpath of a sysfs device link.

use super::model::{PciFunction, PciLink};
use super::sysroot::SysRoot;
use crate::text::{parse_hex, parse_num};
use std::path::Path;

/// `dddd:bb:dd.f` with a 4- or 5-hex-digit domain (VMD and Hyper-V use 32-bit domains).
pub fn is_bdf(s: &str) -> bool {
    let b = s.as_bytes();
    let n = b.len();
    if !(12..=13).contains(&n) {
        return false;
    }
    let dom = n - 8;
    b[..dom].iter().all(u8::is_ascii_hexdigit)
        && b[dom] == b':'
        && b[dom + 1..dom + 3].iter().all(u8::is_ascii_hexdigit)
        && b[dom + 3] == b':'
        && b[dom + 4..dom + 6].iter().all(u8::is_ascii_hexdigit)
        && b[dom + 6] == b'.'
        && (b'0'..=b'7').contains(&b[dom + 7])
}

/// Read a PCI function given the root-relative resolved path of its sysfs directory
/// (`sys/devices/pci0000:00/0000:00:01.0/0000:1a:00.0`). Returns None when the path is not a
/// PCI device (a virtual device, a bond). `physfn`: the `physfn` link's target name at `dir`
/// when the caller has read it already (used only when `dir` is the function itself).
pub fn read_function(sys: &SysRoot, dir: &Path, physfn: Option<Option<String>>) -> Option<PciFunction> {
    read_function_with(sys, dir, physfn, sys.full())
}

/// `read_function`, with the attribute files (ids, class, NUMA node, link speeds) read only when
/// `attrs`: the path, the BDF and `physfn` come from the directory's name and links.
pub fn read_function_with(
    sys: &SysRoot,
    dir: &Path,
    physfn: Option<Option<String>>,
    attrs: bool,
) -> Option<PciFunction> {
    let whole = dir.to_string_lossy();
    let comps: Vec<&str> = super::sysroot::components(&whole).collect();
    let start = comps.iter().position(|c| c.starts_with("pci") && c.contains(':'))?;
    let root = comps[start].to_string();
    // Devices such as virtio0 hang below their PCI function: the function is the last BDF of
    // the unbroken chain under the root complex.
    let chain: Vec<&str> = comps[start + 1..].iter().take_while(|c| is_bdf(c)).copied().collect();
    let bdf = chain.last()?.to_string();
    let physfn = physfn.filter(|_| start + 1 + chain.len() == comps.len());
    let dir = std::path::PathBuf::from(comps[..start + 1 + chain.len()].join("/"));
    let dir = dir.as_path();
    let bridges = chain[..chain.len() - 1].iter().map(|c| c.to_string()).collect();
    if !attrs {
        // Decisions need the path only: ids, link speeds and the NUMA node are descriptive (NUMA
        // too: plan::hca asks "PIX/PXB or not", which the bridges answer; NODE against SYS is for
        // topo and probe).
        let physfn = physfn.unwrap_or_else(|| sys.physfn(dir));
        return Some(PciFunction { bdf, root, bridges, physfn, ..Default::default() });
    }
    sys.function(&dir.to_string_lossy(), || {
        let (vendor, device, class) = ids(sys, dir);
        Some(PciFunction {
            bdf,
            root,
            bridges,
            numa_node: sys
                .parse(&dir.join("numa_node"), "a NUMA node number", |s| parse_num(s).map(|v| v as i32))
                .filter(|n| *n >= 0),
            vendor,
            device,
            class,
            link: PciLink {
                current_speed: sys.read(&dir.join("current_link_speed")),
                current_width: sys.parse(&dir.join("current_link_width"), "a link width", |s| s.parse().ok()),
                max_speed: sys.read(&dir.join("max_link_speed")),
                max_width: sys.parse(&dir.join("max_link_width"), "a link width", |s| s.parse().ok()),
            },
            physfn: physfn.unwrap_or_else(|| sys.physfn(dir)),
        })
    })
}

/// Vendor, device and class of the function at `dir`, from its `uevent` (`PCI_ID=15B3:1021`,
/// `PCI_CLASS=20700`, as drivers/pci/pci-driver.c:pci_uevent writes them): one file instead of
/// three. A value the uevent lacks or garbles is read from its own attribute file (trees
/// captured without uevent files), where a bad value becomes a note.
fn ids(sys: &SysRoot, dir: &Path) -> (Option<u32>, Option<u32>, Option<u32>) {
    let (mut vendor, mut device, mut class) = (None, None, None);
    if let Some(ev) = sys.read(&dir.join("uevent")) {
        for l in ev.lines() {
            if let Some((v, d)) = l.strip_prefix("PCI_ID=").and_then(|id| id.split_once(':')) {
                vendor = parse_hex(v).filter(|x| *x <= 0xffff);
                device = parse_hex(d).filter(|x| *x <= 0xffff);
            } else if let Some(c) = l.strip_prefix("PCI_CLASS=") {
                class = parse_hex(c).filter(|x| *x <= 0xff_ffff);
            }
        }
    }
    (
        vendor.or_else(|| sys.parse(&dir.join("vendor"), "a hex vendor id", parse_hex)),
        device.or_else(|| sys.parse(&dir.join("device"), "a hex device id", parse_hex)),
        class.or_else(|| sys.parse(&dir.join("class"), "a hex class code", parse_hex)),
    )
}

/// The directory a class device's `device` link points to, for `dir` = a class device's
/// canonical directory. Live, the driver core puts a class device with a parent at
/// `<parent>/<class>/<name>` and points its `device` link at `<parent>`: for a PCI parent that is
/// known without a readlink (the unit test `live_sysfs_links_resolve_as_the_kernel_does` checks
/// the rule on the machine's own sysfs). Elsewhere, and in trees, the link is read.
pub fn device_dir(sys: &SysRoot, dir: &Path, class: &str) -> Option<std::path::PathBuf> {
    let glue = dir.parent().filter(|p| p.file_name().is_some_and(|n| n == class)).and_then(Path::parent);
    match glue {
        Some(p) if sys.kernfs_trusted() && p.file_name().and_then(|n| n.to_str()).is_some_and(is_bdf) => {
            Some(p.to_path_buf())
        }
        _ => sys.resolve_in(dir, "device"),
    }
}

/// What a function's configuration space says about ACS: the control register, no capability,
/// or not readable (shorter than the extended space: an unprivileged reader gets 64 bytes).
/// The extended capability list starts at 0x100; each header holds the id (low 16 bits) and the
/// next offset (bits 20-31); the walk is bounded and stops on a loop or an offset out of range.
pub fn acs_control(config: &[u8]) -> (crate::probe::model::Acs, Option<u16>) {
    use crate::probe::model::Acs;
    let u32_at = |o: usize| config.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if config.len() < 0x104 {
        return (Acs::Unreadable, None);
    }
    let mut off = 0x100usize;
    for _ in 0..64 {
        let Some(h) = u32_at(off) else { return (Acs::Absent, None) };
        if h == 0 || h == u32::MAX {
            return (Acs::Absent, None);
        }
        if h & 0xffff == 0x000d {
            return match config.get(off + 6..off + 8) {
                Some(b) => (Acs::Read, Some(u16::from_le_bytes([b[0], b[1]]))),
                None => (Acs::Unreadable, None),
            };
        }
        let next = ((h >> 20) & 0xffc) as usize;
        if next < 0x100 || next <= off {
            return (Acs::Absent, None);
        }
        off = next;
    }
    (Acs::Absent, None)
}

/// The bridges named (BDFs), each with its ACS state from `sys/bus/pci/devices/<bdf>/config`.
pub fn bridges(sys: &SysRoot, bdfs: &[String]) -> Vec<crate::probe::model::Bridge> {
    bdfs.iter()
        .filter(|b| is_bdf(b))
        .map(|b| {
            let config = sys.read_bytes(&Path::new("sys/bus/pci/devices").join(b).join("config")).unwrap_or_default();
            let (acs, acs_ctrl) = acs_control(&config);
            crate::probe::model::Bridge { bdf: b.clone(), acs, acs_ctrl }
        })
        .collect()
}

/// Resolve a `device` link (or any path) to a PCI function.
pub fn function_at(sys: &SysRoot, link: &Path) -> Option<PciFunction> {
    let dir = sys.resolve(link)?;
    read_function(sys, &dir, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acs_capability_walk() {
        use crate::probe::model::Acs;
        assert_eq!(acs_control(&[0u8; 64]), (Acs::Unreadable, None));
        let mut c = vec![0u8; 4096];
        assert_eq!(acs_control(&c), (Acs::Absent, None));
        // AER (0x0001) at 0x100 → ACS (0x000d) at 0x148, control 0x001d (SV, RR, CR, UF).
        c[0x100..0x104].copy_from_slice(&(0x0001u32 | (1 << 16) | (0x148 << 20)).to_le_bytes());
        c[0x148..0x14c].copy_from_slice(&(0x000du32 | (1 << 16)).to_le_bytes());
        c[0x14e..0x150].copy_from_slice(&0x001du16.to_le_bytes());
        assert_eq!(acs_control(&c), (Acs::Read, Some(0x001d)));
        // A loop (next pointing back) ends.
        c[0x148..0x14c].copy_from_slice(&(0x0002u32 | (0x100 << 20)).to_le_bytes());
        assert_eq!(acs_control(&c), (Acs::Absent, None));
    }

    #[test]
    fn bdf_forms() {
        assert!(is_bdf("0000:1a:00.0"));
        assert!(is_bdf("10000:00:04.0"));
        assert!(!is_bdf("pci0000:00"));
        assert!(!is_bdf("0000:1a:00.9"));
        assert!(!is_bdf("0000:1a:00"));
    }
}
