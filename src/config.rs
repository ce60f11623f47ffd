//! Configuration: `/etc/ibwire.yaml`, then `$XDG_CONFIG_HOME/ibwire.yaml`, then
//! `IBWIRE_CONFIG`/`--config`, then flags. Later layers override earlier ones key by key.
//! Unknown keys and type errors are one line naming file, line and column.

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmptyPolicy {
    /// Run on TCP sockets with a warning (default).
    Sockets,
    /// Treat "no healthy HCA" as an error (launch refuses, env exits 1).
    Fail,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HcaConfig {
    /// Consider only these devices (`mlx5_0` or `mlx5_0:1`).
    pub include: Vec<String>,
    /// Never use these devices.
    pub exclude: Vec<String>,
    pub on_empty: Option<EmptyPolicy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HookConfig {
    /// Default for IBWIRE_VISIBLE_DEVICES: auto, all, none, or a list.
    pub visible_devices: Option<String>,
    /// Fail the container start on any hook error.
    pub strict: Option<bool>,
    /// Hide unselected devices from /sys/class/infiniband* inside the container.
    pub hide_sysfs: Option<bool>,
    /// Also expose umad/issm management nodes (needs real root, as the stock hook requires).
    pub mad: Option<bool>,
    /// The hook's time budget per container start, in milliseconds (default 10 000): past it,
    /// it gives up with one warning and the container starts without its settings (strict:
    /// the start fails). enroot itself waits for a hook forever.
    pub deadline_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LaunchConfig {
    pub master_port: Option<u16>,
    /// `static` (default) or `c10d`.
    pub rdzv: Option<String>,
    pub allow_socket_fallback: Option<bool>,
}

/// A port's link layer as `health.link_layer` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fabric {
    #[serde(rename = "InfiniBand", alias = "infiniband", alias = "ib")]
    InfiniBand,
    #[serde(rename = "Ethernet", alias = "ethernet", alias = "roce", alias = "RoCE")]
    Ethernet,
}

/// The shape every node of this site (or of this file's nodes) should have, for `ibwire
/// health`; `ibwire health --learn` prints it from a good node. Unset keys are not checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HealthConfig {
    /// Healthy HCA ports NCCL would take (the rails).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hcas: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_layer: Option<Fabric>,
    /// Each rail's rate, in Gb/s (400 for NDR 4X).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<u32>,
    /// Each rail's width: `4X`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    /// The GPU model as probe names it (`H200`, from the PCI device id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// A GPUDirect RDMA path must exist: nvidia_peermem loaded, or DMA-BUF possible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpudirect: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memlock_unlimited: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Pin the bootstrap interface (NCCL_SOCKET_IFNAME) instead of deriving it from routes.
    pub bootstrap_interface: Option<String>,
    pub hca: HcaConfig,
    pub hook: HookConfig,
    pub launch: LaunchConfig,
    pub health: HealthConfig,
}

impl Config {
    /// Overlay `o` on `self`: set scalars win, non-empty lists replace.
    pub fn merge(mut self, o: Config) -> Config {
        fn pick<T>(a: &mut Option<T>, b: Option<T>) {
            if b.is_some() {
                *a = b;
            }
        }
        pick(&mut self.bootstrap_interface, o.bootstrap_interface);
        if !o.hca.include.is_empty() {
            self.hca.include = o.hca.include;
        }
        if !o.hca.exclude.is_empty() {
            self.hca.exclude = o.hca.exclude;
        }
        pick(&mut self.hca.on_empty, o.hca.on_empty);
        pick(&mut self.hook.visible_devices, o.hook.visible_devices);
        pick(&mut self.hook.strict, o.hook.strict);
        pick(&mut self.hook.hide_sysfs, o.hook.hide_sysfs);
        pick(&mut self.hook.mad, o.hook.mad);
        pick(&mut self.hook.deadline_ms, o.hook.deadline_ms);
        pick(&mut self.launch.master_port, o.launch.master_port);
        pick(&mut self.launch.rdzv, o.launch.rdzv);
        pick(&mut self.launch.allow_socket_fallback, o.launch.allow_socket_fallback);
        let (h, n) = (&mut self.health, o.health);
        pick(&mut h.hcas, n.hcas);
        pick(&mut h.link_layer, n.link_layer);
        pick(&mut h.rate_gbps, n.rate_gbps);
        pick(&mut h.width, n.width);
        pick(&mut h.gpus, n.gpus);
        pick(&mut h.gpu_model, n.gpu_model);
        pick(&mut h.gpudirect, n.gpudirect);
        pick(&mut h.memlock_unlimited, n.memlock_unlimited);
        self
    }
}

pub fn parse(text: &str, origin: &str) -> Result<Config> {
    if text.trim().is_empty() {
        return Ok(Config::default());
    }
    crate::input::yaml_guard(text).map_err(|e| anyhow!("config {origin}:{e:#}"))?;
    serde_yaml::from_str(text).map_err(|e| match e.location() {
        Some(l) => {
            anyhow!("config {origin}:{}:{}: {}", l.line(), l.column(), crate::input::parse_error_text(&e.to_string()))
        }
        None => anyhow!("config {origin}: {}", crate::input::parse_error_text(&e.to_string())),
    })
}

/// The files consulted, in order, given the environment.
pub fn search_path(xdg: Option<&str>, home: Option<&str>, explicit: Option<&Path>) -> Vec<(PathBuf, bool)> {
    let mut v = vec![(PathBuf::from(ADMIN), false)];
    match (xdg, home) {
        (Some(x), _) if !x.is_empty() => v.push((Path::new(x).join("ibwire.yaml"), false)),
        (_, Some(h)) if !h.is_empty() => v.push((Path::new(h).join(".config/ibwire.yaml"), false)),
        _ => {}
    }
    if let Some(e) = explicit {
        // An explicitly named file must exist.
        v.push((e.to_path_buf(), true));
    }
    v
}

/// Each configuration file that exists, in order: is it the admin's, and what it parsed to. A
/// file that is absent and not required is left out; one that cannot be read or parsed is its
/// error.
fn layers(explicit: Option<&Path>) -> Vec<(PathBuf, bool, Result<Config>)> {
    let xdg = std::env::var("XDG_CONFIG_HOME").ok();
    let home = std::env::var("HOME").ok();
    let env_cfg = std::env::var_os("IBWIRE_CONFIG").map(PathBuf::from);
    let explicit = explicit.map(Path::to_path_buf).or(env_cfg);
    let mut out = Vec::new();
    for (path, required) in search_path(xdg.as_deref(), home.as_deref(), explicit.as_deref()) {
        let got = match crate::input::read_config(&path) {
            Ok(t) => parse(&t, &path.display().to_string()),
            Err(e) if crate::input::is_absent(&e) && !required => continue,
            Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read config {}", path.display()))),
        };
        let admin = path == Path::new(ADMIN);
        out.push((path, admin, got));
    }
    out
}

pub fn load(explicit: Option<&Path>) -> Result<Config> {
    let mut ok = Vec::new();
    for (_, admin, got) in layers(explicit) {
        ok.push((admin, got?));
    }
    Ok(layered(ok))
}

/// The hook's configuration. The administrator's layer is read on its own: a broken
/// `/etc/ibwire.yaml` is the returned error, and the defaults stand in for it. A user's layer
/// (`$XDG_CONFIG_HOME`/`~/.config/ibwire.yaml`, `IBWIRE_CONFIG`) that is missing, unreadable (a
/// root-squashed home) or broken is skipped with one warning: it never costs the node's
/// decisions or the administrator's keys (`hook.strict` among them).
pub fn load_hook() -> (Config, Option<anyhow::Error>, Vec<String>) {
    let (mut ok, mut admin_err, mut warnings) = (Vec::new(), None, Vec::new());
    for (_, admin, got) in layers(None) {
        match got {
            Ok(c) => ok.push((admin, c)),
            Err(e) if admin => admin_err = Some(e),
            Err(e) => warnings.push(format!("{e:#}; that file is skipped, the node's decisions stand")),
        }
    }
    (layered(ok), admin_err, warnings)
}

/// ibwire's own switches in the environment (IBWIRE_STRICT, IBWIRE_DEBUG,
/// IBWIRE_ALLOW_SOCKET_FALLBACK): set and not empty, `0`, or a no/false spelling is on.
pub fn truthy(v: Option<&str>) -> bool {
    match v.map(str::trim) {
        None | Some("") | Some("0") => false,
        Some(s) => !matches!(s.to_ascii_lowercase().as_str(), "n" | "no" | "f" | "false"),
    }
}

/// The administrator's file.
pub const ADMIN: &str = "/etc/ibwire.yaml";

/// Later layers override earlier ones key by key, except the keys that decide what a container
/// may see or whether a start may fail: where the administrator's file sets them, a user's file
/// or `IBWIRE_CONFIG` cannot change them.
pub fn layered(layers: Vec<(bool, Config)>) -> Config {
    let admin = layers.iter().find(|(a, _)| *a).map(|(_, c)| c.hook.clone()).unwrap_or_default();
    let mut cfg = layers.into_iter().fold(Config::default(), |acc, (_, c)| acc.merge(c));
    cfg.hook.strict = admin.strict.or(cfg.hook.strict);
    cfg.hook.visible_devices = admin.visible_devices.or(cfg.hook.visible_devices);
    cfg.hook.mad = admin.mad.or(cfg.hook.mad);
    cfg.hook.hide_sysfs = admin.hide_sysfs.or(cfg.hook.hide_sysfs);
    cfg.hook.deadline_ms = admin.deadline_ms.or(cfg.hook.deadline_ms);
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_types_are_located() {
        let e = parse("hca:\n  includ: [mlx5_0]\n", "x.yaml").unwrap_err().to_string();
        assert!(e.starts_with("config x.yaml:2:3: "), "{e}");
        // the file's own bytes are never quoted (a planted link can point anywhere): the
        // position and ibwire's own field names say what to fix
        assert!(e.contains("unknown field (not shown), expected one of `include`"), "{e}");
        assert!(!e.contains("includ`"), "{e}");
        let e = parse("launch:\n  master_port: lots\n", "x.yaml").unwrap_err().to_string();
        assert!(e.starts_with("config x.yaml:2:16:"), "{e}");
        let e = parse("hca:\n  on_empty: maybe\n", "x.yaml").unwrap_err().to_string();
        assert!(e.contains("unknown variant"), "{e}");
    }

    #[test]
    fn layers_override_key_by_key() {
        let a = parse("bootstrap_interface: eno8303\nhca:\n  exclude: [mlx5_bond_0]\n", "a").unwrap();
        let b = parse("hca:\n  on_empty: fail\n", "b").unwrap();
        let m = a.merge(b);
        assert_eq!(m.bootstrap_interface.as_deref(), Some("eno8303"));
        assert_eq!(m.hca.exclude, vec!["mlx5_bond_0"]);
        assert_eq!(m.hca.on_empty, Some(EmptyPolicy::Fail));
    }

    #[test]
    fn admin_keys_win_over_user_layers() {
        let admin = parse("hook:\n  strict: true\n  mad: false\nhca:\n  on_empty: fail\n", "a").unwrap();
        let user =
            parse("hook:\n  strict: false\n  mad: true\n  hide_sysfs: true\nhca:\n  on_empty: sockets\n", "u").unwrap();
        let c = layered(vec![(true, admin), (false, user)]);
        assert_eq!((c.hook.strict, c.hook.mad), (Some(true), Some(false)), "security keys stay the admin's");
        assert_eq!(c.hook.hide_sysfs, Some(true), "unset by the admin: the user may set it");
        assert_eq!(c.hca.on_empty, Some(EmptyPolicy::Sockets), "other keys layer as before");
    }

    #[test]
    fn alias_bombs_and_deep_nesting_fail_fast() {
        let mut bomb = String::from("a: &a [x,x,x,x,x,x,x,x,x,x]\n");
        for i in 1..20 {
            bomb.push_str(&format!(
                "{}: &{} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n",
                (b'a' + i) as char,
                (b'a' + i) as char,
                p = (b'a' + i - 1) as char
            ));
        }
        let t = std::time::Instant::now();
        assert!(parse(&bomb, "bomb.yaml").is_err());
        let deep = format!("hca: {{include: {}{}}}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep, "deep.yaml").is_err());
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{:?}", t.elapsed());
    }

    #[test]
    fn shipped_example_parses() {
        let t = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/ibwire.yaml")).unwrap();
        let c = parse(&t, "examples/ibwire.yaml").unwrap();
        assert_eq!(c.hca.on_empty, Some(EmptyPolicy::Sockets));
    }
}
