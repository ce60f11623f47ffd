//! The command `ibwire launch` execs: torchrun (bare, or inside `enroot start`), its arguments
//! and environment. Pure: every fact (Slurm shape, programs found, hook installed) comes in
//! `Input`, so the argv is unit-testable to the byte.

use super::{Plan, Severity, Source};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Rdzv {
    /// torchrun --master-addr/--master-port (node ranks fixed by Slurm).
    Static,
    /// torchrun --rdzv-backend c10d --rdzv-endpoint HOST:PORT --rdzv-id JOBID.
    C10d,
}

#[derive(Debug, Clone)]
pub struct Container {
    pub image: String,
    pub mounts: Vec<String>,
    pub rw: bool,
    pub remap_root: bool,
}

#[derive(Debug, Clone)]
pub struct Input {
    pub nnodes: usize,
    pub node_rank: usize,
    pub master_ip: String,
    pub master_port: u16,
    pub nproc_per_node: usize,
    pub rdzv: Rdzv,
    pub rdzv_id: String,
    pub torchrun: String,
    pub torchrun_args: Vec<String>,
    pub script: Vec<String>,
    /// The job's environment, for pass-through.
    pub env: BTreeMap<String, String>,
    /// `--env NAME[=VALUE]`.
    pub extra_env: Vec<String>,
    pub container: Option<Container>,
    pub enroot: String,
    /// The host has /dev/infiniband.
    pub host_dev_infiniband: bool,
    /// ibwire's enroot hook is installed (it mounts the devices itself).
    pub hook_installed: bool,
    pub allow_socket_fallback: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub argv: Vec<String>,
    /// Variables set for the child (bare: on top of the inherited environment; container: the
    /// container's whole environment besides enroot's defaults).
    pub env: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub reason: String,
    pub fix: String,
}

/// Variables a training job expects to reach the processes unchanged.
pub fn passes_through(name: &str) -> bool {
    ["NCCL_", "TORCH_", "PYTORCH_", "CUDA_"].iter().any(|p| name.starts_with(p)) || name == "OMP_NUM_THREADS"
}

pub fn build(plan: &Plan, node_healthy_missing_nodes: &[String], inp: &Input) -> Result<Launch, Refusal> {
    preflight(plan, node_healthy_missing_nodes, inp)?;
    let env = job_env(plan, inp)?;
    let tr = torchrun_argv(inp);
    let argv = match &inp.container {
        None => tr,
        Some(c) => enroot_argv(c, &env, tr, inp)?,
    };
    Ok(Launch { argv, env })
}

/// Refuse what would start and then hang or crawl.
fn preflight(plan: &Plan, node_healthy_missing_nodes: &[String], inp: &Input) -> Result<(), Refusal> {
    if let Some(f) = plan.findings.iter().find(|f| f.severity == Severity::Error) {
        return Err(Refusal { reason: f.headline(), fix: f.fix.clone().unwrap_or_default() });
    }
    if plan.bootstrap_if.is_none() && plan.get("NCCL_SOCKET_IFNAME").is_none() && inp.nnodes > 1 {
        return Err(Refusal {
            reason: "no bootstrap interface could be chosen".into(),
            fix: "give --master-addr or --bootstrap-if".into(),
        });
    }
    if !plan.hcas.is_empty() && !inp.allow_socket_fallback {
        let container_gets_them = inp.container.is_some() && inp.host_dev_infiniband;
        if !node_healthy_missing_nodes.is_empty() && !container_gets_them {
            return Err(Refusal {
                reason: format!(
                    "healthy HCAs but no /dev/infiniband node for {}: NCCL would fall back to TCP sockets",
                    node_healthy_missing_nodes.join(", ")
                ),
                fix: if inp.container.is_some() {
                    "the host itself lacks the device nodes: load ib_uverbs (modprobe ib_uverbs)".into()
                } else {
                    "inside a container: start it with /dev/infiniband mounted (ibwire's enroot hook, or -m /dev/infiniband); on the host: modprobe ib_uverbs".into()
                },
            });
        }
    }
    if plan.hcas.is_empty() && !inp.allow_socket_fallback {
        if let Some(f) = plan.findings.iter().find(|f| f.kind == Some(super::FindingKind::NoHealthyHca)) {
            return Err(Refusal {
                reason: f.message.clone(),
                fix: "fix the HCA ports (ibwire env --explain), or pass --allow-socket-fallback".into(),
            });
        }
    }
    Ok(())
}

/// The job's environment: the plan's settings, the user's own NCCL_/TORCH_/… ones, `--env`.
fn job_env(plan: &Plan, inp: &Input) -> Result<Vec<(String, String)>, Refusal> {
    let mut env: Vec<(String, String)> = Vec::new();
    let set = |k: &str, v: &str, env: &mut Vec<(String, String)>| {
        if let Some(e) = env.iter_mut().find(|(n, _)| n == k) {
            e.1 = v.to_string();
        } else {
            env.push((k.to_string(), v.to_string()));
        }
    };
    for s in &plan.settings {
        set(&s.name, &s.value, &mut env);
    }
    // The user's own NCCL_/TORCH_/… settings reach the job (in a container nothing else does).
    for (k, v) in &inp.env {
        if passes_through(k)
            && crate::shell::valid_name(k)
            && !plan.settings.iter().any(|s| &s.name == k && s.source == Source::Decided)
        {
            set(k, v, &mut env);
        }
    }
    for e in &inp.extra_env {
        let (k, v) = match e.split_once('=') {
            Some((k, v)) => (k, v.to_string()),
            None => (e.as_str(), inp.env.get(e).cloned().unwrap_or_default()),
        };
        if !crate::shell::valid_name(k) {
            return Err(Refusal {
                reason: format!("--env {}: not a variable name", crate::text::printable(k, 80)),
                fix: "give NAME=VALUE or NAME, NAME made of letters, digits and _ (not starting with a digit)".into(),
            });
        }
        set(k, &v, &mut env);
    }
    Ok(env)
}

/// torchrun's argv: the node's share, the rendezvous, the user's arguments and script.
fn torchrun_argv(inp: &Input) -> Vec<String> {
    let mut tr = vec![
        inp.torchrun.clone(),
        format!("--nnodes={}", inp.nnodes),
        format!("--nproc-per-node={}", inp.nproc_per_node),
    ];
    match inp.rdzv {
        Rdzv::Static => {
            tr.push(format!("--node-rank={}", inp.node_rank));
            tr.push(format!("--master-addr={}", inp.master_ip));
            tr.push(format!("--master-port={}", inp.master_port));
        }
        Rdzv::C10d => {
            tr.push("--rdzv-backend=c10d".into());
            let host = if inp.master_ip.contains(':') { format!("[{}]", inp.master_ip) } else { inp.master_ip.clone() };
            tr.push(format!("--rdzv-endpoint={host}:{}", inp.master_port));
            tr.push(format!("--rdzv-id={}", inp.rdzv_id));
        }
    }
    tr.extend(inp.torchrun_args.iter().cloned());
    tr.extend(inp.script.iter().cloned());
    tr
}

/// `enroot start` around torchrun: the environment as `-e`, the mounts, the image.
fn enroot_argv(c: &Container, env: &[(String, String)], tr: Vec<String>, inp: &Input) -> Result<Vec<String>, Refusal> {
    // Every value that becomes one of enroot's argv words before the image: one that
    // starts with `-` would be read as an option of enroot's (`--container=--mount=/:/host`
    // makes the image `torchrun`); enroot has no `--` to end its options.
    let optionlike = |w: &str| w.is_empty() || w.starts_with('-');
    if optionlike(&c.image) {
        return Err(Refusal {
            reason: format!("--container {}: an image or container name cannot start with '-' or be empty (enroot would read it as an option)", crate::text::printable(&c.image, 80)),
            fix: "name the container or the .sqsh image (./-odd.sqsh for a file named so)".into(),
        });
    }
    if let Some(m) = c.mounts.iter().find(|m| optionlike(m)) {
        return Err(Refusal {
            reason: format!(
                "--mount {}: a mount cannot start with '-' or be empty (enroot would read it as an option)",
                crate::text::printable(m, 80)
            ),
            fix: "give SRC:DST with an absolute or ./ source".into(),
        });
    }
    let mut a = vec![inp.enroot.clone(), "start".into()];
    if c.rw {
        a.push("--rw".into());
    }
    if c.remap_root {
        a.push("--root".into());
    }
    for (k, v) in env {
        // enroot reads `-e` values into its environ file one line each: a line break
        // would start a second variable of the value's choosing.
        if v.contains(['\n', '\r', '\0']) || k.contains(['\n', '\r', '\0', '=']) {
            return Err(Refusal {
                reason: format!("{k}: value contains a line break or NUL; enroot -e cannot carry it"),
                fix: format!("unset {k} or remove the line break from its value"),
            });
        }
        a.push("-e".into());
        a.push(format!("{k}={v}"));
    }
    for m in &c.mounts {
        a.push("-m".into());
        a.push(m.clone());
    }
    if inp.host_dev_infiniband && !inp.hook_installed {
        a.push("-m".into());
        a.push("/dev/infiniband:/dev/infiniband".into());
    }
    a.push(c.image.clone());
    a.extend(tr);
    Ok(a)
}

impl Launch {
    /// One shell line: `env NAME=VALUE … torchrun …` bare, or the enroot command (its `-e` flags
    /// carry the environment).
    pub fn shell_line(&self, container: bool) -> String {
        let mut words: Vec<String> = Vec::new();
        if !container && !self.env.is_empty() {
            words.push("env".into());
            words.extend(self.env.iter().map(|(k, v)| format!("{k}={v}")));
        }
        words.extend(self.argv.iter().cloned());
        words.iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ")
    }
}

/// POSIX quoting (`render::sh_quote`: braces, `~`, globs quoted too), except words holding control characters (a newline would break the one-line
/// promise): those use bash's `$'…'` with escapes.
pub fn quote_word(w: &str) -> String {
    // Only ASCII controls need $'…': C1 controls (U+0080–U+009F) are safe in single quotes,
    // and \xHH would turn them into raw bytes (found by tests/it/properties.rs).
    if !w.chars().any(|c| c.is_ascii_control()) {
        return crate::shell::sh_quote(w);
    }
    let mut s = String::from("$'");
    for c in w.chars() {
        match c {
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '\\' => s.push_str("\\\\"),
            '\'' => s.push_str("\\'"),
            c if c.is_ascii_control() => s.push_str(&format!("\\x{:02x}", c as u32)),
            c => s.push(c),
        }
    }
    s.push('\'');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Finding, Setting};

    fn plan(hcas: bool) -> Plan {
        let s = |n: &str, v: &str| Setting {
            name: n.into(),
            value: v.into(),
            reason: String::new(),
            source: Source::Decided,
        };
        Plan {
            settings: vec![s("NCCL_SOCKET_IFNAME", "=eno8303"), s("GLOO_SOCKET_IFNAME", "eno8303")],
            excluded: vec![],
            findings: vec![],
            hcas: if hcas { vec![("mlx5_0".into(), 1)] } else { vec![] },
            bootstrap_if: Some("eno8303".into()),
            bootstrap_reason: None,
            bootstrap_from_master: false,
            nproc_per_node: 4,
        }
    }

    fn input() -> Input {
        Input {
            nnodes: 2,
            node_rank: 1,
            master_ip: "10.0.0.1".into(),
            master_port: 24242,
            nproc_per_node: 4,
            rdzv: Rdzv::Static,
            rdzv_id: "4242".into(),
            torchrun: "torchrun".into(),
            torchrun_args: vec!["--max-restarts".into(), "3".into()],
            script: vec!["train.py".into(), "--lr".into(), "3e-4".into()],
            env: [("NCCL_DEBUG", "WARN"), ("HOME", "/root"), ("OMP_NUM_THREADS", "8"), ("NCCL_BAD NAME", "x")]
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            extra_env: vec!["WANDB_MODE=offline".into(), "HOME".into()],
            container: None,
            enroot: "enroot".into(),
            host_dev_infiniband: true,
            hook_installed: false,
            allow_socket_fallback: false,
        }
    }

    #[test]
    fn bare_static_argv_and_env() {
        let l = build(&plan(false), &[], &input()).unwrap();
        assert_eq!(
            l.argv.join(" "),
            "torchrun --nnodes=2 --nproc-per-node=4 --node-rank=1 --master-addr=10.0.0.1 --master-port=24242 --max-restarts 3 train.py --lr 3e-4"
        );
        let names: Vec<&str> = l.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_DEBUG", "OMP_NUM_THREADS", "WANDB_MODE", "HOME"]
        );
        assert_eq!(l.env[5].1, "/root", "--env NAME copies the value");
    }

    #[test]
    fn c10d_rendezvous() {
        let mut i = input();
        i.rdzv = Rdzv::C10d;
        i.master_ip = "fd00::1".into();
        let l = build(&plan(false), &[], &i).unwrap();
        assert!(l.argv.contains(&"--rdzv-backend=c10d".to_string()));
        assert!(l.argv.contains(&"--rdzv-endpoint=[fd00::1]:24242".to_string()));
        assert!(l.argv.contains(&"--rdzv-id=4242".to_string()));
        assert!(!l.argv.iter().any(|a| a.starts_with("--node-rank")));
    }

    #[test]
    fn container_gets_every_variable_and_the_devices() {
        let mut i = input();
        i.container = Some(Container {
            image: "pytorch.sqsh".into(),
            mounts: vec!["/data:/data".into()],
            rw: true,
            remap_root: false,
        });
        let l = build(&plan(true), &[], &i).unwrap();
        let a = l.argv.join(" ");
        assert!(
            a.starts_with(
                "enroot start --rw -e NCCL_SOCKET_IFNAME==eno8303 -e GLOO_SOCKET_IFNAME=eno8303 -e NCCL_DEBUG=WARN"
            ),
            "{a}"
        );
        assert!(
            a.contains("-m /data:/data -m /dev/infiniband:/dev/infiniband pytorch.sqsh torchrun --nnodes=2"),
            "{a}"
        );
        i.hook_installed = true;
        let l = build(&plan(true), &[], &i).unwrap();
        assert!(!l.argv.join(" ").contains("/dev/infiniband"), "the hook mounts them");
    }

    #[test]
    fn preflight_refuses_silent_socket_fallback() {
        let r = build(&plan(true), &["mlx5_0 (uverbs0)".into()], &input()).unwrap_err();
        assert!(r.reason.contains("no /dev/infiniband node for mlx5_0"), "{}", r.reason);
        let mut i = input();
        i.allow_socket_fallback = true;
        assert!(build(&plan(true), &["mlx5_0 (uverbs0)".into()], &i).is_ok());
        let mut p = plan(false);
        p.findings.push(Finding::new(
            Severity::Error,
            "NCCL_SOCKET_IFNAME",
            "configured bootstrap interface x does not exist",
        ));
        assert!(build(&p, &[], &input()).unwrap_err().reason.contains("does not exist"));
    }

    #[test]
    fn dry_run_quotes_hostile_arguments() {
        let mut i = input();
        i.script = vec!["train.py".into(), "$(reboot)".into(), "a'b\"c".into(), "x\ny".into(), "".into()];
        let l = build(&plan(false), &[], &i).unwrap();
        let line = l.shell_line(false);
        assert_eq!(line.lines().count(), 1, "one line even with a newline in an argument");
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("set -- {}; printf '%s|' \"$@\"", &line["env ".len()..]))
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).ends_with("train.py|$(reboot)|a'b\"c|x\ny||"));
    }
}
