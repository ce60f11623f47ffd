//! Host facts that gate RDMA: peer-memory module, memlock limit, device nodes, verbs libraries.

use super::model::parse_dev_numbers;
use super::model::{HostFacts, NumaNode};
use super::sysroot::SysRoot;
use std::path::{Path, PathBuf};

const LIB_DIRS: &[&str] = &[
    "usr/lib/x86_64-linux-gnu",
    "usr/lib/aarch64-linux-gnu",
    "usr/lib64",
    "usr/lib",
    "lib/x86_64-linux-gnu",
    "lib64",
    "usr/local/lib",
];

/// The library names NCCL would load as a net plugin: `libnccl-net.so`, or for each entry of
/// `NCCL_NET_PLUGIN` (a comma list) `libnccl-net-<name>.so` and the name itself. The list is
/// the job's or the image's: repeats are dropped and at most 16 names kept (NCCL itself tries a
/// handful), so no value makes a container start try more.
pub fn net_plugin_names(nccl_net_plugin: Option<&str>) -> Vec<String> {
    match nccl_net_plugin.map(str::trim) {
        None | Some("") => vec!["libnccl-net.so".into()],
        Some(list) => {
            let mut names: Vec<String> = Vec::new();
            for n in list.split(',').map(str::trim).filter(|n| !n.is_empty() && n.len() < 256) {
                for c in [format!("libnccl-net-{n}.so"), n.to_string()] {
                    if !names.contains(&c) {
                        names.push(c);
                    }
                }
                if names.len() >= MAX_LOOKUP {
                    names.truncate(MAX_LOOKUP);
                    break;
                }
            }
            names
        }
    }
}

/// The first NCCL net plugin library under `root` (`/`, or a container's rootfs) where NCCL's
/// dlopen would find it: `LD_LIBRARY_PATH`, then the usual library directories (ld.so.cache
/// lists no more than these in practice). By lstat only, and inside the root: an image's
/// symlinks are resolved in the image, never on the host.
pub fn find_net_plugin(root: &Path, ld_library_path: Option<&str>, nccl_net_plugin: Option<&str>) -> Option<String> {
    find_net_plugin_in(&SysRoot::new(root), ld_library_path, nccl_net_plugin)
}

/// `find_net_plugin` in a root already open (the hook looks up libibverbs in the same image:
/// its resolved directories are not walked twice).
pub fn find_net_plugin_in(
    root: &SysRoot,
    ld_library_path: Option<&str>,
    nccl_net_plugin: Option<&str>,
) -> Option<String> {
    let names = net_plugin_names(nccl_net_plugin);
    find_lib(root, &lib_dirs(ld_library_path), &names)
}

/// Most entries of `LD_LIBRARY_PATH` (and names) a look-up tries: every container start pays
/// for each directory × name.
const MAX_LOOKUP: usize = 16;

/// Where the loader looks, relative to the root: `LD_LIBRARY_PATH`'s absolute entries (the
/// first 16), then the usual library directories (ld.so.cache lists no more in practice).
pub fn lib_dirs(ld_library_path: Option<&str>) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    let given = ld_library_path
        .unwrap_or("")
        .split(':')
        .filter_map(|d| d.strip_prefix('/'))
        .map(|d| d.trim_end_matches('/'))
        .filter(|d| !d.is_empty() && d.len() < 256);
    for d in given {
        if dirs.len() >= MAX_LOOKUP {
            break;
        }
        if !dirs.iter().any(|x| x == d) {
            dirs.push(d.to_string());
        }
    }
    for d in LIB_DIRS {
        if !dirs.iter().any(|x| x == d) {
            dirs.push(d.to_string());
        }
    }
    dirs
}

/// The first of `names` (at most 16) in one of `dirs` under `root`, as `/dir/name`. By lstat
/// only, and inside the root: an image's symlinks are resolved in the image, never on the host.
pub fn find_lib(sys: &SysRoot, dirs: &[String], names: &[String]) -> Option<String> {
    for d in dirs {
        for n in names.iter().take(MAX_LOOKUP) {
            let rel = Path::new(d).join(n);
            if sys.exists(&rel) {
                return Some(format!("/{}", rel.display()));
            }
        }
    }
    None
}

/// `dev_infiniband`: the names in /dev/infiniband (probe_with lists them once; sorted except on
/// the hook's path).
pub fn read(sys: &SysRoot, dev_infiniband: Vec<String>) -> HostFacts {
    if !sys.full() {
        return HostFacts { dev_infiniband, ..Default::default() };
    }
    let peermem = if sys.exists(Path::new("sys/module/nvidia_peermem")) {
        Some("nvidia_peermem".to_string())
    } else if sys.exists(Path::new("sys/kernel/mm/memory_peers/nv_mem/version")) {
        Some("nv_peer_mem".to_string())
    } else {
        None
    };
    let (memlock_bytes, memlock_unlimited) = memlock(sys);
    let find = |names: &[&str]| in_lib_dirs(sys, names);
    let libibverbs = find(&["libibverbs.so.1"]);
    let libs_checked = libibverbs.is_some() || LIB_DIRS.iter().any(|d| sys.exists(Path::new(d)));
    let mlx5_provider = find(&["libibverbs/libmlx5-rdmav34.so", "libibverbs/libmlx5-rdmav25.so", "libmlx5.so.1"]);
    let in_container = sys.exists(Path::new(".dockerenv"))
        || sys.exists(Path::new("run/.containerenv"))
        || sys.exists(Path::new(".enroot"))
        || sys.read(Path::new("proc/1/environ")).map(|e| e.contains("container=")).unwrap_or(false);
    let nvidia_version = sys.read(Path::new("proc/driver/nvidia/version"));
    let nvidia_driver = nvidia_version.as_deref().and_then(parse_driver_version);
    let rdma_cm_dev = sys.read(Path::new("sys/class/misc/rdma_cm/dev")).filter(|d| parse_dev_numbers(d).is_some());
    let kernel = sys
        .read(Path::new("proc/sys/kernel/osrelease"))
        .filter(|k| !k.is_empty() && k.len() <= 128 && k.bytes().all(|c| c.is_ascii_graphic()));
    let nvidia_module = nvidia_version.as_deref().and_then(module_kind);
    let (iommu_groups, iommu_passthrough) = iommu(sys);
    HostFacts {
        peermem,
        memlock_bytes,
        memlock_unlimited,
        dev_infiniband,
        libibverbs,
        mlx5_provider,
        libs_checked,
        in_container,
        nvidia_driver,
        kernel,
        nvidia_module,
        iommu_groups,
        iommu_passthrough,
        rdma_cm_dev,
    }
}

/// The first of `names` in the library directories, as an absolute path.
fn in_lib_dirs(sys: &SysRoot, names: &[&str]) -> Option<String> {
    for d in LIB_DIRS {
        for n in names {
            let p = Path::new(d).join(n);
            if sys.exists(&p) {
                return Some(format!("/{}", p.display()));
            }
        }
    }
    None
}

/// IOMMU groups (how many), and whether the default domain is passthrough.
fn iommu(sys: &SysRoot) -> (Option<u32>, Option<bool>) {
    let iommu_groups = sys
        .exists(Path::new("sys/kernel/iommu_groups"))
        .then(|| sys.list_unordered(Path::new("sys/kernel/iommu_groups")).len() as u32);
    // Passthrough: asked on the command line, or what the kernel made of the default domain
    // (a group's type is `identity` then, `DMA`/`DMA-FQ` when translating).
    let cmdline_pt = sys
        .read(Path::new("proc/cmdline"))
        .map(|c| c.split_whitespace().any(|w| w == "iommu=pt" || w == "iommu.passthrough=1"));
    let group_identity = match iommu_groups {
        Some(n) if n > 0 => sys
            .list(Path::new("sys/kernel/iommu_groups"))
            .first()
            .and_then(|g| sys.read(&Path::new("sys/kernel/iommu_groups").join(g).join("type")))
            .map(|t| t == "identity"),
        _ => None,
    };
    // The group's type is what the kernel did; `iommu=pt` says passthrough too. A command line
    // without it says nothing (the kernel's default domain may be passthrough): unknown then.
    let passthrough = match (group_identity, cmdline_pt) {
        (Some(v), _) => Some(v),
        (None, Some(true)) => Some(true),
        _ => None,
    };
    (iommu_groups, passthrough)
}

/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 …` → `550.54.15`
/// (open kernel modules say `NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release …`).
pub fn parse_driver_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    line.split_whitespace()
        .find(|w| {
            w.split('.').count() >= 2 && w.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_string)
}

/// `Max locked memory  8388608  8388608  bytes` from `/proc/self/limits` (the soft limit).
fn memlock(sys: &SysRoot) -> (Option<u64>, Option<bool>) {
    let Some(t) = sys.read(Path::new("proc/self/limits")) else {
        return (None, None);
    };
    for l in t.lines() {
        if let Some(rest) = l.strip_prefix("Max locked memory") {
            let soft = rest.split_whitespace().next().unwrap_or("");
            if soft == "unlimited" {
                return (None, Some(true));
            }
            return match soft.parse() {
                Ok(v) => (Some(v), Some(false)),
                Err(_) => {
                    sys.note(format!("/proc/self/limits: unreadable memlock value {soft:?}"));
                    (None, None)
                }
            };
        }
    }
    (None, None)
}

pub fn numa(sys: &SysRoot) -> Vec<NumaNode> {
    let base = PathBuf::from("sys/devices/system/node");
    let mut out = Vec::new();
    for n in sys.list(&base) {
        let Some(id) = n.strip_prefix("node").and_then(|i| i.parse().ok()) else {
            continue;
        };
        out.push(NumaNode { id, cpulist: sys.read(&base.join(&n).join("cpulist")) });
    }
    out
}

pub fn hostname(sys: &SysRoot) -> Option<String> {
    if sys.is_live() {
        return nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok());
    }
    sys.read(Path::new("proc/sys/kernel/hostname"))
}

/// `open` or `proprietary` from `/proc/driver/nvidia/version`'s first line; None when it is not
/// the NVRM line.
pub fn module_kind(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    if !first.starts_with("NVRM version:") {
        return None;
    }
    Some(if first.contains("Open Kernel Module") { "open" } else { "proprietary" }.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn net_plugin_names_and_lookup() {
        assert_eq!(super::net_plugin_names(None), vec!["libnccl-net.so"]);
        assert_eq!(
            super::net_plugin_names(Some("ofi, ncclnet")),
            vec!["libnccl-net-ofi.so", "ofi", "libnccl-net-ncclnet.so", "ncclnet"]
        );
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("opt/hpcx/lib");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("libnccl-net.so"), "").unwrap();
        assert_eq!(super::find_net_plugin(t.path(), None, None), None);
        assert_eq!(
            super::find_net_plugin(t.path(), Some("/nowhere:/opt/hpcx/lib"), None).as_deref(),
            Some("/opt/hpcx/lib/libnccl-net.so")
        );
        assert_eq!(super::find_net_plugin(t.path(), Some("/opt/hpcx/lib"), Some("ofi")), None);
    }

    #[test]
    fn look_ups_from_image_values_are_bounded_and_deduplicated() {
        // 150 KB of image environment was 30 000 x 30 000 lstat calls per container start.
        let many: Vec<String> = (0..30_000).map(|i| format!("p{i}")).collect();
        let names = super::net_plugin_names(Some(&many.join(",")));
        assert_eq!(names.len(), super::MAX_LOOKUP);
        assert_eq!(super::net_plugin_names(Some(&"ofi,".repeat(10_000))), vec!["libnccl-net-ofi.so", "ofi"]);
        let dirs: Vec<String> = (0..30_000).map(|i| format!("/d{i}")).collect();
        assert_eq!(super::lib_dirs(Some(&dirs.join(":"))).len(), super::MAX_LOOKUP + super::LIB_DIRS.len());
        let same = super::lib_dirs(Some(&"/usr/lib:/usr/lib/:/opt/x:".repeat(10_000)));
        assert_eq!(same.iter().filter(|d| *d == "usr/lib").count(), 1);
        assert_eq!(same.len(), 1 + super::LIB_DIRS.len());
    }

    #[test]
    fn driver_versions() {
        let t = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0";
        assert_eq!(super::parse_driver_version(t).as_deref(), Some("550.54.15"));
        let o = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)";
        assert_eq!(super::parse_driver_version(o).as_deref(), Some("570.86.15"));
        assert_eq!(super::parse_driver_version("garbage"), None);
    }
}
