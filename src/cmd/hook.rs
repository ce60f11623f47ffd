//! `ibwire hook`: run by enroot (through hooks/90-ibwire.sh) before every container start.
//!
//! It binds the right /dev/infiniband nodes when the container's /dev is restricted and appends
//! the decided NCCL settings to the container's environment. It must never break a container
//! start: on a node without RDMA it does nothing and says nothing; any error is one warning line
//! and exit 0, unless strict mode (IBWIRE_STRICT=1 or hook.strict) asked for a failure.

use super::{one_line, say};
use crate::config::Config;
use crate::enroot::{environ, fstab};
use crate::plan::{self, hook, visible, Intent, Master};
use crate::probe::Node;
use crate::render;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// What the hook wrote, for tests and for IBWIRE_DEBUG.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    pub mounts: Vec<String>,
    pub environ: Vec<String>,
    pub warnings: Vec<String>,
    pub devices: Vec<String>,
}

/// enroot's rule for its ENROOT_* flags (spec §1.4): set and non-empty is true, `0` included;
/// only n/no/f/false in their spellings are unset by enroot's configuration loader.
fn enroot_flag(v: Option<&String>) -> bool {
    match v.map(|s| s.trim()) {
        None | Some("") => false,
        Some(s) => !matches!(s, "n" | "no" | "N" | "No" | "NO" | "f" | "F" | "false" | "False" | "FALSE"),
    }
}

pub fn run(env: &BTreeMap<String, String>, src: &super::NodeSource) -> ExitCode {
    let root = src.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let cfg = crate::config::load(None);
    let strict = crate::config::truthy(env.get("IBWIRE_STRICT").map(String::as_str))
        || cfg.as_ref().ok().and_then(|c| c.hook.strict).unwrap_or(false);
    let res = std::panic::catch_unwind(|| -> Result<Outcome> {
        let cfg = cfg.as_ref().map_err(|e| anyhow::anyhow!("{e:#}"))?;
        // umad/issm owners are one link per RDMA function: read only when they are used.
        let mad = cfg.hook.hide_sysfs.unwrap_or(false) || (cfg.hook.mad.unwrap_or(false) && real_root(env));
        let node = src.load_with_mad(mad)?;
        let out = decide_and_write(&node, env, cfg, &root);
        // The process ends next: freeing a 512-function node one string at a time cost a
        // twentieth of the hook's instructions there.
        std::mem::forget(node);
        out
    });
    let outcome = match res {
        Ok(r) => r,
        Err(_) => Err(anyhow::anyhow!("internal error (panic); the container starts without ibwire's settings")),
    };
    match outcome {
        Ok(o) => {
            for w in &o.warnings {
                say(&format!("ibwire-hook: warning: {w}"));
            }
            if crate::config::truthy(env.get("IBWIRE_DEBUG").map(String::as_str)) {
                say(&format!("ibwire-hook: devices: {}", o.devices.join(",")));
                for l in o.mounts.iter().chain(&o.environ) {
                    say(&format!("ibwire-hook: + {l}"));
                }
            }
            if strict && !o.warnings.is_empty() {
                say(&format!("ibwire-hook: error: strict mode: {}", o.warnings[0]));
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) if strict => {
            say(&format!("ibwire-hook: error: {}", one_line(&format!("{e:#}"))));
            ExitCode::from(1)
        }
        Err(e) => {
            say(&format!("ibwire-hook: warning: {}", one_line(&format!("{e:#}"))));
            ExitCode::SUCCESS
        }
    }
}

/// A variable from the hook's environment, else its last value in the container's environ
/// file (the stock hook's precedence for MELLANOX_*).
fn lookup(env: &BTreeMap<String, String>, file: &BTreeMap<String, String>, k: &str) -> Option<String> {
    env.get(k).or_else(|| file.get(k)).cloned()
}

/// Is the container's /dev its own (restricted by 10-devices.sh), or the host's?
fn dev_restricted(env: &BTreeMap<String, String>, rootfs: Option<&Path>, root: &Path) -> bool {
    if enroot_flag(env.get("ENROOT_RESTRICT_DEV")) || enroot_flag(env.get("ENROOT_UNSHARE_IPC")) {
        return true;
    }
    match (rootfs.map(|r| std::fs::metadata(r.join("dev"))), std::fs::metadata(root.join("dev"))) {
        (Some(Ok(a)), Ok(b)) => a.dev() != b.dev(),
        _ => false,
    }
}

/// The master address as launch and env find it (Slurm's first node, else MASTER_ADDR), from the
/// hook's environment over the container's environ file; any failure falls back to the default
/// route with a warning. The deadline is short: this is every container start.
fn master(
    env: &BTreeMap<String, String>,
    file: &BTreeMap<String, String>,
    warnings: &mut Vec<String>,
) -> Option<Master> {
    let mut merged = file.clone();
    merged.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    match super::env::master(None, &merged, Duration::from_secs(2)) {
        Ok(m) => m,
        Err(e) => {
            warnings.push(format!("{e:#}; bootstrap interface from the default route"));
            None
        }
    }
}

pub fn decide_and_write(node: &Node, env: &BTreeMap<String, String>, cfg: &Config, root: &Path) -> Result<Outcome> {
    let mut out = Outcome::default();
    if node.rdma.is_empty() {
        return Ok(out);
    }
    let mounts_path =
        env.get("ENROOT_MOUNTS").map(PathBuf::from).context("ENROOT_MOUNTS is not set (not run by enroot?)")?;
    let environ_path =
        env.get("ENROOT_ENVIRON").map(PathBuf::from).context("ENROOT_ENVIRON is not set (not run by enroot?)")?;
    let rootfs = env.get("ENROOT_ROOTFS").map(PathBuf::from);
    // Read once, bounded, bytes kept: a non-UTF-8 byte in the image's environment must not
    // cost the settings (it would be the silent socket fallback again).
    let environ_bytes = match crate::input::read_bytes(&environ_path, crate::input::MAX_INPUT) {
        Ok(b) => b,
        Err(e) if crate::input::is_absent(&e) => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", environ_path.display())),
    };
    let file_env = environ::parse(&String::from_utf8_lossy(&environ_bytes));

    let intent = Intent { master: master(env, &file_env, &mut out.warnings), config: cfg.clone(), env: env.clone() };
    let p = plan::decide(node, &intent);
    // What the plan could not decide (a configured interface that does not exist, no route to
    // the master) is the hook not doing its job: a warning, and a failure in strict mode.
    for f in p.findings.iter().filter(|f| f.severity == plan::Severity::Error) {
        out.warnings.push(format!("{}: {}", f.subject, f.message));
    }
    let healthy: Vec<String> = p.hcas.iter().map(|(d, _)| d.clone()).collect();
    let (var, value, mellanox) = hook::visibility(|k| lookup(env, &file_env, k), cfg.hook.visible_devices.as_deref());
    let sel = visible::select(node, var, &value, mellanox, &healthy);
    let restricted = dev_restricted(env, rootfs.as_deref(), root);
    let mad = cfg.hook.mad.unwrap_or(false) && real_root(env);
    let mut d = hook::decide(node, &p, &sel, restricted, mad, |k| env.contains_key(k) || file_env.contains_key(k));
    if let Some(why) = pin_nccl_net(&p, &sel, env, &file_env, cfg, rootfs.as_deref()) {
        d.env.push(("NCCL_NET".into(), "IB".into()));
        if crate::config::truthy(env.get("IBWIRE_DEBUG").map(String::as_str)) {
            say(&format!("ibwire-hook: NCCL_NET=IB: {why}"));
        }
    }
    out.devices = d.devices;
    out.warnings.extend(d.warnings);
    for b in &d.binds {
        out.mounts.push(fstab::device_bind(b)?);
    }
    if cfg.hook.hide_sysfs.unwrap_or(false) {
        let runtime = env
            .get("ENROOT_RUNTIME_PATH")
            .map(PathBuf::from)
            .or_else(|| mounts_path.parent().map(Path::to_path_buf))
            .context("no ENROOT_RUNTIME_PATH for the sysfs mask")?;
        out.mounts.extend(sysfs_mask(node, &sel.devices, &runtime.join("ibwire-sysfs"), root)?);
    }
    for (k, v) in &d.env {
        match render::environ_line(k, v) {
            Ok(l) => out.environ.push(l),
            Err(e) => out.warnings.push(format!("{e:#}")),
        }
    }
    append(&mounts_path, &out.mounts, None)?;
    append(&environ_path, &out.environ, Some(&environ_bytes))?;
    Ok(out)
}

/// NCCL_NET=IB for a multi-node job with healthy HCAs exposed and no net plugin in the image
/// (pyxis starts containers with only the hook in the loop: this is what turns a socket
/// fallback there into a failed NCCL init). The image's plugin is looked for by lstat in its
/// library directories (LD_LIBRARY_PATH from the image's environment, then the usual ones).
fn pin_nccl_net(
    p: &plan::Plan,
    sel: &visible::Selection,
    env: &BTreeMap<String, String>,
    file_env: &BTreeMap<String, String>,
    cfg: &Config,
    rootfs: Option<&Path>,
) -> Option<String> {
    let var = |k: &str| lookup(env, file_env, k);
    let exposed = p.hcas.iter().any(|(dev, _)| sel.devices.contains(dev));
    let plugin = rootfs.and_then(|r| {
        crate::probe::host::find_net_plugin(
            r,
            file_env.get("LD_LIBRARY_PATH").map(String::as_str),
            var("NCCL_NET_PLUGIN").as_deref(),
        )
    });
    plan::netguard::pin_for_job(p, exposed, cfg, var, plugin.as_deref()).ok()
}

/// umad/issm nodes only for real root, as the stock hook: the uid map's outside uid is 0.
fn real_root(env: &BTreeMap<String, String>) -> bool {
    enroot_flag(env.get("ENROOT_ALLOW_SUPERUSER"))
        && std::fs::read_to_string("/proc/self/uid_map")
            .map(|m| m.split_whitespace().nth(1) == Some("0"))
            .unwrap_or(false)
}

/// A directory per sysfs class holding only the selected devices' links, bound over
/// /sys/class/infiniband* so NCCL cannot even see the others (the stock hook's masking, done
/// with binds of prepared directories instead of immediate mounts).
fn sysfs_mask(node: &Node, selected: &[String], dir: &Path, root: &Path) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for class in ["infiniband", "infiniband_verbs", "infiniband_mad"] {
        let host = root.join("sys/class").join(class);
        if !host.is_dir() {
            continue;
        }
        let d = dir.join(class);
        std::fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
        for ent in std::fs::read_dir(&host).with_context(|| format!("cannot list {}", host.display()))?.flatten() {
            let name = ent.file_name().to_string_lossy().into_owned();
            let keep = if name == "abi_version" {
                true
            } else {
                let owner = match class {
                    "infiniband" => Some(name.clone()),
                    _ => node
                        .rdma
                        .iter()
                        .find(|x| x.uverbs.as_deref() == Some(&name) || x.mad.contains(&name))
                        .map(|x| x.name.clone()),
                };
                owner.map(|o| selected.contains(&o)).unwrap_or(false)
            };
            if !keep {
                continue;
            }
            let link = std::fs::read_link(ent.path()).ok();
            let at = d.join(&name);
            let _ = std::fs::remove_file(&at);
            match link {
                // Relative class links point to ../../devices/…; from the mask they must be absolute.
                Some(t) => {
                    let abs = Path::new("/sys/class").join(class).join(t);
                    std::os::unix::fs::symlink(normalize(&abs), &at)
                }
                None => std::fs::copy(ent.path(), &at).map(|_| ()),
            }
            .with_context(|| format!("cannot prepare {}", at.display()))?;
        }
        lines.push(fstab::dir_bind(&d.to_string_lossy(), &format!("/sys/class/{class}")));
    }
    Ok(lines)
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Append `lines`; `known` is the file's content already read (to see whether it ends open).
fn append(path: &Path, lines: &[String], known: Option<&[u8]>) -> Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("cannot append to {}", path.display()))?;
    // A file whose last line lacks its newline (an image's environment, an earlier hook) must
    // not have our first line glued onto it.
    let ends_open = match known {
        Some(b) => b.last().is_some_and(|c| *c != b'\n'),
        None => {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            len > 0 && {
                use std::io::{Read, Seek, SeekFrom};
                let mut last = [0u8; 1];
                let mut r = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
                r.seek(SeekFrom::Start(len - 1)).is_ok() && r.read_exact(&mut last).is_ok() && last[0] != b'\n'
            }
        }
    };
    let mut text = if ends_open { String::from("\n") } else { String::new() };
    text.push_str(&lines.join("\n"));
    text.push('\n');
    if text.contains('\0') {
        bail!("refusing to write a NUL byte to {}", path.display());
    }
    f.write_all(text.as_bytes()).with_context(|| format!("cannot append to {}", path.display()))
}
