//! Argument parsing and dispatch only; the work is in the library.

// The static (musl) build's allocator (static_alloc.rs says why).
#[cfg(target_env = "musl")]
mod static_alloc;
// Its memcpy, memmove, memcmp and bcmp instead of musl's (see mem/src/lib.rs), x86_64 only.
#[cfg(all(target_env = "musl", target_arch = "x86_64"))]
use ibwire_mem as _;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use ibwire::cmd::{self, NodeSource};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Make multi-node GPU training on Slurm + enroot + torchrun right by construction.
///
/// ibwire reads the node (RDMA devices, interfaces, routes, GPUs, PCIe tree), decides
/// NCCL_IB_HCA, NCCL_SOCKET_IFNAME and CUDA_VISIBLE_DEVICES with the evidence for each, puts
/// /dev/infiniband into enroot containers, launches torchrun, and verifies from NCCL's own log
/// that the job runs on InfiniBand with GPUDirect RDMA.
///
/// Exit codes: 0 success; 1 a check failed (doctor found an error, verify saw the wrong
/// transport, launch preflight refused); 2 bad usage or input (flags, config, snapshot);
/// 3 verify could not tell (inconclusive).
#[derive(Parser)]
#[command(name = "ibwire", version, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Args, Clone)]
struct NodeArgs {
    /// Read DIR/sys, DIR/proc, DIR/dev and DIR/etc instead of the live system (a tree written
    /// by `probe --capture`, or an hwloc test tarball's root).
    #[arg(long, value_name = "DIR", env = "IBWIRE_ROOT", global = true)]
    root: Option<PathBuf>,
    /// Replay a snapshot saved by `probe --save` instead of probing.
    #[arg(long, value_name = "FILE", conflicts_with = "root", global = true)]
    snapshot: Option<PathBuf>,
}

/// The node for the hook and the TaskProlog: as NodeArgs, but IBWIRE_ROOT is never read (a job
/// could set it to redirect them); --root is for tests and captured trees only.
#[derive(Args, Clone)]
struct JobNodeArgs {
    /// Read DIR/sys, DIR/proc, DIR/dev and DIR/etc instead of the live system (tests, captured
    /// trees; enroot and slurmstepd never pass it).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Replay a snapshot saved by `probe --save` instead of probing.
    #[arg(long, value_name = "FILE", conflicts_with = "root")]
    snapshot: Option<PathBuf>,
}

impl JobNodeArgs {
    fn node_args(&self) -> NodeArgs {
        NodeArgs { root: self.root.clone(), snapshot: self.snapshot.clone() }
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Read the node into a typed snapshot and print it.
    ///
    /// Examples:
    ///   ibwire probe                       human summary of this node
    ///   ibwire probe --json > node.json    the snapshot as data
    ///   ibwire probe --save node.json      save for replay with --snapshot node.json
    ///   ibwire probe --capture /tmp/tree   copy what probe reads, for --root /tmp/tree
    #[command(verbatim_doc_comment)]
    Probe {
        #[command(flatten)]
        node: NodeArgs,
        /// Print the snapshot as JSON.
        #[arg(long, conflicts_with = "yaml")]
        json: bool,
        /// Print the snapshot as YAML.
        #[arg(long)]
        yaml: bool,
        /// Also write the snapshot to FILE: YAML when FILE ends in .yaml or .yml, JSON otherwise
        /// (JSON is read ~10× faster by `fleet` and `--snapshot`).
        #[arg(long, value_name = "FILE")]
        save: Option<PathBuf>,
        /// Copy the subset of /sys and /proc that probe reads into DIR.
        #[arg(long, value_name = "DIR", conflicts_with = "snapshot")]
        capture: Option<PathBuf>,
        /// Do not run nvidia-smi (UUIDs and NVLink counts stay unknown).
        #[arg(long)]
        no_nvidia_smi: bool,
        /// Read every table in full: each port's whole P_Key table (128 files on InfiniBand) and
        /// every GID. Without it, probe reads the P_Key at index 0 (the one NCCL uses), the port
        /// GID of InfiniBand ports and the populated RoCE GIDs.
        #[arg(long)]
        all: bool,
    },
    /// Decide NCCL_IB_HCA, NCCL_SOCKET_IFNAME, CUDA_VISIBLE_DEVICES and companions.
    ///
    /// Each value comes with its evidence (--explain). Values you already set in the
    /// environment are kept and reported. Warnings and errors go to stderr; exit 1 when a
    /// setting could not be decided (e.g. no interface routes to the master).
    ///
    /// Examples:
    ///   out=$(ibwire env) && eval "$out"   in an sbatch script, on each node
    ///                                     (not eval "$(ibwire env)": it hides exit 1)
    ///   ibwire env --master-addr gpu-001 --explain
    ///   ibwire env --format json --snapshot node.yaml
    #[command(verbatim_doc_comment)]
    Env {
        #[command(flatten)]
        node: NodeArgs,
        #[command(flatten)]
        decide: DecideArgs,
        /// Output format.
        #[arg(long, value_enum, default_value = "sh")]
        format: cmd::env::Format,
        /// Explain each decision on stderr (stdout stays machine-readable).
        #[arg(long)]
        explain: bool,
    },
    /// The enroot hook: expose /dev/infiniband and inject NCCL settings (run by enroot).
    ///
    /// Installed as hooks.d/90-ibwire.sh, a link to this binary (called through a name ending
    /// in .sh, ibwire is the hook); enroot runs it before every container start with
    /// ENROOT_ROOTFS, ENROOT_MOUNTS and ENROOT_ENVIRON set. It binds the selected
    /// /dev/infiniband nodes when the container's /dev is restricted, and appends, each unless
    /// already set: NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY, GLOO_SOCKET_IFNAME,
    /// CUDA_DEVICE_ORDER; NCCL_NET=IB for a multi-node job with healthy HCAs and no net plugin;
    /// IBWIRE_HOOK_WARNINGS when it has something to say (pyxis drops a hook's stderr).
    ///
    /// Devices: IBWIRE_VISIBLE_DEVICES = auto (healthy set, default) | all | none | void | a
    /// list of names, PCI addresses or indices; MELLANOX_VISIBLE_DEVICES is read as the stock
    /// 99-mellanox.sh reads it. On a node without RDMA it does nothing. Errors and crashes are
    /// one warning line and exit 0; IBWIRE_STRICT=1 makes them fail the start. IBWIRE_DEBUG=1
    /// prints what was written.
    #[command(verbatim_doc_comment)]
    Hook {
        #[command(flatten)]
        node: JobNodeArgs,
    },
    /// The Slurm TaskProlog for bare-metal jobs (slurm.conf: TaskProlog=/usr/bin/ibwire-taskprolog).
    ///
    /// slurmstepd runs it before every task, as the job's user, with the task's environment, and
    /// adds each `export NAME=value` line it prints to the task's environment. It prints the
    /// decided NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY, GLOO_SOCKET_IFNAME and
    /// CUDA_DEVICE_ORDER the job has not set itself (never CUDA_VISIBLE_DEVICES: the GPU
    /// allocation is Slurm's), and NCCL_NET=IB for a multi-node job with healthy HCAs and no
    /// net plugin. It never fails the task: any error (a broken /etc/ibwire.yaml, a bad flag)
    /// is one stderr line, nothing exported, exit 0. Like the hook, it ignores IBWIRE_ROOT.
    /// Called as ibwire-taskprolog (the link slurm.conf names) it takes the same flags.
    #[command(verbatim_doc_comment)]
    Taskprolog {
        #[command(flatten)]
        node: JobNodeArgs,
    },
    /// Start torchrun for this node (bare, or in `enroot start`), decided and checked.
    ///
    /// Run once per node, e.g. from an sbatch script:
    ///   srun --ntasks-per-node=1 ibwire launch --container pytorch -- train.py
    /// The cluster shape comes from Slurm (SLURM_JOB_NODELIST, SLURM_NODEID, SLURM_JOB_ID);
    /// flags override it. The decided NCCL/GLOO/CUDA settings and your own NCCL_*, TORCH_*,
    /// PYTORCH_*, CUDA_*, OMP_NUM_THREADS reach the job (as enroot -e flags in a container).
    /// Preflight refuses (exit 1, with the fix) a start that would silently run on TCP sockets.
    /// When the job must run on InfiniBand/RoCE (healthy HCAs and several nodes, or
    /// --expect-net ib), torchrun runs as a child: NCCL's init log is watched and a socket
    /// fallback stops the job with the reason (exit 1); signals are forwarded and torchrun's
    /// exit status is returned. Otherwise torchrun replaces ibwire (exec). NCCL_NET=IB is
    /// pinned where no net plugin is in play.
    ///
    /// Examples:
    ///   ibwire launch --dry-run -- train.py        the one command line that would run
    ///   ibwire launch --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 -- train.py
    #[command(verbatim_doc_comment)]
    Launch {
        #[command(flatten)]
        node: NodeArgs,
        #[command(flatten)]
        args: cmd::launch::Args,
    },
    /// Prove the job runs on InfiniBand with GPUDirect RDMA, and how close to the ceiling.
    ///
    /// Runs a short all-reduce the way `launch` would (all_reduce_perf when on PATH for one
    /// node, else examples/allreduce.py via torchrun) with NCCL_DEBUG=INFO, reads NCCL's log,
    /// and compares the transport with what this node should give and the bus bandwidth with
    /// the ceiling (NVLink in one node; healthy HCAs × link rate across nodes, and that
    /// × 2(n−1)/n for hierarchical algorithms). A log read with --from-log is judged by its
    /// own evidence, never by the machine that reads it: across nodes RDMA is expected unless
    /// --expect says otherwise, or --root/--snapshot gives the job's node.
    /// Exit 0 ok, 1 not ok, 2 bad usage or input, 3 inconclusive.
    ///
    /// Examples:
    ///   srun --ntasks-per-node=1 ibwire verify
    ///   ibwire verify --from-log nccl.log all_reduce_perf.out --json
    ///   ibwire verify --from-log slurm-1234.out --expect efa
    #[command(verbatim_doc_comment)]
    Verify {
        #[command(flatten)]
        node: NodeArgs,
        #[command(flatten)]
        args: cmd::verify::Args,
    },
    /// Lint the environment and the node: what matters, what harms, what does nothing, and the fix.
    ///
    /// Reads the environment and /etc/nccl.conf, ~/.nccl.conf or $NCCL_CONF_FILE (the
    /// environment wins, as in NCCL), and checks the node: device nodes for the healthy HCAs
    /// (inside a container, the usual reason NCCL silently uses sockets), rdma-core libraries,
    /// memlock, nvidia_peermem, GPU–HCA distance, link rates, PCIe link widths, ports.
    /// Exit 1 when any error is found.
    #[command(verbatim_doc_comment)]
    Doctor {
        #[command(flatten)]
        node: NodeArgs,
        #[command(flatten)]
        decide: DecideArgs,
        /// Print {"findings": [{"severity","subject","message","fix"}]} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Compare the nodes of a job and name the ones that differ from the rest.
    ///
    /// Reads one snapshot per node (probe --save or probe --json output, JSON or YAML; files,
    /// directories of them, or - for JSON documents on stdin), decides each node as `env`
    /// would, and compares what must agree across nodes: GPU count and model, NVIDIA driver,
    /// healthy HCA ports and NCCL_IB_HCA, link layer, port rates, RoCE interface MTU, narrowed
    /// PCIe links, the partition of the P_Key NCCL uses, the IB subnet prefix, HCA firmware,
    /// peer memory, memlock, the bootstrap interface's subnet. Only what differs is listed,
    /// nodes grouped by value (hostlist-compressed), with the effect and the fix. Exit 1 on any
    /// error-level difference or unreadable snapshot.
    ///
    /// Examples:
    ///   srun --ntasks-per-node=1 --output='fleet/%N.json' ibwire probe --json
    ///   ibwire fleet fleet/ --master-addr "$(scontrol show hostnames | head -n1)"
    ///   cat node*.json | ibwire fleet - --json
    #[command(verbatim_doc_comment)]
    Fleet {
        /// Snapshot files, directories of them, or - (JSON documents on standard input).
        #[arg(value_name = "SNAPSHOT|DIR|-", required = true)]
        inputs: Vec<PathBuf>,
        /// The rendezvous host: compare each node's route to it (else: the default route).
        #[arg(long, value_name = "HOST")]
        master_addr: Option<String>,
        /// Configuration file (hca.include/exclude, bootstrap_interface apply to every node).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print {"report": {...}, "input_errors": [...]} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Is this node fit for a multi-node job? For Slurm's HealthCheckProgram and NHC.
    ///
    /// Checks the node's rails (the HCA ports of the models NCCL takes): each ACTIVE with a
    /// unicast LID and a subnet manager (or a usable RoCE address), none slower or narrower
    /// than its peers, their /dev/infiniband nodes present; and, where /etc/ibwire.yaml has a
    /// `health:` section (`--learn` prints one from a good node), the healthy port count, link
    /// layer, rate and width, GPU count and model, a GPUDirect path and the memlock limit. A
    /// fact that cannot be read is a note on stderr, never a failure. Healthy: exit 0, silent.
    /// Unhealthy: exit 1 and one line on stdout naming the HCA, port or GPU and the fix. Exit 2
    /// on its own error (a broken configuration, scontrol failing, past --timeout), which
    /// drains nothing.
    ///
    /// With --drain (HealthCheckProgram=/usr/bin/ibwire-health, a link to the binary, does it)
    /// an unhealthy node is drained with the reason "ibwire: …", and a node ibwire drained is
    /// resumed once healthy; a drain for any other reason is never touched.
    ///
    /// Examples:
    ///   ibwire health                        check this node (silent when healthy)
    ///   ibwire health --learn >> /etc/ibwire.yaml     on a good node: its shape
    ///   ibwire health --root /tmp/tree --json         a captured node, as data
    ///   HealthCheckProgram=/usr/bin/ibwire-health     slurm.conf (with HealthCheckInterval)
    #[command(verbatim_doc_comment)]
    Health {
        #[command(flatten)]
        node: NodeArgs,
        #[command(flatten)]
        args: cmd::health::Args,
    },
    /// A CDI spec of the healthy HCAs, for podman, Docker, containerd, CRI-O and Kubernetes.
    ///
    /// Devices (kind ibwire.dev/hca): one per healthy HCA by name; `healthy`, every healthy HCA
    /// with the NCCL_IB_HCA of exactly that set; `all`, every RDMA device with a uverbs node
    /// and the same NCCL_IB_HCA. Each brings /dev/infiniband/rdma_cm. An unhealthy HCA (the
    /// LID-0 bond, a port down) is not offered, so asking for it fails the start. Only node
    /// facts: NCCL_SOCKET_IFNAME and the rest are for `launch` inside the container. umad/issm
    /// only with hook.mad. cdiVersion is the lowest the content needs (0.3.0; 0.5.0 for names
    /// starting with a digit), so podman 4.3 (Debian 12) reads it. Exit 1 when nothing can be
    /// offered (with --output, a spec left from before is removed).
    ///
    /// Examples:
    ///   ibwire cdi                                      print the spec (YAML)
    ///   ibwire cdi --output /var/run/cdi/ibwire.yaml    write it atomically (0644)
    ///   podman run --device ibwire.dev/hca=healthy IMAGE …
    #[command(verbatim_doc_comment)]
    Cdi {
        #[command(flatten)]
        node: NodeArgs,
        /// Output format.
        #[arg(long, value_enum, default_value = "yaml")]
        format: cmd::cdi::SpecFormat,
        /// The CDI kind (vendor.tld/class) the devices are requested by.
        #[arg(long, value_name = "KIND", default_value = ibwire::plan::cdi::DEFAULT_KIND)]
        kind: String,
        /// Write the spec to FILE atomically (temp file + rename, mode 0644) instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Configuration file (hca.include/exclude and hook.mad apply).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// The GPU↔NIC PCIe matrix (PIX/PXB/PHB/NODE/SYS) from sysfs, as nvidia-smi topo -m.
    ///
    /// Computed from the PCIe tree alone, so it works in containers without NVML and on
    /// captured trees. NVLink (NV#) cells come from nvidia-smi when it runs on a live node.
    /// Below the matrix: each GPU's nearest NIC, GPUs without GPUDirect RDMA under NCCL's
    /// default, NICs far from every GPU, and the node's layout.
    #[command(verbatim_doc_comment)]
    Topo {
        #[command(flatten)]
        node: NodeArgs,
        /// Also list physical network interfaces that are not RDMA devices.
        #[arg(long)]
        all_nics: bool,
        /// Also list SR-IOV virtual functions (by default only physical functions: a VF sits
        /// where its physical function does).
        #[arg(long)]
        all_functions: bool,
        /// Print {"gpus", "nics", "gpu_nic", "gpu_gpu", "nic_nic", "verdicts"} as JSON.
        #[arg(long)]
        json: bool,
        /// Do not ask nvidia-smi for NVLink counts.
        #[arg(long)]
        no_nvidia_smi: bool,
    },
    /// Print a shell completion script.
    ///
    /// Examples:
    ///   ibwire completions bash > /etc/bash_completion.d/ibwire
    ///   ibwire completions zsh > "${fpath[1]}/_ibwire"
    ///   ibwire completions fish > ~/.config/fish/completions/ibwire.fish
    #[command(verbatim_doc_comment)]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the manual pages: ibwire(1) and one per command (ibwire-env(1), …).
    ///
    /// Examples:
    ///   ibwire man --dir /usr/local/share/man/man1
    ///   ibwire man | man -l -
    #[command(verbatim_doc_comment)]
    Man {
        /// Write ibwire.1 and ibwire-COMMAND.1 into DIR (else ibwire.1 to standard output).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Args, Clone)]
struct DecideArgs {
    /// The rendezvous host; the bootstrap interface is the one that routes to it. Default:
    /// Slurm's first node, else MASTER_ADDR.
    #[arg(long, value_name = "HOST")]
    master_addr: Option<String>,
    /// Configuration file (after /etc/ibwire.yaml and ~/.config/ibwire.yaml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Pin the bootstrap interface (overrides the config's bootstrap_interface).
    #[arg(long, value_name = "IFACE")]
    bootstrap_if: Option<String>,
}

/// Help prose is written in the source wrapped for reading there; on a terminal clap wraps to
/// its width, so each paragraph is joined into one line first (a line already wrapped at 90
/// columns and wrapped again at 80 is ragged). Indented lines (examples, lists) stay as they are.
fn reflow(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prose = false; // the last line written is prose that a next prose line continues
    for line in text.lines() {
        let indented = line.starts_with(' ') || line.starts_with('\t') || line.starts_with("- ");
        if line.trim().is_empty() {
            out.push_str("\n\n");
            prose = false;
        } else if indented {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(line);
            out.push('\n');
            prose = false;
        } else if prose {
            out.push(' ');
            out.push_str(line.trim());
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(line.trim());
            prose = true;
        }
    }
    // blank-line runs made above collapse to one blank line
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    out.trim_end().to_string()
}

/// The whole command line interface, its help prose reflowed (`reflow`).
fn cli_command() -> clap::Command {
    fn fix(c: clap::Command) -> clap::Command {
        let long = c.get_long_about().map(|a| reflow(&a.to_string()));
        let c = match long {
            Some(l) => c.long_about(l),
            None => c,
        };
        c.mut_subcommands(fix)
    }
    let c = fix(<Cli as clap::CommandFactory>::command());
    // Piped (`| less`, `| grep`, a man page's source) help is 80 columns; on a terminal its
    // width, at most 100.
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        c
    } else {
        c.term_width(80)
    }
}

fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    // Reflowing every help text costs a third of `ibwire --version`: done only for help.
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    match Cli::try_parse_from(&args) {
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            let m = cli_command().try_get_matches_from(args)?;
            Cli::from_arg_matches(&m)
        }
        r => r,
    }
}

/// A hint for the argv mistakes people make most, which clap's own message does not explain.
fn argv_hint(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ErrorKind};
    let args: Vec<String> = std::env::args().collect();
    let sub = args.get(1).map(String::as_str).unwrap_or("");
    let bad = e.get(ContextKind::InvalidArg).map(|v| v.to_string()).unwrap_or_default();
    match (e.kind(), sub) {
        (ErrorKind::UnknownArgument, "launch") if !args.iter().any(|a| a == "--") => Some(format!(
            "the training script and its arguments go after `--`, so that their flags are not read as launch's: ibwire launch [OPTIONS] -- {} …",
            args.iter().skip(2).find(|a| !a.starts_with('-')).map(String::as_str).unwrap_or("train.py")
        )),
        (ErrorKind::UnknownArgument, "verify") if bad.ends_with(".log") || bad.ends_with(".txt") => {
            Some(format!("to read a log: ibwire verify --from-log {bad}"))
        }
        (ErrorKind::InvalidSubcommand, _) if sub == "run" || sub == "start" => {
            Some("to start a job: ibwire launch [OPTIONS] -- train.py".into())
        }
        _ => None,
    }
}

fn intent(d: &DecideArgs) -> Result<ibwire::plan::Intent> {
    cmd::env::intent(d.master_addr.as_deref(), d.config.as_deref(), d.bootstrap_if.as_deref())
}

fn source(n: &NodeArgs, nvidia_smi: bool) -> NodeSource {
    NodeSource { root: n.root.clone(), snapshot: n.snapshot.clone(), nvidia_smi, detail: Default::default() }
}

/// For commands that print decisions only (env, launch): the probe reads what decisions use,
/// as the hook's does (a property test holds the two to the same decisions); probe, doctor,
/// verify and topo show descriptive facts too and read them.
fn decision_source(n: &NodeArgs) -> NodeSource {
    NodeSource { detail: ibwire::probe::Detail::Hook, ..source(n, false) }
}

/// The enroot hook runs at every container start, often as root: nothing in the job's
/// environment may redirect it (IBWIRE_ROOT is a test and capture tool, honoured here only as
/// `--root`), and nothing may stop the start outside strict mode — argument errors and panics
/// included, which become one warning and exit 0.
///
/// `args` is the whole command line as `ibwire hook …` (the hooks.d link's is rewritten so).
fn hook_main(args: Vec<std::ffi::OsString>) -> ExitCode {
    // A few milliseconds of life: allocation from an arena (static_alloc.rs says why).
    #[cfg(target_env = "musl")]
    static_alloc::arena();
    std::env::remove_var("IBWIRE_ROOT");
    // The hook says an error in one line, never with a backtrace; but with RUST_BACKTRACE set
    // in the job's environment (enroot passes the caller's on), anyhow would capture one per
    // error all the same: 1.2 M instructions each in the static build, at every start that has
    // a warning. Unless the job asked for library backtraces itself. Nothing is started from
    // this process, and no other thread exists yet.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
    let strict_env = ibwire::config::truthy(std::env::var("IBWIRE_STRICT").ok().as_deref());
    // A crash (abort, stack overflow, a bad access) is one line and exit 0 (1 in strict mode),
    // as a panic is: enroot runs this binary itself when hooks.d holds a link to it.
    cmd::hook::guard_crashes(strict_env);
    let res = std::panic::catch_unwind(|| match hook_args(&args).map(Ok).unwrap_or_else(|| parse_from(args.clone())) {
        Ok(Cli { cmd: Cmd::Hook { node } }) => Ok(cmd::hook::run(&cmd::job_env(), &decision_source(&node.node_args()))),
        Ok(_) => Err("not the hook".to_string()),
        // `ibwire hook --help` is a person asking, not enroot starting a container.
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => {
            let _ = e.print();
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            Err(e.to_string().lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_string())
        }
    });
    let msg = match res {
        Ok(Ok(code)) => return code,
        Ok(Err(m)) => m,
        Err(_) => "internal error (panic)".to_string(),
    };
    use std::io::Write;
    let kind = if strict_env { "error" } else { "warning" };
    let _ = writeln!(std::io::stderr(), "ibwire-hook: {kind}: {msg}; the container starts without ibwire's settings");
    if strict_env {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `ibwire hook [--root DIR | --snapshot FILE]` parsed by the hook's own arguments alone: building
/// every subcommand's parser (what Cli::try_parse does) was a fifth of the hook's instructions
/// and most of the pages it touched. Anything else (--help, an error) goes the full way, so
/// messages stay the same.
fn hook_args(args: &[std::ffi::OsString]) -> Option<Cli> {
    use clap::FromArgMatches;
    // `ibwire hook` alone, as enroot runs it (hooks get no arguments): no parser at all. Building
    // even this one was 40 µs of a 1.8 ms hook, most of it first touches of clap's code pages.
    if args.len() == 2 {
        return Some(Cli { cmd: Cmd::Hook { node: JobNodeArgs { root: None, snapshot: None } } });
    }
    let cmd = <JobNodeArgs as clap::Args>::augment_args(clap::Command::new("hook"));
    let m = cmd.try_get_matches_from(args.iter().skip(1)).ok()?;
    Some(Cli { cmd: Cmd::Hook { node: JobNodeArgs::from_arg_matches(&m).ok()? } })
}

/// The TaskProlog: like the hook, nothing may make it fail a task. `args` is the whole
/// command line as `ibwire taskprolog …` (the `ibwire-taskprolog` link's is rewritten so).
fn taskprolog_main(args: Vec<std::ffi::OsString>) -> ExitCode {
    std::env::remove_var("IBWIRE_ROOT");
    match std::panic::catch_unwind(|| parse_from(args)) {
        Ok(Ok(Cli { cmd: Cmd::Taskprolog { node } })) => {
            cmd::taskprolog::run(&cmd::job_env(), &decision_source(&node.node_args()))
        }
        Ok(Ok(_)) => ExitCode::SUCCESS,
        // `--help` is a person asking, not slurmstepd starting a task.
        Ok(Err(e))
            if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) =>
        {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            use std::io::Write;
            let first =
                e.to_string().lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_string();
            let _ = writeln!(std::io::stderr(), "ibwire-taskprolog: error: {first}; nothing exported");
            ExitCode::SUCCESS
        }
        Err(_) => ExitCode::SUCCESS,
    }
}

impl Cmd {
    /// The command as typed, for the one error prefix `ibwire <command>: error:`.
    fn name(&self) -> &'static str {
        match self {
            Cmd::Probe { .. } => "probe",
            Cmd::Env { .. } => "env",
            Cmd::Hook { .. } => "hook",
            Cmd::Taskprolog { .. } => "taskprolog",
            Cmd::Launch { .. } => "launch",
            Cmd::Verify { .. } => "verify",
            Cmd::Doctor { .. } => "doctor",
            Cmd::Fleet { .. } => "fleet",
            Cmd::Health { .. } => "health",
            Cmd::Cdi { .. } => "cdi",
            Cmd::Topo { .. } => "topo",
            Cmd::Completions { .. } => "completions",
            Cmd::Man { .. } => "man",
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Probe { node, json, yaml, save, capture, no_nvidia_smi, all } => {
            let mut src = source(&node, !no_nvidia_smi);
            if all {
                src.detail = ibwire::probe::Detail::All;
            }
            cmd::probe::run(&src, capture.as_deref(), save.as_deref(), json, yaml)
        }
        Cmd::Doctor { node, decide, json } => {
            let n = source(&node, false).load()?;
            let root = node.root.clone().unwrap_or_else(|| PathBuf::from("/"));
            let (intent, unresolved) = cmd::env::intent_or_finding(
                decide.master_addr.as_deref(),
                decide.config.as_deref(),
                decide.bootstrap_if.as_deref(),
            )?;
            cmd::doctor::run(&n, &intent, &root, json, unresolved)
        }
        Cmd::Verify { node, args } => verify(&node, &args),
        Cmd::Launch { node, args } => launch(&node, &args),
        Cmd::Completions { shell } => {
            let mut c = cli_command();
            clap_complete::generate(shell, &mut c, "ibwire", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Man { dir } => cmd::man::run(&cli_command(), dir.as_deref()),
        Cmd::Hook { .. } => unreachable!("dispatched by hook_main"),
        Cmd::Taskprolog { .. } => unreachable!("dispatched by taskprolog_main"),
        Cmd::Topo { node, all_nics, all_functions, json, no_nvidia_smi } => {
            topo(&source(&node, !no_nvidia_smi), all_nics, all_functions, json)
        }
        Cmd::Cdi { node, format, kind, output, config } => {
            let n = source(&node, false).load()?;
            cmd::cdi::run(&n, config.as_deref(), &kind, format, output.as_deref())
        }
        Cmd::Health { node, args } => cmd::health::run(&source(&node, false), &args),
        Cmd::Fleet { inputs, master_addr, config, json } => {
            cmd::fleet::run(&inputs, master_addr.as_deref(), config.as_deref(), json)
        }
        Cmd::Env { node, decide, format, explain } => {
            let n = decision_source(&node).load()?;
            cmd::env::run(&n, &intent(&decide)?, format, explain)
        }
    }
}

/// `ibwire verify`. Live, nvidia-smi gives the NVLink counts the intra-node ceiling needs; a
/// log is judged by its own evidence: the machine that reads it (a login node, a laptop) says
/// nothing about the one that wrote it.
fn verify(node: &NodeArgs, args: &cmd::verify::Args) -> Result<ExitCode> {
    let given = node.root.is_some() || node.snapshot.is_some();
    if !given && !args.from_log.is_empty() {
        return cmd::verify::run(None, args);
    }
    let live = !given && args.from_log.is_empty();
    cmd::verify::run(Some(&source(node, live).load()?), args)
}

/// `ibwire launch`: the node decided as the hook decides it, named for the watch's verdict.
fn launch(node: &NodeArgs, args: &cmd::launch::Args) -> Result<ExitCode> {
    let mut n = decision_source(node).load()?;
    if n.hostname.is_none() && node.snapshot.is_none() {
        // The decision probe does not read the host name.
        let root = node.root.clone().unwrap_or_else(|| PathBuf::from("/"));
        n.hostname = ibwire::probe::host::hostname(&ibwire::probe::sysroot::SysRoot::new(&root));
    }
    cmd::launch::run(&n, args)
}

/// `ibwire topo`: the GPU↔NIC matrix, text or JSON.
fn topo(src: &NodeSource, all_nics: bool, all_functions: bool, json: bool) -> Result<ExitCode> {
    let n = src.load()?;
    let m = ibwire::plan::topo::matrix(&n, all_nics, all_functions);
    if json {
        println!("{}", serde_json::to_string_pretty(&cmd::topo::json(&m))?);
    } else {
        print!("{}", ibwire::text::for_terminal(&cmd::topo::text(&n, &m)));
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    #[cfg(target_env = "musl")]
    static_alloc::fork_safe();
    // `IBWIRE_ROOT=` (set, empty) means unset, not "a directory named ''".
    if std::env::var_os("IBWIRE_ROOT").is_some_and(|v| v.is_empty()) {
        std::env::remove_var("IBWIRE_ROOT");
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == "hook") {
        return hook_main(std::env::args_os().collect());
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == "taskprolog") {
        return taskprolog_main(std::env::args_os().collect());
    }
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let called = Path::new(&argv0).file_name().unwrap_or_default();
    let as_cmd = |c: &str| -> Vec<std::ffi::OsString> {
        ["ibwire".into(), c.into()].into_iter().chain(std::env::args_os().skip(1)).collect()
    };
    // Installed as a link in enroot's hooks.d (any name ending in .sh, the only files enroot
    // runs there), it is the hook itself: enroot runs it with no arguments. No shell in
    // between: a sh wrapper cost more than the hook's own work (docs/performance.md).
    if called.as_encoded_bytes().ends_with(b".sh") {
        return hook_main(as_cmd("hook"));
    }
    // Installed as a link named ibwire-taskprolog, it is the TaskProlog itself: slurm.conf's
    // TaskProlog= takes a program without arguments (a person may give it --help).
    if called == "ibwire-taskprolog" {
        return taskprolog_main(as_cmd("taskprolog"));
    }
    // Installed as a link named ibwire-health, it is slurm.conf's HealthCheckProgram (which
    // takes no arguments): `ibwire health --drain`.
    let argv: Vec<std::ffi::OsString> = if called == "ibwire-health" {
        let mut v = as_cmd("health");
        v.insert(2, "--drain".into());
        v
    } else {
        std::env::args_os().collect()
    };
    // Output into a closed pipe (`ibwire probe --json | head`) ends the process quietly, as
    // for any Unix filter, instead of a panic on EPIPE.
    // SAFETY: restoring the default disposition before any other thread exists.
    unsafe {
        nix::libc::signal(nix::libc::SIGPIPE, nix::libc::SIG_DFL);
    }
    let cli = parse_from(argv).unwrap_or_else(|e| {
        let _ = e.print();
        if let Some(tip) = argv_hint(&e) {
            eprintln!("\n  tip: {tip}");
        }
        std::process::exit(e.exit_code())
    });
    let name = cli.cmd.name();
    match run(cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ibwire {name}: error: {}", ibwire::text::for_terminal(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}
