//! `ibwire launch`: gather the job's shape, decide, preflight, then exec torchrun (bare or in
//! `enroot start`) as this process, so Slurm's signals reach it directly.

use crate::plan::launch::{self, Container, Input, Rdzv};
use crate::plan::{self, Intent, Master};
use crate::probe::Node;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Number of nodes (default: Slurm's node count, else 1).
    #[arg(long)]
    pub nnodes: Option<usize>,
    /// This node's rank (default: SLURM_NODEID, else 0).
    #[arg(long)]
    pub node_rank: Option<usize>,
    /// Rendezvous host (default: the first node of the Slurm job, else 127.0.0.1). Resolved to
    /// an IP here: the rendezvous must not depend on names only some nodes resolve.
    #[arg(long, value_name = "HOST")]
    pub master_addr: Option<String>,
    /// Rendezvous port (default: from SLURM_JOB_ID, outside the ephemeral range; else 29500).
    #[arg(long)]
    pub master_port: Option<u16>,
    /// Processes per node (default: the number of GPUs decided for CUDA_VISIBLE_DEVICES, or 1).
    #[arg(long)]
    pub nproc_per_node: Option<usize>,
    /// Rendezvous: static (--master-addr/--master-port) or c10d.
    #[arg(long, value_enum)]
    pub rdzv: Option<Rdzv>,
    /// Extra torchrun arguments, split like a shell would ("--max-restarts 3").
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub torchrun_args: Option<String>,
    /// Set or pass a variable: NAME=VALUE, or NAME to copy it from this environment.
    #[arg(long = "env", value_name = "NAME[=VALUE]")]
    pub env: Vec<String>,
    /// Run inside `enroot start NAME|IMAGE.sqsh`.
    #[arg(long, value_name = "NAME|IMAGE")]
    pub container: Option<String>,
    /// enroot mount SRC:DST (repeatable).
    #[arg(long = "mount", value_name = "SRC:DST", requires = "container")]
    pub mounts: Vec<String>,
    /// enroot --rw.
    #[arg(long, requires = "container")]
    pub rw: bool,
    /// enroot --root (remap the user to root in the container).
    #[arg(long, requires = "container")]
    pub remap_root: bool,
    /// Start even if the job would run on TCP sockets while the node has healthy HCAs, and let
    /// it run if NCCL falls back to sockets at init (a warning instead of a stop).
    #[arg(long)]
    pub allow_socket_fallback: bool,
    /// The network the job must use between nodes. auto: InfiniBand/RoCE when this node has
    /// healthy HCAs and the job spans nodes. ib: always (a socket fallback stops the job).
    /// socket: sockets are intended (nothing watched or pinned).
    #[arg(long, value_enum, default_value = "auto")]
    pub expect_net: crate::plan::netguard::ExpectNet,
    /// Stop the job, not only warn, when NCCL runs on InfiniBand without GPUDirect RDMA.
    #[arg(long)]
    pub require_gdr: bool,
    /// When launch is told to stop (SIGTERM, SIGINT, SIGHUP, SIGQUIT, forwarded to torchrun),
    /// or stops a job itself, torchrun gets this long to stop its workers before its whole
    /// process group is killed. Keep it under Slurm's KillWait (30 s by default).
    #[arg(long, value_name = "SECONDS", default_value_t = 15)]
    pub stop_grace: u64,
    /// Ask NCCL's RAS every SECS whether the job is hung; the same ranks stopped at the same
    /// operation twice in a row are named, with their node (NCCL ≥ 2.24). 0: never.
    #[arg(long, value_name = "SECS", default_value_t = 20)]
    pub ras_every: u64,
    /// Print the one command line that would run, and exit 0. The line is for bash: it is also
    /// POSIX sh unless an argument holds a control character (a newline), which only bash's
    /// `$'…'` can write on one line.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the decisions to stderr first.
    #[arg(long)]
    pub explain: bool,
    /// Configuration file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Pin the bootstrap interface.
    #[arg(long, value_name = "IFACE")]
    pub bootstrap_if: Option<String>,
    /// The training script and its arguments (after --).
    #[arg(last = true, required = true, value_name = "SCRIPT [ARGS]...")]
    pub script: Vec<String>,
}

/// Is ibwire's hook in one of enroot's system hook directories?
fn hook_installed(env: &std::collections::BTreeMap<String, String>) -> bool {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = env.get("ENROOT_SYSCONF_PATH") {
        dirs.push(PathBuf::from(d));
    }
    dirs.push("/etc/enroot".into());
    dirs.push("/usr/local/etc/enroot".into());
    dirs.iter().any(|d| d.join("hooks.d/90-ibwire.sh").exists())
}

/// What launch decided: the plan and the command, or why it refuses.
pub struct Prepared {
    pub plan: plan::Plan,
    pub launch: Result<launch::Launch, launch::Refusal>,
    pub nnodes: usize,
    /// The job must run on InfiniBand/RoCE: watch NCCL's init.
    pub expect_rdma: bool,
    /// Why the watch cannot see NCCL's choice with the user's NCCL_DEBUG* settings.
    pub watch_off: Option<String>,
    /// Whether NCCL_NET=IB was pinned, and why (not).
    pub pin: Result<String, String>,
    pub allow_fallback: bool,
}

/// The job's shape, decided without I/O: flags first, then Slurm's job, then a pod's
/// rendezvous variables, then the defaults (one node, rank 0, this host, port 29500; in Slurm
/// the port is per job).
struct Shape {
    nnodes: usize,
    node_rank: usize,
    master_name: String,
    master_port: u16,
}

fn shape(
    a: &Args,
    job: Option<&crate::slurm::Job>,
    eng: &crate::rendezvous::Rendezvous,
    config_port: Option<u16>,
) -> Result<Shape> {
    let nnodes = a.nnodes.or(job.map(|j| j.nodes.len())).or(eng.nnodes).unwrap_or(1);
    let node_rank = a.node_rank.or(job.and_then(|j| j.node_rank)).or(eng.node_rank).unwrap_or(0);
    if nnodes == 0 || node_rank >= nnodes {
        bail!("node rank {node_rank} is not below the node count {nnodes}");
    }
    let master_name = a
        .master_addr
        .clone()
        .or_else(|| job.and_then(|j| j.nodes.first().cloned()))
        .or(eng.master_addr.clone())
        .unwrap_or_else(|| "127.0.0.1".into());
    let master_port = a
        .master_port
        .or(config_port)
        .or(job.and_then(|j| j.job_id).map(crate::slurm::port_for_job))
        .or(eng.master_port)
        .unwrap_or(29500);
    Ok(Shape { nnodes, node_rank, master_name, master_port })
}

/// Where the job runs: its Slurm job (or a pod's rendezvous), the config, the shape over nodes,
/// the master and the rendezvous.
struct Where {
    job: Option<crate::slurm::Job>,
    cfg: crate::config::Config,
    eng: crate::rendezvous::Rendezvous,
    shape: Shape,
    ip: std::net::IpAddr,
    rdzv: Option<Rdzv>,
    allow: bool,
    master: Option<Master>,
}

fn where_from(a: &Args, env: &BTreeMap<String, String>) -> Result<Where> {
    let job = crate::slurm::from_env(env)?;
    let mut cfg = crate::config::load(a.config.as_deref())?;
    if let Some(b) = &a.bootstrap_if {
        cfg.bootstrap_interface = Some(b.clone());
    }
    // Outside Slurm, a pod's rendezvous (Kubeflow PET_*, JobSet/torchrun MASTER_ADDR…).
    let engine = if job.is_none() { crate::rendezvous::from_env(env)? } else { None };
    let eng = engine.unwrap_or_default();
    let shape = shape(a, job.as_ref(), &eng, cfg.launch.master_port)?;
    let (nnodes, master_name) = (shape.nnodes, shape.master_name.clone());
    let ip = crate::resolve::resolve(&master_name, Duration::from_secs(5)).with_context(|| {
        format!("master address {master_name} does not resolve here; give --master-addr with an IP address")
    })?;
    let rdzv = a.rdzv.or(match cfg.launch.rdzv.as_deref() {
        Some("c10d") => Some(Rdzv::C10d),
        Some("static") | None => None,
        Some(o) => bail!("config launch.rdzv: {o:?} is not static or c10d"),
    });
    let allow = a.allow_socket_fallback || cfg.launch.allow_socket_fallback.unwrap_or(false);
    if nnodes > 1 && ip.is_loopback() {
        // Outside Slurm the master defaults to this node's loopback, which no other node reaches.
        bail!(
            "a job over {nnodes} nodes with the master at {master_name} ({ip}), a loopback address no other node can reach; give --master-addr with the routable address of node rank 0 (or run inside a Slurm allocation)"
        );
    }
    // One node talking to itself over loopback needs no routed bootstrap interface.
    let master = if nnodes == 1 && ip.is_loopback() { None } else { Some(Master { name: master_name.clone(), ip }) };
    Ok(Where { job, cfg, eng, shape, ip, rdzv, allow, master })
}

pub fn prepare(
    node: &Node,
    a: &Args,
    env: std::collections::BTreeMap<String, String>,
    watch_dir: Option<&Path>,
) -> Result<Prepared> {
    let Where { job, cfg, eng, shape, ip, rdzv, allow, master } = where_from(a, &env)?;
    let Shape { nnodes, node_rank, master_port, .. } = shape;
    let intent = Intent { master, config: cfg, env: env.clone() };
    let p = plan::decide(node, &intent);
    if a.explain {
        eprint!("{}", crate::text::for_stderr(&crate::render::explain(&p)));
    }
    let hook_installed = hook_installed(&env);
    // The socket-fallback guard: NCCL_NET=IB where no plugin is in play (bare only: in a
    // container the hook looks inside the image and pins there), and the init-log watch.
    let expect_rdma = plan::netguard::expects_rdma(&p, nnodes, a.expect_net);
    let user = |k: &str| user_value(&env, a, k);
    let pin = pin_for(a, &env, expect_rdma, allow);
    let mut extra_env = a.env.clone();
    let mut mounts = a.mounts.clone();
    if pin.is_ok() {
        extra_env.push("NCCL_NET=IB".into());
    }
    let watch_off = watch_dir
        .filter(|_| expect_rdma || a.require_gdr)
        .and_then(|dir| watch_setup(dir, a, user, &mut extra_env, &mut mounts));
    let torchrun_args = a.torchrun_args.as_deref().map(shell_words::split).transpose().context("--torchrun-args")?;
    let enroot = which::which("enroot").map(|p| p.display().to_string()).unwrap_or_else(|_| "enroot".into());
    let input = Input {
        nnodes,
        node_rank,
        master_ip: ip.to_string(),
        master_port,
        nproc_per_node: a.nproc_per_node.or(eng.nproc_per_node).unwrap_or(p.nproc_per_node),
        rdzv: rdzv.unwrap_or(Rdzv::Static),
        rdzv_id: job.as_ref().and_then(|j| j.job_id).map(|i| i.to_string()).unwrap_or_else(|| "ibwire".into()),
        torchrun: torchrun_path(a),
        torchrun_args: torchrun_args.unwrap_or_default(),
        script: a.script.clone(),
        env,
        extra_env,
        container: a.container.as_ref().map(|image| Container {
            image: image.clone(),
            mounts,
            rw: a.rw,
            remap_root: a.remap_root,
        }),
        enroot,
        host_dev_infiniband: Path::new("/dev/infiniband").is_dir() || !node.host.dev_infiniband.is_empty(),
        hook_installed,
        allow_socket_fallback: allow,
    };
    check_env_names(a)?;
    let built = launch::build(&p, &p.missing_device_nodes(node), &input);
    Ok(Prepared { plan: p, launch: built, nnodes, expect_rdma, watch_off, pin, allow_fallback: allow })
}

/// Bare: torchrun from PATH (plain name when absent: a dry run on a login node). In a
/// container torchrun comes from the image.
fn torchrun_path(a: &Args) -> String {
    if a.container.is_some() {
        "torchrun".to_string()
    } else {
        which::which("torchrun").map(|p| p.display().to_string()).unwrap_or_else(|_| "torchrun".into())
    }
}

/// Every `--env NAME=VALUE` names a variable.
fn check_env_names(a: &Args) -> Result<()> {
    for e in &a.env {
        let name = e.split('=').next().unwrap_or("");
        if !crate::shell::valid_name(name) {
            bail!("--env {e:?}: {name:?} is not a variable name");
        }
    }
    Ok(())
}

/// A value of the job's environment, `--env NAME=VALUE` included.
fn user_value(env: &BTreeMap<String, String>, a: &Args, k: &str) -> Option<String> {
    env.get(k)
        .cloned()
        .or_else(|| a.env.iter().find_map(|e| e.split_once('=').filter(|(n, _)| *n == k).map(|(_, v)| v.to_string())))
}

/// The socket-fallback guard: NCCL_NET=IB where no plugin is in play (bare only: in a
/// container the hook looks inside the image and pins there).
fn pin_for(a: &Args, env: &BTreeMap<String, String>, expect_rdma: bool, allow: bool) -> Result<String, String> {
    let plugin = if a.container.is_none() {
        crate::probe::host::find_net_plugin(
            Path::new("/"),
            env.get("LD_LIBRARY_PATH").map(String::as_str),
            env.get("NCCL_NET_PLUGIN").map(String::as_str),
        )
    } else {
        None
    };
    if a.container.is_some() {
        Err("in a container the enroot hook decides, from the image's libraries".to_string())
    } else {
        plan::netguard::pin(expect_rdma, allow, |k| user_value(env, a, k), plugin.as_deref())
    }
}

/// The init-log watch: NCCL's debug variables towards a directory of ours (mounted into the
/// container); why not, when it cannot be.
fn watch_setup(
    dir: &Path,
    a: &Args,
    user: impl Fn(&str) -> Option<String>,
    extra_env: &mut Vec<String>,
    mounts: &mut Vec<String>,
) -> Option<String> {
    // enroot's -m takes SRC:DST with no blank or colon inside either.
    let mountable = !dir.to_string_lossy().contains([' ', '\t', '\n', ':']);
    match crate::cmd::watch::debug_env(dir, user) {
        Ok(_) if a.container.is_some() && !mountable => {
            Some(format!("the log directory {} cannot be an enroot mount (blank or colon in TMPDIR)", dir.display()))
        }
        Ok(vars) => {
            extra_env.extend(vars.into_iter().map(|(k, v)| format!("{k}={v}")));
            if a.container.is_some() {
                mounts.push(format!("{0}:{0}", dir.display()));
            }
            None
        }
        Err(why) => Some(why),
    }
}

/// Where NCCL's log of this job is kept: `ibwire-nccl-<job id>` in the job's submit directory
/// (`$SLURM_SUBMIT_DIR`, else the working directory), one file per rank and node
/// (`nccl.<host>.<pid>.log`), left there when the job ends so that `ibwire verify --from-log`
/// (of that directory, or of the job's output, which names it) can judge the job. Every node
/// of a job writes into the same directory on a shared file system.
pub fn kept_dir_path(env: &std::collections::BTreeMap<String, String>) -> PathBuf {
    let base = env
        .get("SLURM_SUBMIT_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(std::env::temp_dir);
    // A job id names a directory: digits, letters, '_' and '-' only (a hostile value is ignored).
    let word = |v: &String| {
        !v.is_empty() && v.len() <= 32 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let id = match (env.get("SLURM_JOB_ID"), env.get("SLURM_STEP_ID")) {
        (Some(j), Some(s)) if word(j) && word(s) => format!("{j}.{s}"),
        (Some(j), _) if word(j) => j.clone(),
        _ => format!(
            "{}-{}",
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
            std::process::id()
        ),
    };
    base.join(format!("ibwire-nccl-{id}"))
}

/// Make (or, for the other nodes of the job, find) the kept directory: a real directory, not a
/// link, owned by this user. Where the submit directory cannot take it, a private one in TMPDIR.
fn kept_dir(env: &std::collections::BTreeMap<String, String>) -> Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let p = kept_dir_path(env);
    let made = std::fs::DirBuilder::new().mode(0o755).create(&p);
    let ok = |p: &Path| {
        std::fs::symlink_metadata(p).map(|m| m.is_dir() && m.uid() == nix::unistd::geteuid().as_raw()).unwrap_or(false)
    };
    match made {
        Ok(()) => Ok(p),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && ok(&p) => Ok(p),
        Err(e) => {
            let t = crate::input::Scratch::new("ibwire-nccl")?.keep();
            eprintln!(
                "ibwire launch: warning: cannot keep NCCL's log in {} ({e}); it goes to {}",
                p.display(),
                t.display()
            );
            Ok(t)
        }
    }
}

pub fn run(node: &Node, a: &Args) -> Result<ExitCode> {
    super::say_hook_warnings("launch");
    // The watch's directory, kept after the job: made now, shown as its path in a dry run.
    let watched = a.expect_net != plan::netguard::ExpectNet::Socket;
    let env = super::job_env();
    let kept = if watched && !a.dry_run { Some(kept_dir(&env)?) } else { None };
    let dir = kept.clone().or_else(|| watched.then(|| kept_dir_path(&env)));
    let prepared = prepare(node, a, super::job_env(), dir.as_deref())?;
    let l = match &prepared.launch {
        Ok(l) => l.clone(),
        Err(r) => {
            eprintln!(
                "{}",
                crate::text::for_terminal(&format!("ibwire launch: error: refused: {}; fix: {}", r.reason, r.fix))
            );
            if let Some(d) = &kept {
                let _ = std::fs::remove_dir(d); // nothing ran: nothing to keep (only if empty)
            }
            return Ok(ExitCode::from(1));
        }
    };
    say_choices(a, &prepared);
    if a.dry_run {
        println!("{}", l.shell_line(a.container.is_some()));
        return Ok(ExitCode::SUCCESS);
    }
    let mut cmd = std::process::Command::new(&l.argv[0]);
    cmd.args(&l.argv[1..]);
    if a.container.is_none() {
        cmd.envs(l.env.iter().map(|(k, v)| (k, v)));
    }
    let watch = (prepared.expect_rdma || a.require_gdr) && prepared.watch_off.is_none();
    if let (false, Some(d)) = (watch, &kept) {
        // No watch, no log kept: the directory made for it goes (only if still empty).
        let _ = std::fs::remove_dir(d);
    }
    if let (true, Some(dir)) = (watch, kept) {
        return super::watch::run(
            cmd,
            super::watch::Watch {
                node,
                plan: &prepared.plan,
                dir,
                nnodes: prepared.nnodes,
                expect_rdma: prepared.expect_rdma,
                require_gdr: a.require_gdr,
                allow_fallback: prepared.allow_fallback,
                grace: std::time::Duration::from_secs(a.stop_grace),
                ras: ras_of(a, &l),
            },
        )
        .map_err(|e| anyhow::anyhow!("{e:#}{}", not_found_fix(a)));
    }
    let err = cmd.exec();
    let fix = if err.kind() == std::io::ErrorKind::NotFound { not_found_fix(a) } else { "" };
    bail!("cannot run {}: {err}{fix}", l.argv[0])
}

/// The RAS address to ask for a hang (the job's own, else NCCL's default) and how often.
fn ras_of(a: &Args, l: &launch::Launch) -> Option<(String, std::time::Duration)> {
    (a.ras_every > 0).then(|| {
        let addr = l
            .env
            .iter()
            .find(|(k, _)| k == "NCCL_RAS_ADDR")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("NCCL_RAS_ADDR").ok())
            .unwrap_or_else(|| "127.0.0.1:28028".into());
        (addr, std::time::Duration::from_secs(a.ras_every))
    })
}

/// `--explain`'s NCCL_NET choice, and the warning when a fallback would go unwatched.
fn say_choices(a: &Args, prepared: &Prepared) {
    if a.explain {
        match &prepared.pin {
            Ok(why) => eprintln!("NCCL_NET=IB: {}", crate::text::for_terminal(why)),
            Err(why) => eprintln!("NCCL_NET not pinned: {}", crate::text::for_terminal(why)),
        }
    }
    if let Some(why) = &prepared.watch_off {
        if prepared.expect_rdma && prepared.pin.is_err() {
            eprintln!("ibwire launch: warning: {why}: a socket fallback at NCCL init would go unnoticed");
        }
    }
}

fn not_found_fix(a: &Args) -> &'static str {
    if a.container.is_some() {
        ": enroot is not on PATH here; install enroot on the compute nodes, or run without --container"
    } else {
        ": torchrun is not on PATH here; activate the environment that has PyTorch (torchrun comes with it: pip install torch), or use --container IMAGE"
    }
}
