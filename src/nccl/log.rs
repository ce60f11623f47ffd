//! Facts from an `NCCL_DEBUG=INFO` log: the network NCCL chose, the HCAs and OOB interface it
//! listed, the bootstrap interface, the transport of every channel, GPUDirect RDMA, how many
//! nodes the job spans (by NCCL's own `nNodes`, ranks, hosts and peers), and every failure line
//! in NCCL's or a framework's words, classified (`Failure`). Read one line at a time
//! ([`Analyser`]): a log of any size in bounded memory.
//!
//! The wordings come from NCCL's sources (`misc/ibvwrap.cc`, `transport/net_ib/*.cc`,
//! `misc/socket.cc`, `os/linux.cc`, `bootstrap.cc`, `plugin/net.cc`, `init.cc`) and from logs
//! posted in public threads (`tests/fixtures/verify-corpus/SOURCES.md`), old and new forms.

use super::clean;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A prebuilt searcher per literal, made once per call site (a `static`): the search itself is
/// all that a call costs.
macro_rules! finder {
    ($pat:literal) => {{
        static F: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
        F.get_or_init(|| memchr::memmem::Finder::new($pat))
    }};
}

/// The bit of a GATE literal in [`gate_mask`]'s mask (a literal not in GATE panics in the tests).
macro_rules! gbit {
    ($lit:literal) => {{
        // Worked out when compiling: a literal the gate does not hold fails the build.
        const B: u64 = 1u64 << gate_pos($lit);
        B
    }};
}

/// The index of `lit` in [`GATE`], at compile time.
const fn gate_pos(lit: &str) -> usize {
    let mut i = 0;
    while i < GATE.len() {
        let (a, b) = (GATE[i].as_bytes(), lit.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("a literal that is not in GATE")
}

/// `find(l, "lit")` with the call site's own searcher.
macro_rules! find {
    ($l:expr, $pat:literal) => {
        finder!($pat).find($l.as_bytes())
    };
}

/// `has(l, "lit")`.
macro_rules! has {
    ($l:expr, $pat:literal) => {
        find!($l, $pat).is_some()
    };
}

/// The GATE entries `lit` holds, as mask bits (none: 0).
fn held_bits(lit: &str) -> u64 {
    GATE.iter().enumerate().filter(|(_, g)| lit.contains(*g)).fold(0, |m, (i, _)| m | 1 << i)
}

/// `has!` where the gate's mask `m` of the text is known: a literal whose GATE entries are not
/// all in `m` cannot be there, and is not searched for.
macro_rules! hasm {
    ($l:expr, $m:expr, $pat:literal) => {{
        static B: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let b = *B.get_or_init(|| held_bits($pat));
        $m & b == b && has!($l, $pat)
    }};
}

/// `after!` with the gate's mask, as [`hasm!`].
macro_rules! afterm {
    ($l:expr, $m:expr, $pat:literal) => {{
        static B: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let b = *B.get_or_init(|| held_bits($pat));
        if $m & b == b {
            after!($l, $pat)
        } else {
            None
        }
    }};
}

/// `after(l, "lit")`: the text after the first `lit`.
macro_rules! after {
    ($l:expr, $pat:literal) => {{
        let l: &str = $l;
        find!(l, $pat).map(|i| &l[i + $pat.len()..])
    }};
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IbDev {
    pub index: u32,
    pub name: String,
    pub port: u32,
    /// `IB` or `RoCE`.
    pub link: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Channels {
    pub net_ib: usize,
    pub net_ib_gdr: usize,
    pub net_socket: usize,
    pub net_other: usize,
    pub p2p: usize,
    pub shm: usize,
    pub other: usize,
}

/// What a failure line says happened, in NCCL's terms. The verdict turns each into a cause with
/// its fix (`plan::verify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// `ibv_modify_qp` → EINVAL: a LID-0 InfiniBand port (the bond) or a wrong RoCE GID index.
    QpInvalid,
    /// `ibv_modify_qp` → ENETUNREACH/EHOSTUNREACH: no route between the two ports' GIDs.
    QpUnreachable,
    /// `ibv_modify_qp` → ETIMEDOUT: the two NICs cannot reach each other.
    QpTimeout,
    /// `ibv_modify_qp` → ENODEV: the device or port went away.
    QpNoDevice,
    /// `ibv_modify_qp` with another errno.
    QpOther,
    /// Completion status 12/13 (IBV_WC_RETRY_EXC_ERR, RNR): the peer stopped answering.
    RetryExceeded,
    /// Completion status 4 (IBV_WC_LOC_PROT_ERR): with GPUDirect, PCIe ACS or the IOMMU.
    LocalProtection,
    /// Any other completion error (5 = flushed, after an earlier error).
    CompletionError,
    /// `ibv_reg_mr`/`ibv_create_*`/`ibv_alloc_pd` failed: memlock limit or resources.
    IbvResource,
    /// An HCA NCCL listed could not be opened: ibvwrap's `Call to ibv_open_device failed`,
    /// net_ib's `NET/IB : Unable to open device %s` (its uverbs node not accessible).
    IbOpenFailed,
    /// An asynchronous fatal event on an HCA port.
    IbvFatalEvent,
    /// NET/IB devices of different link layers connected or merged.
    IncompatibleDevices,
    /// `Failed to initialize any NET plugin`: no network at all.
    NoNetPlugin,
    /// No bootstrap interface: `Bootstrap : no socket interface found`, `no device found
    /// matching`, `No usable listening interface`, 2.27's garbage address family.
    NoSocketInterface,
    /// `NET/IB : No IP interface found.`: the IB transport has no OOB interface.
    NoOobInterface,
    /// A TCP connection (bootstrap or proxy) could not be made.
    SocketConnect,
    /// A peer closed or reset its connection; `ncclRemoteError`.
    RemoteExit,
    /// The framework's watchdog: a collective ran past its timeout.
    CollectiveTimeout,
    /// PyTorch's heartbeat monitor found ProcessGroupNCCL's watchdog thread itself stuck (a CUDA
    /// or NCCL call that did not return) and ends the process.
    WatchdogStuck,
    /// `Duplicate GPU detected`, `Multiple Ranks are using the same GPU`.
    DuplicateGpu,
    /// The process saw no GPU: c10's `No CUDA GPUs are available`, CUDA's `no CUDA-capable
    /// device is detected` (cudaErrorNoDevice), `ProcessGroupNCCL is only supported with GPUs`.
    NoGpu,
    /// Ranks ran different collectives: PyTorch's `Detected mismatch between collectives on
    /// ranks` (TORCH_DISTRIBUTED_DEBUG=DETAIL), NCCL's `collective mismatch error` and its
    /// socket transport's `message truncated` (sizes or NCCL_PROTO/NCCL_ALGO differ between ranks).
    CollectiveMismatch,
    /// `Cuda failure '…'`.
    CudaFailure,
    /// The GPU driver's kernel log line `NVRM: Xid (PCI:<bus>): <n>, …` (a dmesg pasted with
    /// the job's output): code, the Xid.
    GpuXid,
    /// slurmstepd's `*** JOB|STEP … CANCELLED AT … DUE TO TIME LIMIT|NODE FAILURE… ***` and
    /// `Detected N oom-kill event(s)`: Slurm stopped the job (code: 1 time limit, 2 node
    /// failure, 3 the cgroup's OOM killer).
    SlurmStopped,
    /// `Got async event : port error` (and `port active` again): a link that went down.
    PortError,
    /// RoCE GID table unreadable (`read failed in ncclIbRoceGetVersionNum`, `ncclIbGetGidIndex`):
    /// a macvlan/SR-IOV netdev without the GID attributes NCCL reads.
    RoceGid,
    /// The libfabric (EFA) plugin found no provider: `fi_getinfo() call failed`, no EFA device
    /// in the container.
    OfiNoDevice,
    /// `Unable to insert remote address into address vector`, CQ errors: EFA peers cannot talk
    /// (security group, subnet).
    OfiPeer,
    /// Libfabric could not allocate memory (`Libfabric error: (-12) Cannot allocate memory`): on
    /// EFA the locked-memory limit, too low for the buffers the provider registers.
    OfiNoMemory,
    /// The EFA provider aborted the process (`Libfabric EFA provider has encountered an internal
    /// error:` … `EFA internal error: (N) …` … `Your application will now abort().`).
    OfiAbort,
    /// libfabric's EFA provider stopped the process at its start over FI_EFA_USE_DEVICE_RDMA:
    /// set to 1 on a device without RDMA read, or to a value that is no boolean (prov/efa,
    /// `efa_env_...`/`rxr_env` readers: `fprintf(stderr, …); abort();`).
    EfaDeviceRdma,
    /// A net plugin library that is there but could not be loaded (its dlerror: a symbol version
    /// the node's libfabric or glibc lacks, a missing dependency, a truncated file): NCCL goes
    /// on with its internal network, without the fabric the plugin brings.
    NetPluginBroken,
    /// SHARP/CollNet could not start (`Cannot create SHARP job`, `Failed to lock SAT tree`,
    /// `Cannot initialize CollNet, using point-to-point network instead`).
    CollNet,
    /// A topology file NCCL (or a plugin) loaded does not fit this machine.
    TopologyFile,
    /// A segmentation fault or abort inside the job (`Caught signal 11`), or a worker that
    /// torchrun saw die of a signal (`Signal 8 (SIGFPE) received by PID …`; code: the signal).
    Crash,
    /// torchrun's report that a worker exited with a non-zero code (`failed (exitcode: 4)
    /// local_rank: 1 (pid: …) of binary: …`; code: the exit code): the job failed, and the
    /// worker's own output says why, not NCCL's.
    WorkerExit,
    /// The launcher's rendezvous failed before NCCL started (PyTorch's TCPStore, torchrun's
    /// rendezvous; code: 1 the port is taken, 2 the store cannot be reached, 3 not every rank
    /// joined the store, 4 torchrun's rendezvous timed out or closed).
    Rendezvous,
    /// The NCCL library itself did not load: TensorFlow/XLA's NCCL stub (`Unable to load NCCL
    /// library. Multi-GPU collectives will not work.`), `libnccl.so.2: cannot open shared
    /// object file` (the loader, through Python's ImportError/OSError).
    NcclNotLoaded,
    /// NCCL returned an error with no more specific line in the log.
    NcclError,
    /// A WARN of NCCL's that no specific reader knows but NCCL's sources classify
    /// (`warns.tsv`): its class says what it means.
    NcclWarning,
    /// A WARN of NCCL's that no rule knows (neither a failure nor known to be harmless).
    UnknownWarning,
}

/// The first line of each kind of failure, and how often that kind was seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureSeen {
    pub kind: Failure,
    /// The line as NCCL wrote it (prefix removed, clipped to 300 characters).
    pub line: String,
    pub count: usize,
    /// errno for `ibv_modify_qp`, status for completion errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor_err: Option<i64>,
    /// For an `NcclWarning`: every process that printed it (`host:pid`) completed its init
    /// after it (`Init COMPLETE`, `Connected all rings/trees`): NCCL went on, so it is not what
    /// failed. For a `GpuXid`: an Xid of no consequence to a job, or in a log that shows no
    /// failure of the job ([`Analyser::finish`]): a note, not what failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub init_completed_after: bool,
    /// For a WARN known from NCCL's sources only (`NcclWarning`, `UnknownWarning`): its class
    /// in `warns.tsv` and the releases that print it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The log's line (of those read, blank ones aside) where it was first seen: the order of
    /// events (failures are listed by kind).
    #[serde(skip)]
    pub at: usize,
}

/// A host's `Bootstrap : Using <interface>:<address><0>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BootstrapOn {
    pub address: String,
    pub interface: String,
    pub host: String,
}

/// One node's view, for a log that several nodes wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostView {
    pub networks: BTreeSet<String>,
    pub ib_ports: usize,
    pub no_device: bool,
    /// Inter-node receive channels with and without `/GDRDMA`.
    pub recv_gdr: usize,
    pub recv_plain: usize,
    pub gdr_disabled: bool,
    /// Net plugin: bit 1 an external one loaded, bit 2 NCCL's internal one.
    #[serde(default)]
    pub net_plugin: u8,
    /// Channels over a network (sent or received): this host connected to another.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub net_channels: usize,
}

impl HostView {
    /// The view with one plugin's names as one network ([`one_plugin_one_network`]).
    fn settled((host, mut v): (String, HostView)) -> (String, HostView) {
        one_plugin_one_network(&mut v.networks, &BTreeSet::new());
        (host, v)
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogFacts {
    pub version: Option<String>,
    /// `IB`, `Socket`, `IBext_v8`, `AWS Libfabric`…; `mixed` when ranks disagree.
    pub network: Option<String>,
    pub networks_seen: Vec<String>,
    pub ib_devices: Vec<IbDev>,
    /// The port speeds (Mb/s) NCCL printed for its IB devices, each once, over every host
    /// (2.27+, NCCL_DEBUG_SUBSYS with NET: `NET/IB: [0] mlx5_0:uverbs0:1/IB provider=Mlx5
    /// speed=400000 …`, the port's active rate), at most eight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ib_port_speeds_mbps: Vec<u32>,
    /// Every device of `NET/IB : Using` had such a line.
    #[serde(default)]
    pub ib_speeds_cover_devices: bool,
    /// graph/xml.cc's `Could not open XML topology file %s : %s` / `Unable to open %s, not
    /// dumping topology.`: NCCL went on without the file (class `topo-file-skipped`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topo_file_skipped: Option<String>,
    pub ib_no_device: bool,
    pub oob_if: Option<String>,
    pub bootstrap_ifs: Vec<String>,
    /// The addresses NCCL bootstrapped on (`Bootstrap : Using lo:127.0.0.1<0>` → `127.0.0.1`).
    #[serde(default)]
    pub bootstrap_addrs: Vec<String>,
    /// vLLM's or SGLang's pynccl wrapper could not load the NCCL library at this path (`Failed to
    /// load NCCL library from %s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pynccl_unloaded: Option<String>,
    /// The hosts that printed a net plugin's load error ([`plugin_load_error`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugin_broken_on: Vec<String>,
    /// A `Cuda failure` WARN from NCCL's NVLS transport (`transport/nvls.cc:`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nvls_cuda_failure: bool,
    /// The line (of those read, blank ones aside) of the last slowness report of a net plugin
    /// (warns.tsv class `tcpx-stall`); 0: none.
    #[serde(skip)]
    pub last_stall_at: usize,
    /// Who bootstrapped on each address, each address once (where the line names its host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bootstrap_on: Vec<BootstrapOn>,
    /// The first address two hosts bootstrapped on (`Bootstrap : Using eth0:172.17.0.2<0>` on
    /// both): with the hosts, `10.79.0.1` and `["a", "b"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_bootstrap: Option<(String, Vec<String>)>,
    pub socket_ifs: Vec<String>,
    /// `NCCL_*` variables NCCL reported as set by the environment (the first value of each).
    pub env_set: Vec<(String, String)>,
    /// Further values of `env_set`'s variables where processes set one differently (each once,
    /// compared without case as NCCL's parsers do; at most 3 per variable, 64 in all;
    /// NCCL_HOSTID, different on every node by design, left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_more: Vec<(String, String)>,
    /// Variables a network plugin put in the environment itself (aws-ofi-nccl's `NET/OFI Adding
    /// NCCL_PROTO=simple to environment`, older `NET/OFI Setting NCCL_PROTO to "simple"`): NCCL
    /// then reports them as set by the environment, though the job did not set them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_by_plugin: Vec<String>,
    pub channels: Channels,
    /// The transport of NET channels that are neither IB nor Socket (`NET/AWS Libfabric/0` →
    /// `AWS Libfabric`, `NET/IBext_v8/1` → `IBext_v8`).
    #[serde(default)]
    pub net_other_name: Option<String>,
    /// Some(true) when inter-node channels carry `/GDRDMA`, Some(false) when they do not (or
    /// NCCL said "GPU Direct RDMA Disabled" for an HCA), None when no network channel was logged.
    pub gdr: Option<bool>,
    /// NCCL's `Connected all rings, use ring PXN %d GDR %d` (transport/generic.cc, 2.24+): its
    /// GDR is every rank's ring connections over the network ANDed by an allgather (where local
    /// or graph registration is on, the default): Some(false) if any such line says 0,
    /// Some(true) if every one says 1 and one came after an RDMA channel line, else None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_gdr: Option<bool>,
    /// Inter-node receive channels with `/GDRDMA` and without it: both non-zero means GPUDirect
    /// on some ranks only (a receive uses GPUDirect whenever the node can).
    #[serde(default)]
    pub recv_gdr: usize,
    #[serde(default)]
    pub recv_plain: usize,
    /// HCAs NCCL said GPU Direct RDMA is disabled for.
    #[serde(default)]
    pub gdr_disabled_hcas: Vec<String>,
    /// NCCL said an HCA can do GPU Direct RDMA (`… Enabled for HCA`, `(DMABUF) enabled`).
    #[serde(default)]
    pub gdr_hca_capable: bool,
    pub warns: Vec<String>,
    /// WARN lines beyond the ones kept (distinct lines are kept up to a bound).
    #[serde(default)]
    pub warns_dropped: usize,
    /// errno of failed `ibv_modify_qp` calls (22 EINVAL, 110 ETIMEDOUT, 19 ENODEV, 101, 113).
    pub modify_qp_errnos: Vec<i32>,
    /// The largest `nranks`/`nRanks` NCCL reported.
    pub nranks: Option<usize>,
    /// `nNodes` from NCCL's own comm line (2.19+).
    #[serde(default)]
    pub nnodes: Option<usize>,
    /// `localRanks` (ranks on one node) from the same line.
    #[serde(default)]
    pub local_ranks: Option<usize>,
    /// `MNNVL %d` from the same line (init.cc, 2.24+): whether a communicator used multi-node
    /// NVLink (any that did makes it true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mnnvl: Option<bool>,
    /// PyTorch's TCPStore lost its server: `recvValueWithTimeout failed on SocketImpl(…):
    /// Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server
    /// shutdown or crash?` (c10d TCPStore.cpp, 2.8+): the store's `host:port` as its `remote=[…]`
    /// gives it, else the line, clipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_closed: Option<String>,
    /// The largest `nranks` of a communicator made by `ncclCommInitAll`: one process holds all
    /// of its ranks, so they are on one node.
    #[serde(default)]
    pub init_all_nranks: Option<usize>,
    /// nccl-tests' `# Using devices` table: its ranks and the hosts they are on (the table lists
    /// every rank of the job). Set by the reader of nccl-tests' output (`cmd::verify`).
    #[serde(default)]
    pub rank_table: Option<(usize, usize)>,
    /// Each process ran a job of its own: nccl-tests' output says so (set by `cmd::verify`), or
    /// NCCL's rings hold one rank on each of several hosts.
    #[serde(default)]
    pub separate_runs: Option<String>,
    /// The longest ring NCCL printed (`Channel 00/32 :    0 1 2 3`: 4).
    #[serde(default)]
    pub ring_max: Option<usize>,
    /// How many distinct ranks of the largest communicator (`rank R nranks N`) wrote lines
    /// with a `host:pid:tid` prefix.
    #[serde(default)]
    pub ranks_seen: usize,
    /// The highest CUDA device index seen in line prefixes, plus one.
    #[serde(default)]
    pub cuda_devs: usize,
    /// A remote peer showed itself: a queue pair to a peer, a completion from a peer, a socket
    /// to a peer's address.
    #[serde(default)]
    pub remote_peer: bool,
    pub hosts: Vec<String>,
    /// NCCL error results and their "Last error" text (ncclInternalError, unhandled system error…).
    pub errors: Vec<String>,
    #[serde(default)]
    pub failures: Vec<FailureSeen>,
    /// `Failed to open libibverbs.so[.1]` (INFO since 2.19, WARN before), `Could not open`.
    #[serde(default)]
    pub ibverbs_missing: bool,
    /// `libibverbs: Warning: couldn't load driver '<name>'`: the verbs provider is missing.
    #[serde(default)]
    pub provider_missing: Vec<String>,
    /// `NCCL_NET_PLUGIN` could not be loaded (an external plugin named but absent).
    #[serde(default)]
    pub plugin_missing: bool,
    /// A net plugin NCCL loaded and rejected (`External network plugin … is unsupported`).
    #[serde(default)]
    pub plugin_rejected: bool,
    /// Nodes that loaded an external net plugin and nodes on NCCL's internal one, in one job:
    /// `HGX-04 loads a net plugin; HGX-11 uses NCCL's internal one`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_plugin_split: Option<String>,
    /// NCCL initialised its Socket transport, and whether it tried an RDMA one at all.
    #[serde(default)]
    pub socket_initialized: bool,
    #[serde(default)]
    pub rdma_tried: bool,
    /// Lines that show NCCL finished setting a communicator up (`Init COMPLETE`, `Connected
    /// all rings`/`trees`): without one an excerpt of channel lines proves the path, not the job.
    #[serde(default)]
    pub init_complete: usize,
    /// `Init COMPLETE` lines (and `Init timings`, `Destroy COMPLETE`, printed only after a
    /// finished init): `Connected all rings/trees` comes before the end of the init.
    #[serde(default)]
    pub init_done: usize,
    /// An NCCL return-code trace with an error (`file:line -> N`) after a WARN no rule knows:
    /// the warning was an error the call returned.
    #[serde(default)]
    pub error_after_unknown_warning: bool,
    /// NCCL set up NVLink SHARP (its INFO lines say so).
    #[serde(default)]
    pub nvls_used: bool,
    pub lines: usize,
    /// Lines that are NCCL's or carry its words (`NCCL INFO`/`NCCL WARN`, channel lines,
    /// relayed warnings, framework NCCL errors): zero means this is not NCCL's output.
    #[serde(default)]
    pub nccl_lines: usize,
    /// The first line, before any of NCCL's own, that names NCCL as a program's output does (a
    /// framework's test or traceback; not prose, a script or binary data): the input is about
    /// NCCL, thin, not "not a log".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names_nccl: Option<String>,
    /// The last line of PyTorch's launcher or c10d (`W… torch/distributed/run.py:851]`,
    /// `WARNING:torch.distributed.run:`, `[W… socket.cpp:207] [c10d]`) while no line of NCCL's had come: a distributed job's log
    /// that stopped before NCCL's (or ran without NCCL_DEBUG) is thin, not "not a log".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
    /// The node count a launcher's command or report states, before NCCL's first line
    /// ([`launcher_nodes`], settled by [`settled_launcher_nodes`]): the count and the words
    /// that state it. None where lines disagree or a count is over the allocation's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher_nodes: Option<(usize, String)>,
    /// The first Python exception a worker raised (`[rank0]: ValueError: …`), torchrun's own
    /// `ChildFailedError` aside: what a worker's non-zero exit was, where NCCL's lines say nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    /// aws-ofi-nccl turned GPUDirect RDMA off: `NET/OFI Could not disable CUDA API usage for
    /// HMEM, disabling GDR`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ofi_gdr_off: bool,
    /// The libfabric provider aws-ofi-nccl selected (`Selected provider is efa, …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ofi_provider: Option<String>,
    /// Per host (only lines with a `host:pid:tid` prefix), for logs several nodes wrote.
    #[serde(default, skip_serializing)]
    pub per_host: BTreeMap<String, HostView>,
}

impl LogFacts {
    /// A net plugin's slowness reports (`tcpx-stall`) that an nccl-tests run finished after
    /// (`done_at`: the line of its last bounds check or summary, counted as `lines` is): the
    /// plugin waited and then went on, as a warning that an init completed after.
    pub fn stalls_passed_by(&mut self, done_at: usize) {
        if self.last_stall_at == 0 || done_at <= self.last_stall_at {
            return;
        }
        for x in self.failures.iter_mut() {
            if x.kind == Failure::NcclWarning && x.class.as_deref() == Some("tcpx-stall") {
                x.init_completed_after = true;
            }
        }
    }

    /// The network NCCL used: its own word, else what the channel lines show.
    pub fn observed(&self) -> Option<String> {
        self.network.clone().or_else(|| {
            let c = &self.channels;
            if c.net_ib > 0 {
                Some("IB".into())
            } else if c.net_socket > 0 {
                Some("Socket".into())
            } else if c.net_other > 0 {
                Some(self.net_other_name.clone().unwrap_or_else(|| "NET".into()))
            } else {
                None
            }
        })
    }
    /// RDMA: any network starting with IB (internal plugin, IBext) or libfabric/OFI (EFA), or
    /// an external net plugin ibwire does not know (`Loaded net plugin Mesh`, `GPUDirectTCPX`):
    /// the fabric the job chose for itself, judged by its own channels (GPUDirect or not),
    /// never as NCCL's TCP sockets.
    pub fn on_rdma(&self) -> bool {
        !self.ofi_tcp() && self.observed().is_some_and(|n| rdma_network(&n))
    }
    /// aws-ofi-nccl runs on one of libfabric's TCP providers (`sockets`, `tcp`, `udp`, `tcp;ofi_rxm`):
    /// older plugins took any provider when EFA was missing (review 4).
    pub fn ofi_tcp(&self) -> bool {
        self.ofi_provider.as_deref().is_some_and(|p| {
            let base = p.split(';').next().unwrap_or(p);
            matches!(base, "sockets" | "tcp" | "udp")
        })
    }
    /// Inter-node channels were logged: the job spans nodes whatever the excerpt's hosts.
    pub fn crossed_network(&self) -> bool {
        let c = &self.channels;
        c.net_ib + c.net_socket + c.net_other > 0
    }
    /// NVLink SHARP was turned off (NCCL_NVLS_ENABLE=0).
    pub fn nvls_off(&self) -> bool {
        self.env("NCCL_NVLS_ENABLE") == Some("0")
    }
    pub fn env(&self, k: &str) -> Option<&str> {
        self.env_set.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
    pub fn failed(&self, k: Failure) -> Option<&FailureSeen> {
        self.failures.iter().find(|f| f.kind == k)
    }
    /// GPUDirect on some ranks and not on others: a receive without `/GDRDMA` (a receive uses
    /// GPUDirect whenever its node can) beside any network channel with it.
    pub fn gdr_partial(&self) -> bool {
        self.recv_plain > 0 && self.channels.net_ib_gdr > 0
    }
}

/// TCP: NCCL's Socket transport and the TCP plugins that stage through host memory (Google's
/// FastSocket). Not Google's GPUDirect-TCPX (`Using network GPUDirectTCPX_v7`, A3 High) and
/// TCPXO (`NET/FasTrak`, A3 Mega): their NICs move data to and from GPU memory, the fabric those
/// machines are built for (3.5× the gVNIC socket path in the practitioners' measurements), judged
/// like any RDMA plugin by their own channels.
pub fn is_tcp_name(n: &str) -> bool {
    has!(n, "Socket") || (has!(n, "TCP") && !is_gpudirect_tcp(n))
}

/// Google's GPUDirect-TCPX/TCPXO plugins, by the network names they register.
pub fn is_gpudirect_tcp(n: &str) -> bool {
    n.starts_with("GPUDirectTCPX") || n.starts_with("FasTrak")
}

/// A network name of the RDMA kind [`LogFacts::on_rdma`] means: IB, libfabric, or an external
/// plugin that is not TCP (`mixed` is several).
pub fn rdma_network(n: &str) -> bool {
    is_rdma_name(n) || (!is_tcp_name(n) && n != "mixed")
}

pub fn is_rdma_name(n: &str) -> bool {
    n.starts_with("IB") || has!(n, "Libfabric") || has!(n, "OFI") || n.starts_with("NET/IB")
}

/// `name:ip<port>` → `name`.
fn if_name(s: &str) -> String {
    s.split(':').next().unwrap_or("").trim().to_string()
}

fn clip(s: &str, n: usize) -> String {
    crate::text::clip_to(s.trim(), n)
}

/// The first ` [` in `l` (memchr for the rarer `[`).
fn space_bracket(l: &str) -> Option<usize> {
    let b = l.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'[', &b[from..]) {
        let at = from + i;
        if at > 0 && b[at - 1] == b' ' {
            return Some(at - 1);
        }
        from = at + 1;
    }
    None
}

/// The host of `host:pid:tid`.
fn host_head(head: &str) -> Option<&str> {
    // From the end: digits (tid), ':', digits (pid), ':', then the host (itself maybe with ':').
    let b = head.as_bytes();
    let mut i = b.len();
    for _ in 0..2 {
        let digits = b[..i].iter().rev().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || i == digits || b[i - digits - 1] != b':' {
            return None;
        }
        i -= digits + 1;
    }
    let host = &head[..i];
    (!host.is_empty() && memchr::memchr(b' ', host.as_bytes()).is_none()).then_some(host)
}

/// NCCL's own prefix as debug.cc prints it, `host:pid:tid [dev] `, at the start of a line, each
/// part in its place (a host without ' ' or ':', digits): the bulk of a log, read in one pass
/// where [`space_bracket`], [`host_head`], `host:pid`'s and the device's searches each scanned
/// the line: [`super::host_pid_tid`] (what `unwrap_line_fast` asks of a line as it comes), then
/// the device. (The tag's own search, one byte search for 'N', costs less than this pass.)
struct Head {
    /// The host's end (its ':'), the pid's end, the ` [` (its space), past the `] `.
    host: usize,
    pid: usize,
    bracket: usize,
    after: usize,
}

fn nccl_head(l: &str) -> Option<Head> {
    let b = l.as_bytes();
    let (host, pid, bracket) = super::host_pid_tid(b)?;
    let dev = b[bracket + 2..].iter().take_while(|c| c.is_ascii_digit()).count();
    let close = bracket + 2 + dev;
    (dev > 0 && b.get(close..close + 2) == Some(b"] ")).then_some(Head { host, pid, bracket, after: close + 2 })
}

/// `NCCL INFO`/`NCCL WARN` in the line: is it a WARN, and the message after the tag.
fn nccl_tag(l: &str) -> Option<(bool, &str)> {
    // Each 'N' is tried in place: the tag sits a few bytes in (`host:pid:tid [d] NCCL INFO`),
    // where one byte search costs less than setting up a substring search.
    let b = l.as_bytes();
    for at in memchr::memchr_iter(b'N', b) {
        let rest = &b[at..];
        if rest.starts_with(b"NCCL ")
            && (at == 0 || b[at - 1] == b' ')
            && (rest[5..].starts_with(b"INFO") || rest[5..].starts_with(b"WARN"))
        {
            let msg = l[at + 9..].trim_start();
            return Some((rest[5..].starts_with(b"WARN"), msg));
        }
    }
    old_tag(l).or_else(|| ofi_test_tag(l))
}

/// aws-ofi-nccl's own tests (`nccl_message_transfer`, `ring`: tests/functional's logger) print
/// the plugin's lines without NCCL: `WARN: Function: %s Line: %d: ` (and `INFO:`, `TRACE:`),
/// then the message (`NET/OFI …`).
fn ofi_test_tag(l: &str) -> Option<(bool, &str)> {
    let (warn, rest) = if let Some(r) = l.strip_prefix("WARN: Function: ") {
        (true, r)
    } else {
        (false, l.strip_prefix("INFO: Function: ").or_else(|| l.strip_prefix("TRACE: Function: "))?)
    };
    let (_, after) = rest.split_once(" Line: ")?;
    let (n, msg) = after.split_once(": ")?;
    let msg = msg.trim_start();
    // the plugin's messages start `NET/OFI ` (NCCL_OFI_WARN's prefix); another program's
    // `WARN: Function:` lines are not NCCL's
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && msg.starts_with("NET/OFI")).then_some((warn, msg))
}

/// A completed init (`… busId b2000 commId … - Init COMPLETE`) on another GPU than the one a
/// duplicate-GPU warning named (`… both on CUDA device 3d000`).
fn moved_gpu(warning: &str, done: &str) -> bool {
    let dup = warning.rsplit_once("CUDA device ").map(|(_, d)| d.trim());
    let now = done.split_once(" busId ").and_then(|(_, r)| r.split_whitespace().next());
    matches!((dup, now), (Some(d), Some(n)) if !d.is_empty() && !d.eq_ignore_ascii_case(n))
}

/// `Using network` names of one plugin, with its API version (`IBext_v8`, `GPUDirectTCPX_v7`:
/// each plugin's ncclNet_vN name) and without it where no host's own line printed the short
/// one (an author's summary that shortens it: set 126's TCPX page): one network, not ranks that
/// took different ones; the versioned name kept. A host's line with the short name beside
/// another's versioned one, or two versions (`IBext_v7`, `IBext_v8`), stay two: nodes on
/// different builds (review 28). The names left, in order.
fn one_plugin_one_network(names: &mut BTreeSet<String>, held: &BTreeSet<String>) -> Vec<String> {
    let shortened: Vec<String> = names
        .iter()
        .filter(|n| !held.contains(*n) && names.iter().any(|o| plugin_base(o) == Some(n.as_str())))
        .cloned()
        .collect();
    for n in shortened {
        names.remove(&n);
    }
    names.iter().cloned().collect()
}

/// `IBext` of `IBext_v8`: a plugin's name before its API version (`_v` and a number).
pub fn plugin_base(n: &str) -> Option<&str> {
    let (b, v) = n.rsplit_once("_v")?;
    (!b.is_empty() && !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) && !v.starts_with('0')).then_some(b)
}

/// A "host" that is the front of a clock: `12` of `12:34:56 [0] INFO …`, `2024-05-01T12` or
/// `[2024-05-01 12` of another program's timestamped lines.
fn clock_like(host: &str) -> bool {
    let h = host.trim_start_matches('[');
    h.bytes().all(|c| c.is_ascii_digit() || c == b'-' || c == b'.' || c == b'/')
        || h.rsplit_once(['T', ' ']).is_some_and(|(d, hh)| {
            hh.len() <= 2
                && hh.bytes().all(|c| c.is_ascii_digit())
                && d.bytes().all(|c| c.is_ascii_digit() || c == b'-' || c == b'/')
        })
}

/// NCCL 2.0–2.2 printed no `NCCL` tag (`include/debug.h`): `host:pid:tid [dev] INFO <msg>` and
/// `host:pid:tid [dev] <file>:<line> WARN <msg>`. Read as NCCL's own lines when the whole
/// prefix is there (a bare `INFO`/`WARN` of another program is not).
fn old_tag(l: &str) -> Option<(bool, &str)> {
    let b = l.as_bytes();
    let open = memchr::memchr(b'[', &b[..b.len().min(200)])?;
    if open < 5 || b[open - 1] != b' ' {
        return None;
    }
    let mut head = l[..open - 1].rsplitn(3, ':');
    let (tid, pid, host) = (head.next()?, head.next()?, head.next()?);
    if !digits(tid) || !digits(pid) || host.is_empty() || host.contains(' ') || clock_like(host) {
        return None;
    }
    let close = open + memchr::memchr(b']', &b[open..b.len().min(open + 12)])?;
    if !digits(&l[open + 1..close]) {
        return None;
    }
    let rest = l[close + 1..].strip_prefix(' ')?;
    if let Some(m) = rest.strip_prefix("INFO ") {
        return Some((false, m.trim_start()));
    }
    let (loc, m) = rest.split_once(" WARN ")?;
    source_file(loc).map(|_| (true, m.trim_start()))
}

/// Digits only, at least one.
fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// `init.cc:670`, `transport/net_ib.cu:204`, `common.cu:891`: a source location as NCCL's and
/// nccl-tests' macros print `__FILE__:__LINE__`; the file.
fn source_file(loc: &str) -> Option<&str> {
    let (file, line) = loc.rsplit_once(':')?;
    let source = [".cc", ".c", ".h", ".cu", ".cpp"].iter().any(|x| file.ends_with(x));
    (source && digits(line) && !file.contains(char::is_whitespace)).then_some(file)
}

/// Every literal a reader of [`Analyser`] acts on, or a part of it: a line that holds none of
/// them is passed over. `tests::the_gate_covers_every_literal_the_readers_use` holds this list
/// to the literals in this file, and `gated_and_ungated_readings_agree` to the whole corpus.
pub const GATE: &[&str] = &[
    "NCCL version",
    "NCCL_",
    "Test NCCL",
    "nccl",
    "Using network",
    "ternal Network ",
    "Selected ",
    "Bootstrap",
    ": Using ",
    "Plugin",
    "plugin",
    "set by environment",
    " via ",
    "GPU Direct",
    "anks ",
    " nNodes ",
    "Init COMPLETE",
    "Connected all",
    " qpn ",
    "libibverbs",
    "not open",
    "ailed",
    "rror",
    "atchdog",
    // NCCL's `Cuda failure`, nccl-tests' `Test CUDA failure` and `Test failure` (its TESTCHECK
    // trace), PyTorch's `CUDA failure`: one literal
    " failure",
    // the GPU driver's kernel log: `NVRM: Xid (PCI:0000:18:00): 31, …`
    "Xid (",
    "Duplicate GPU",
    "same GPU",
    ": line ",
    "SHARP",
    "CollNet",
    "ocket",
    "ignal",
    "corrupt",
    "Seg",
    "fi_getinfo",
    "FI_EFA_USE_DEVICE_RDMA",
    "protocol that worked",
    "address vector",
    "GID",
    "async",
    "ncompatible",
    "onnect to",
    "Connection closed",
    "ibv_",
    "interface",
    "evice found",
    "userspace device",
    "Got c",
    "*** SIG",
    "reset by peer",
    "Broken pipe",
    "remote process",
    "Proxy Call",
    "milliseconds",
    "disabling GDR",
    "WARN",
    "ERROR",
    "IBV_EVENT",
    " provider",
    "EP ",
    "xit",
    "restart worker group",
    "ProcessGroupNCCL",
];

/// The gate's automaton as a flat table: a byte's class, then one lookup per byte into rows of
/// `1 << SHIFT` classes (state indices premultiplied by the row length), and per state the mask
/// of the literals that end there, OR-ed in without a branch. Built from aho-corasick's
/// standard DFA, whose states and matches it copies: bytes that occur in no literal share one
/// class (they lead every state to the same place).
struct Gate {
    class: [u8; 256],
    trans: Vec<u16>,
    masks: Vec<u64>,
    start: u16,
}

const GATE_SHIFT: u32 = 6;

impl Gate {
    /// The state after byte `c` from state `s` (a premultiplied index).
    #[inline(always)]
    fn step(&self, s: usize, c: u8) -> usize {
        let i = s + self.class[c as usize] as usize;
        debug_assert!(i < self.trans.len());
        // SAFETY: `s` is `start` or an entry of `trans`, each a state's index times the row's
        // length, checked below the number of rows when the table was built (`gate`); a
        // class is below the row's length (`gate` asserts it): `i` is inside `trans`. (The
        // bounds check was a compare and a branch on every byte of every line read.)
        unsafe { *self.trans.get_unchecked(i) as usize }
    }

    /// The literals that end in state `s`.
    #[inline(always)]
    fn mask(&self, s: usize) -> u64 {
        debug_assert!(s >> GATE_SHIFT < self.masks.len());
        // SAFETY: `s` is a state's premultiplied index (see `step`), one mask per state.
        unsafe { *self.masks.get_unchecked(s >> GATE_SHIFT) }
    }
}

fn gate() -> &'static Gate {
    use aho_corasick::automaton::Automaton;
    static G: std::sync::OnceLock<Gate> = std::sync::OnceLock::new();
    G.get_or_init(|| {
        let d = aho_corasick::dfa::Builder::new()
            .match_kind(aho_corasick::MatchKind::Standard)
            .prefilter(false)
            .build(GATE)
            .expect("the gate's literals build");
        let start = d.start_state(aho_corasick::Anchored::No).expect("an unanchored start state");
        // classes: 0 for every byte no literal holds, then one per byte that one does
        let mut class = [0u8; 256];
        let mut reps = vec![0u8];
        for b in 0..=255u8 {
            if GATE.iter().any(|l| l.as_bytes().contains(&b)) {
                class[b as usize] = reps.len() as u8;
                reps.push(b);
            }
        }
        // the representative of class 0: a byte no literal holds
        reps[0] = (0..=255u8).find(|b| class[*b as usize] == 0).expect("a byte outside the literals");
        assert!(reps.len() <= 1 << GATE_SHIFT, "{} byte classes: the gate's rows hold {}", reps.len(), 1 << GATE_SHIFT);
        let mut ids = std::collections::HashMap::new();
        let mut order = vec![start];
        ids.insert(start, 0usize);
        let (mut trans, mut masks) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < order.len() {
            let sid = order[i];
            let mut m = 0u64;
            if d.is_match(sid) {
                for k in 0..d.match_len(sid) {
                    m |= 1 << d.match_pattern(sid, k).as_usize();
                }
            }
            masks.push(m);
            let mut row = vec![0u16; 1 << GATE_SHIFT];
            for (c, &b) in reps.iter().enumerate() {
                let next = d.next_state(aho_corasick::Anchored::No, sid, b);
                let n = ids.len();
                let idx = *ids.entry(next).or_insert_with(|| {
                    order.push(next);
                    n
                });
                row[c] = u16::try_from(idx << GATE_SHIFT).expect("the gate's table fits u16 indices");
            }
            trans.extend(row);
            i += 1;
        }
        // what `step` and `mask` rely on: every entry a state's row (the start is row 0)
        assert_eq!(trans.len(), masks.len() << GATE_SHIFT);
        assert!(trans.iter().all(|&t| (t as usize) >> GATE_SHIFT < masks.len() && t as usize % (1 << GATE_SHIFT) == 0));
        Gate { class, trans, masks, start: 0 }
    })
}

/// A channel's transport, what follows ` via `: `NET/<name>/<dev>[/GDRDMA][/Shared]` runs to the
/// end of the line (a plugin's name may hold spaces: `NET/AWS Libfabric/0/GDRDMA`); any other
/// (`P2P/CUMEM/read`, `SHM`) is one word.
fn transport(v: &str) -> &str {
    if v.starts_with("NET/") {
        v.trim_end()
    } else {
        v.split_whitespace().next().unwrap_or("")
    }
}

/// `/GDRDMA` cut by a terminal that wrapped the line (review 12: 120 columns) after
/// `NET/<name>/<dev>` (`via NET/G` is a plugin's name cut, review 13): the only suffix NCCL's
/// channel format ("via NET/%s/%d%s%s") starts with `/G` is `/GDRDMA`.
fn gdrdma_cut(t: &str) -> bool {
    let te = t.trim_end();
    let dev = |r: &str| r.rsplit('/').next().is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()));
    matches!(te.as_bytes().last(), Some(b'G' | b'D' | b'R' | b'M'))
        && ["/G", "/GD", "/GDR", "/GDRD", "/GDRDM"]
            .iter()
            .any(|p| te.strip_suffix(p).is_some_and(|r| r.matches('/').count() >= 2 && dev(r)))
}

/// The short paths of NCCL's INFO lines: the bulk of a large log, each with one thing to read.
#[derive(Debug, PartialEq)]
enum Short {
    /// `Channel 00/0 : 0[0] -> 8[0] [receive] via NET/IB/0/GDRDMA`: ` via ` at the index.
    Channel(usize),
    /// `init.cc:670 -> 2`.
    Trace,
    /// A ring's or tree's order, thresholds, proxy connections.
    Nothing,
    /// `Connected all rings`/`trees`.
    Connected,
    /// `comm 0x… rank … nRanks … nNodes …`, `ncclCommInitRank … Init COMPLETE`.
    Comm,
    /// `Channel 00/32 :    0 1 2 3`: a ring's order, its length.
    Ring(usize),
    /// NVLink SHARP in use: `NVLS multicast support is available on dev %d`, `Connected NVLS`,
    /// `%d coll channels, %d collnet channels, %d nvls channels, …` with nvls channels.
    Nvls,
}

impl Short {
    /// [`Pre`]'s word for a short path worked out: 1 none, 2–6 a kind without a number, bit 31
    /// a channel (the index of its ` via `), bit 30 a ring (its length); 0 (not worked out)
    /// where the number does not fit.
    fn to_code(s: Option<&Short>) -> u32 {
        let fits = |n: usize| u32::try_from(n).ok().filter(|n| *n < 1 << 30);
        match s {
            None => 1,
            Some(Short::Trace) => 2,
            Some(Short::Nothing) => 3,
            Some(Short::Connected) => 4,
            Some(Short::Comm) => 5,
            Some(Short::Nvls) => 6,
            Some(Short::Channel(i)) => fits(*i).map_or(0, |i| 1 << 31 | i),
            Some(Short::Ring(n)) => fits(*n).map_or(0, |n| 1 << 30 | n),
        }
    }

    /// The short path a [`Short::to_code`] word holds; `None` where it was not worked out.
    fn from_code(c: u32) -> Option<Option<Short>> {
        Some(match c {
            0 => return None,
            1 => None,
            2 => Some(Short::Trace),
            3 => Some(Short::Nothing),
            4 => Some(Short::Connected),
            5 => Some(Short::Comm),
            6 => Some(Short::Nvls),
            c if c >> 31 == 1 => Some(Short::Channel((c & !(1 << 31)) as usize)),
            c if c >> 30 == 1 => Some(Short::Ring((c & !(1 << 30)) as usize)),
            _ => return None,
        })
    }
}

/// A line that shows NCCL set up NVLink SHARP (init.cc's and connect.cc's INFO lines).
fn nvls_evidence(msg: &str) -> bool {
    msg.starts_with("NVLS multicast support is available")
        || msg.starts_with("Connected NVLS")
        || (msg.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && find!(msg, " nvls channels").is_some_and(|i| {
                msg[..i].rsplit([' ', ',']).next().and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n > 0)
            }))
}

/// A ring's order line, `Channel %02d/%02d : <ranks>` (init.cc), and how many ranks it holds.
///
/// One pass over the bytes: a ring of a large job is a line of hundreds of ranks, and NCCL prints
/// one per channel and communicator (in a 512 MiB log, a tenth of the reading time went here).
fn ring_len(msg: &str) -> Option<usize> {
    let rest = msg.strip_prefix("Channel ")?.as_bytes();
    // `00/32 : ` — digits and one '/', then " : " (the first ':' of a ring line)
    let colon = memchr::memchr(b':', rest)?;
    if colon < 2 || rest[colon - 1] != b' ' || rest.get(colon + 1) != Some(&b' ') {
        return None;
    }
    let head = &rest[..colon - 1];
    if !head.contains(&b'/') || !head.iter().all(|b| b.is_ascii_digit() || *b == b'/') {
        return None;
    }
    let (mut n, mut in_rank) = (0, false);
    for &b in &rest[colon + 2..] {
        match b {
            b'0'..=b'9' => {
                n += usize::from(!in_rank);
                in_rank = true;
            }
            b' ' | b'\t' => in_rank = false,
            _ => return None,
        }
    }
    (n > 0).then_some(n)
}

/// The first ` via ` of a channel line: a byte search for its 'v' (a channel line's first
/// 'v' is nearly always its ` via `), where a substring search's set-up cost more.
fn via(msg: &str) -> Option<usize> {
    let b = msg.as_bytes();
    memchr::memchr_iter(b'v', b).find(|&i| i > 0 && b[i - 1] == b' ' && b[i..].starts_with(b"via ")).map(|i| i - 1)
}

fn short(msg: &str) -> Option<Short> {
    let b = msg.as_bytes();
    if matches!(b.first()?, b'N' | b'C' | b'0'..=b'9') && nvls_evidence(msg) {
        return Some(Short::Nvls);
    }
    match b.first()? {
        b'C' if msg.starts_with("Channel ") => Some(match via(msg) {
            // another process's line glued after the transport (`…/GDRDMA[rank1]:[E …]
            // ProcessGroupNCCL's watchdog got stuck …`, review 23): no `[` follows `via ` in
            // NCCL's own, so the whole line is read
            Some(i) if memchr::memchr(b'[', &b[i..]).is_some() => return None,
            Some(i) => Short::Channel(i),
            None => ring_len(msg).map_or(Short::Nothing, Short::Ring),
        }),
        b'R' if msg.starts_with("Ring ") => Some(via(msg).map_or(Short::Nothing, Short::Channel)),
        b'T' if msg.starts_with("Tree ") => Some(via(msg).map_or(Short::Nothing, Short::Channel)),
        b'T' if msg.starts_with("Trees ") => Some(Short::Nothing),
        b'C' if msg.starts_with("Connected all rings") || msg.starts_with("Connected all trees") => {
            Some(Short::Connected)
        }
        b'C' if msg.starts_with("Connected all ") => Some(Short::Nothing),
        b't' if msg.starts_with("threadThresholds ") => Some(Short::Nothing),
        // a proxy connection per peer and channel (2.12+): with channels, the bulk of an INFO log
        b'N' if msg.starts_with("New proxy ") => Some(Short::Nothing),
        b'C' if msg.starts_with("Connected to proxy ") => Some(Short::Nothing),
        // (`ncclCommInit… comm 0x…` only: `ncclCommInitRank failed: invalid argument (run with
        // …)` is a failure for the readers — review 15 —, and so is another process's watchdog
        // line glued onto a comm line: `comm 0x… rank 0 nra[rank0]:[E …] … Watchdog caught …`,
        // set 89's ALCF log)
        b'c' | b'n'
            if comm_line(msg) && !has!(msg, "rror") && !has!(msg, "atchdog") && !has!(msg, "ProcessGroupNCCL") =>
        {
            Some(Short::Comm)
        }
        _ if is_trace(msg) => Some(Short::Trace),
        _ => None,
    }
}

/// NCCL's communicator lines: `comm 0x… rank …`, `ncclCommInitRank comm 0x… … - Init COMPLETE`
/// (and `…Config`, `…All`, `…Scalable`).
fn comm_line(msg: &str) -> bool {
    msg.starts_with("comm 0x")
        || (msg.starts_with("ncclCommInit") && msg.split_once(' ').is_some_and(|(_, r)| r.starts_with("comm 0x")))
}

/// A line ibwire itself wrote into the job's output (`ibwire launch: …`, the hook's, an error):
/// its judgement of NCCL's lines, never evidence of its own. Quoted evidence in it (`"Using
/// network Socket"`) read as NCCL's made a second network out of the quote.
fn ibwires_own(l: &str) -> bool {
    l.strip_prefix("ibwire")
        .is_some_and(|r| r.starts_with(" launch: ") || r.starts_with(": ") || r.starts_with("-hook: "))
}

/// ibwire's own reports in a job's output, line by line: a headline `ibwire launch: …` and the
/// indented lines under it (the watch's stop message quotes NCCL's lines as its evidence).
/// Asked of each line as read, before [`unwrap_line`] takes its indent.
#[derive(Default)]
pub struct OwnLines {
    block: bool,
}

impl OwnLines {
    /// Is this (cleaned, not yet unwrapped) line ibwire's own?
    #[inline]
    pub fn skip(&mut self, l: &str) -> bool {
        let own = ibwires_own(l) || (self.block && l.starts_with("  "));
        self.block = own;
        own
    }
}

/// What the thread that reads the log works out for a line, so that it runs beside the
/// analyser rather than in it: the NCCL tag, the gate's mask and the INFO message's short path.
/// [`Pre::NONE`]: nothing (the analyser works them out itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pre {
    /// 0: not worked out; 1: no tag; else the message's offset + 2, bit 31 set for a WARN.
    tag: u32,
    /// `u64::MAX`: not worked out, or a line read whole anyway (a WARN, a short path's).
    mask: u64,
    /// The INFO message's short path ([`Short::to_code`]); 0: not worked out.
    short: u32,
}

impl Pre {
    pub const NONE: Pre = Pre { tag: 0, mask: u64::MAX, short: 0 };
    pub const BYTES: usize = 16;

    pub fn to_bytes(self) -> [u8; Pre::BYTES] {
        let mut b = [0u8; Pre::BYTES];
        b[..8].copy_from_slice(&self.mask.to_le_bytes());
        b[8..12].copy_from_slice(&self.tag.to_le_bytes());
        b[12..].copy_from_slice(&self.short.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Pre {
        let word = |r: std::ops::Range<usize>| b.get(r).and_then(|t| t.try_into().ok()).map(u32::from_le_bytes);
        match (b.get(..8).and_then(|m| m.try_into().ok()), word(8..12), word(12..16)) {
            (Some(m), Some(tag), Some(short)) => Pre { mask: u64::from_le_bytes(m), tag, short },
            _ => Pre::NONE,
        }
    }

    /// The tag of `l` as [`nccl_tag`] gives it, from what was worked out.
    fn tag<'a>(&self, l: &'a str) -> Option<(bool, &'a str)> {
        match self.tag {
            0 => nccl_tag(l),
            1 => None,
            t => {
                let at = ((t & !(1 << 31)) - 2) as usize;
                match l.get(at..) {
                    Some(msg) => Some((t >> 31 == 1, msg)),
                    None => nccl_tag(l),
                }
            }
        }
    }
}

/// [`Pre`] of a line.
pub fn pre(l: &str) -> Pre {
    let (tag, short, gated) = pre_tag(l);
    Pre { tag, mask: gated.map_or(u64::MAX, gate_mask), short }
}

/// [`Pre`] of two lines, their gate's passes run side by side (each byte's state waits on the
/// one before it: two lines are two chains of lookups the processor overlaps).
pub fn pre2(a: &str, b: &str) -> (Pre, Pre) {
    let ((ta, sa, ga), (tb, sb, gb)) = (pre_tag(a), pre_tag(b));
    let (ma, mb) = match (ga, gb) {
        (Some(x), Some(y)) => gate_mask2(x.as_bytes(), y.as_bytes()),
        (x, y) => (x.map_or(u64::MAX, gate_mask), y.map_or(u64::MAX, gate_mask)),
    };
    (Pre { tag: ta, mask: ma, short: sa }, Pre { tag: tb, mask: mb, short: sb })
}

/// A line's tag as [`Pre`] keeps it, its INFO message's short path ([`Short::to_code`]: 0 where
/// there is no INFO message), and the text the gate must read (none for a WARN or a short
/// path's line, which are read whole anyway). The gate reads the whole line, the text before
/// the tag too: the readers search the whole line (a library's words run onto an NCCL line
/// before its tag, review 16), and a mask of the message alone let them skip what was there.
fn pre_tag(l: &str) -> (u32, u32, Option<&str>) {
    let t = nccl_tag(l);
    let tag = match t {
        None => 1,
        Some((warn, msg)) if l.len() < 1 << 30 => ((l.len() - msg.len()) as u32 + 2) | (u32::from(warn) << 31),
        Some(_) => 0,
    };
    match t {
        Some((true, _)) => (tag, 0, None),
        Some((false, msg)) => {
            let s = short(msg);
            (tag, Short::to_code(s.as_ref()), if s.is_some() { None } else { Some(l) })
        }
        None => (tag, 0, Some(l)),
    }
}

/// Bit `i` set when GATE's `i`-th literal occurs in `l` (GATE has at most 64).
///
/// One pass of the gate's DFA over the bytes, every match state's patterns taken (a standard,
/// not leftmost, automaton: its match states hold every literal ending there): a table lookup
/// per byte, where a search restarted after each match re-entered the prefilter per literal.
/// Every occurrence is seen, those that overlap another included, so a literal that holds
/// GATE entries sets all their bits (what `hasm!` relies on).
fn gate_mask(l: &str) -> u64 {
    gate_mask_bytes(l.as_bytes())
}

/// [`gate_mask`] of bytes.
fn gate_mask_bytes(b: &[u8]) -> u64 {
    let g = gate();
    let (mut m, mut s) = (0u64, g.start as usize);
    // Each byte's state waits on the one before: a long line is read as two halves at once
    // (the second from GATE_LONGEST - 1 bytes before the middle, so a literal that crosses
    // the middle is whole in it), two chains of lookups the processor runs side by side.
    if b.len() >= 96 {
        let mid = b.len() / 2;
        let (x, y) = (&b[..mid], &b[mid - (GATE_LONGEST - 1)..]);
        let mut t = g.start as usize;
        for (&c, &d) in x.iter().zip(y) {
            s = g.step(s, c);
            t = g.step(t, d);
            m |= g.mask(s) | g.mask(t);
        }
        for &d in &y[x.len()..] {
            t = g.step(t, d);
            m |= g.mask(t);
        }
        return m;
    }
    gate_mask_serial(b)
}

/// [`gate_mask`] of two lines in one loop: their common length side by side, then the rest
/// of the longer from GATE_LONGEST - 1 bytes before it (a literal that crosses the point is
/// whole there).
fn gate_mask2(x: &[u8], y: &[u8]) -> (u64, u64) {
    let g = gate();
    let (mut s, mut t, mut m, mut k) = (g.start as usize, g.start as usize, 0u64, 0u64);
    for (&c, &d) in x.iter().zip(y) {
        s = g.step(s, c);
        t = g.step(t, d);
        m |= g.mask(s);
        k |= g.mask(t);
    }
    let n = x.len().min(y.len());
    let rest = |z: &[u8]| if z.len() > n { gate_mask_bytes(&z[n.saturating_sub(GATE_LONGEST - 1)..]) } else { 0 };
    (m | rest(x), k | rest(y))
}

/// The gate's pass in one chain: short lines, and the reference of the two-halves pass.
fn gate_mask_serial(b: &[u8]) -> u64 {
    let g = gate();
    let (mut m, mut s) = (0u64, g.start as usize);
    for &c in b {
        s = g.step(s, c);
        m |= g.mask(s);
    }
    m
}

// gate_mask's u64 holds 64 literals; its two halves overlap by the longest less one byte
const _: () = assert!(GATE.len() <= 64 && GATE_LONGEST <= 48);

/// The longest of GATE's literals.
const GATE_LONGEST: usize = {
    let (mut i, mut n) = (0, 0);
    while i < GATE.len() {
        if GATE[i].len() > n {
            n = GATE[i].len();
        }
        i += 1;
    }
    n
};

/// `init.cc:670 -> 2`, `transport/net_ib.cc:123 -> 3 [Async thread]`: NCCL's return-code trace.
fn is_trace(msg: &str) -> bool {
    trace_parts(msg).is_some()
}

/// nccl_error's patterns without `rror` in them: `ncclInvalidUsage`, `ncclInvalidArgument`,
/// `ncclSocketInit:` (looked for where the gate saw `nccl`) and ncclGetErrorString's `invalid
/// usage (run with NCCL_DEBUG=…` and `invalid argument (run with NCCL_DEBUG=…` (where it saw
/// `NCCL_`; review 14: `ncclAllReduce failed: invalid argument (run with …)` was read through
/// the `nccl` of the function's name alone).
fn names_result(l: &str, m: u64) -> bool {
    (m & gbit!("nccl") != 0
        && memchr::memmem::find_iter(l.as_bytes(), b"nccl")
            .any(|i| l[i + 4..].starts_with("Invalid") || l[i + 4..].starts_with("SocketInit:")))
        || (m & gbit!("NCCL_") != 0 && has!(l, " (run with NCCL_DEBUG="))
        // XLA's `NCCL operation ncclX(…) failed: …` (the call's `nccl`, its `ailed`)
        || (m & gbit!("nccl") != 0 && m & gbit!("ailed") != 0 && has!(l, "NCCL operation nccl"))
}

/// ` -> ` somewhere in `l` (an error trace's arrow): one byte search, no substring searcher.
#[inline]
fn has_arrow(l: &str) -> bool {
    let b = l.as_bytes();
    memchr::memchr_iter(b'>', b).any(|i| i >= 2 && b[i - 1] == b'-' && b[i - 2] == b' ' && b.get(i + 1) == Some(&b' '))
}

/// A plugin's NCCLCHECK trace behind its own prefix (`NCCL/NET (shim)
/// /build/nccl-shim/src/guest_config_checker.cc:132 -> 4`): the last word before ` -> `.
fn prefixed_trace(msg: &str) -> Option<(&str, i64)> {
    let i = msg.rfind(" -> ")?;
    let loc = msg[..i].rsplit(' ').next()?;
    source_file(loc)?;
    trace_parts(&msg[i - loc.len()..])
}

/// `file:line -> result`, and since 2.30 `file:line (function) -> result`: the file's base name
/// and the result.
fn trace_parts(msg: &str) -> Option<(&str, i64)> {
    let sp = memchr::memchr(b' ', msg.as_bytes())?;
    let (loc, mut rest) = (&msg[..sp], &msg[sp..]);
    if let Some(r) = rest.strip_prefix(" (") {
        // `(sendProxyProgress)`: a function name
        let e = r.find(')')?;
        if r[..e].contains(' ') {
            return None;
        }
        rest = &r[e + 1..];
    }
    let code = first_int(rest.strip_prefix(" -> ")?)?;
    let file = source_file(loc)?;
    // NCCL's top-level sources print as `init.cc` (or `…/src/init.cc` where a build kept the
    // path); `transport/net_ib/init.cc` (2.29+: the IB plugin's own init, whose failure is the
    // fallback to sockets) is not the top-level init.cc.
    let file = file.trim_start_matches("./");
    let top = match file.rsplit_once('/') {
        None => file,
        Some((dir, name)) if dir == "src" || dir.ends_with("/src") => name,
        Some(_) => file,
    };
    Some((top, code))
}

/// What one node's NCCL reported, in NCCL's words: `IB, GDRDMA, 8 HCAs` or `Socket`.
pub fn node_summary(v: &HostView) -> String {
    let net = match v.networks.len() {
        0 => "network not shown".to_string(),
        1 => v.networks.iter().next().cloned().unwrap_or_default(),
        _ => v.networks.iter().cloned().collect::<Vec<_>>().join("+"),
    };
    let rdma = v.networks.iter().any(|n| is_rdma_name(n));
    let mut parts = vec![net];
    if v.recv_gdr > 0 {
        parts.push("GDRDMA".into());
    } else if rdma && (v.recv_plain > 0 || v.gdr_disabled) {
        parts.push("no GDRDMA".into());
    }
    if v.ib_ports > 0 {
        parts.push(format!("{} HCA port{}", v.ib_ports, if v.ib_ports == 1 { "" } else { "s" }));
    }
    if v.no_device {
        parts.push("NET/IB : No device found".into());
    }
    parts.join(", ")
}

/// errno for the strerror texts `ibv_modify_qp` failures carry.
fn errno_of(text: &str) -> Option<i32> {
    const T: [(&str, i32); 10] = [
        ("Invalid argument", 22),
        ("Connection timed out", 110),
        ("No such device", 19),
        ("Network is unreachable", 101),
        ("No route to host", 113),
        ("Operation not permitted", 1),
        ("Cannot allocate memory", 12),
        ("Resource temporarily unavailable", 11),
        ("Operation not supported", 95),
        ("No such file or directory", 2),
    ];
    T.iter().find(|(s, _)| text.contains(s)).map(|(_, n)| *n)
}

fn first_int(s: &str) -> Option<i64> {
    let s = s.trim_start();
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    s[..n].parse().ok()
}

/// A failure line's kind and code, from NCCL's wordings old and new.
pub fn classify(msg: &str) -> Option<(Failure, Option<i64>, Option<i64>)> {
    classify_masked(msg, gate_mask(msg))
}

/// [`classify`] with the gate's mask of `msg` (`u64::MAX`: search for everything).
fn classify_masked(msg: &str, gm: u64) -> Option<(Failure, Option<i64>, Option<i64>)> {
    if let Some(found) = qp_failure(msg, gm).or_else(|| completion_failure(msg, gm)) {
        return Some(found);
    }
    let k = setup_failure(msg, gm)
        .or_else(|| connection_failure(msg, gm))
        .or_else(|| plugin_failure(msg, gm))
        .or_else(|| process_failure(msg, gm))?;
    Some((k, None, None))
}

/// `ibv_modify_qp` failed: the errno says which way.
fn qp_failure(msg: &str, gm: u64) -> Option<(Failure, Option<i64>, Option<i64>)> {
    // ibv_modify_qp: ≥2.24 "failed with 22 Invalid argument, on dev …";
    // ≤2.23 "failed with error Invalid argument errno 22"; plugins "failed with error Network is unreachable".
    if let Some(m) = afterm!(msg, gm, "ibv_modify_qp failed") {
        let m = m.trim_start().trim_start_matches("with").trim_start();
        let n = first_int(m).or_else(|| after!(m, "errno ").and_then(first_int)).or_else(|| errno_of(m).map(i64::from));
        let k = match n {
            Some(22) => Failure::QpInvalid,
            Some(101) | Some(113) => Failure::QpUnreachable,
            Some(110) => Failure::QpTimeout,
            Some(19) => Failure::QpNoDevice,
            _ => Failure::QpOther,
        };
        return Some((k, n, None));
    }
    None
}

/// A work completion with an error status (and the vendor's error).
fn completion_failure(msg: &str, gm: u64) -> Option<(Failure, Option<i64>, Option<i64>)> {
    // Completion errors:
    //   ≤2.18 "Got completion with error 12, opcode 0, len 0, vendor err 129"
    //   2.19+ "Got completion from peer <addr> with error 4, opcode …, len …, vendor err 81 (Send)"
    //   2.2x  "Got completion from peer <addr> with status=12 opcode=1 len=0 vendor err 129"
    //   2.28+ "Got completion from peer <addr> with status=IBV_WC_RETRY_EXC_ERR(12) … vendor_err=129"
    if hasm!(msg, gm, "Got completion") {
        let status = afterm!(msg, gm, " with error ")
            .and_then(first_int)
            .or_else(|| {
                afterm!(msg, gm, "status=")
                    .and_then(|s| first_int(s).or_else(|| s.find('(').and_then(|i| first_int(&s[i + 1..]))))
            })
            .or_else(|| afterm!(msg, gm, "with status ").and_then(first_int));
        let vendor = afterm!(msg, gm, "vendor err ").or_else(|| afterm!(msg, gm, "vendor_err=")).and_then(first_int);
        let k = match status {
            Some(12) | Some(13) => Failure::RetryExceeded,
            Some(4) => Failure::LocalProtection,
            _ => Failure::CompletionError,
        };
        return Some((k, status, vendor));
    }
    if hasm!(msg, gm, "Got CQE with error") {
        return Some((Failure::CompletionError, None, None));
    }
    None
}

/// NCCL found no network, no socket interface, or no usable RDMA device or resource.
fn setup_failure(msg: &str, gm: u64) -> Option<Failure> {
    Some(if hasm!(msg, gm, "Failed to initialize any NET plugin") {
        Failure::NoNetPlugin
    } else if hasm!(msg, gm, "no socket interface found")
        || hasm!(msg, gm, "No usable listening interface found")
        || (hasm!(msg, gm, "no device found matching") && hasm!(msg, gm, "NCCL_"))
        || (hasm!(msg, gm, "ncclSocketInit") && hasm!(msg, gm, "family"))
    {
        Failure::NoSocketInterface
    } else if hasm!(msg, gm, "NET/IB : No IP interface found") {
        Failure::NoOobInterface
    } else if hasm!(msg, gm, "async fatal event") {
        Failure::IbvFatalEvent
    } else if hasm!(msg, gm, "incompatible devices") || hasm!(msg, gm, "device is incompatible") {
        Failure::IncompatibleDevices
    } else if (hasm!(msg, gm, "Call to ibv_") || hasm!(msg, gm, "call to ibv_")) && hasm!(msg, gm, "failed") {
        // ibvwrap.cc's wrap_ibv_open_device: no errno, and nothing of memory about it; its
        // teardown calls (destroy, dereg, dealloc, close) are the table's ibv-teardown-failed
        if has!(msg, "ibv_open_device") {
            Failure::IbOpenFailed
        } else if ["ibv_destroy_", "ibv_dereg_mr", "ibv_dealloc_", "ibv_close_device"].iter().any(|w| msg.contains(w)) {
            return None;
        } else {
            Failure::IbvResource
        }
    } else {
        return None;
    })
}

/// A peer went away, a connection failed, a port errored, or a RoCE GID could not be read.
fn connection_failure(msg: &str, gm: u64) -> Option<Failure> {
    Some(
        if hasm!(msg, gm, "Connection closed by remote peer")
            || hasm!(msg, gm, "Connection reset by peer")
            || hasm!(msg, gm, "Broken pipe")
            || hasm!(msg, gm, "remote process exited")
            || hasm!(msg, gm, "ncclRemoteError")
            || hasm!(msg, gm, "Socket recv failed")
            || (hasm!(msg, gm, "Proxy Call to rank") && hasm!(msg, gm, "failed") && !has!(msg, "failed (Connect)"))
        {
            Failure::RemoteExit
        } else if (hasm!(msg, gm, "Connect to ") || hasm!(msg, gm, "connect to "))
        && (hasm!(msg, gm, "failed") || hasm!(msg, gm, "exceeded") || hasm!(msg, gm, "returned"))
        || hasm!(msg, gm, "socketStartConnect")
        || hasm!(msg, gm, "socketPollConnect")
        // NCCL 2.2–2.5 (include/socket.h): `Call to connect failed : Connection timed out`,
        // 2.3's `Call to connect timeout : Connection refused`
        || hasm!(msg, gm, "Call to connect failed")
        || hasm!(msg, gm, "Call to connect timeout")
        // proxy.cc's `Proxy Call to rank %d failed (%s)` with ncclProxyMsgTypeStr's `Connect`:
        // the proxy could not connect this rank's channel to its peer (a peer that died is
        // `Connection closed`/`reset` above)
        || (hasm!(msg, gm, "Proxy Call to rank") && has!(msg, "failed (Connect)"))
        // 2.12–2.18 misc/socket.cc: `Net : Call to recv from %s failed : %s`; ECONNREFUSED is a
        // non-blocking connect the peer refused (nothing listens at that address and port)
        || (hasm!(msg, gm, "Call to recv from ") && hasm!(msg, gm, "failed : Connection refused"))
        {
            Failure::SocketConnect
        } else if (hasm!(msg, gm, "async") && hasm!(msg, gm, "port error")) || hasm!(msg, gm, "IBV_EVENT_PORT_ERR") {
            Failure::PortError
        } else if hasm!(msg, gm, "ncclIbRoceGetVersionNum")
            || hasm!(msg, gm, "ncclIbGetGidIndex")
            || (hasm!(msg, gm, "GID") && hasm!(msg, gm, "read failed"))
        {
            Failure::RoceGid
        } else {
            return None;
        },
    )
}

/// The OFI (EFA), SHARP/CollNet plugins' failures, and a topology file NCCL could not use.
fn plugin_failure(msg: &str, gm: u64) -> Option<Failure> {
    Some(
        if hasm!(msg, gm, "fi_getinfo")
            || hasm!(msg, gm, "No eligible providers")
            || hasm!(msg, gm, "Unable to find a protocol that worked")
            || (hasm!(msg, gm, "NET/OFI") && hasm!(msg, gm, "Failed to initialize"))
            // aws-ofi-nccl built for EFA only (src/nccl_ofi_net.c, up to v1.8): the provider
            // libfabric found is not EFA, and the plugin's init fails with ncclSystemError.
            || hasm!(msg, gm, "Only EFA provider is supported")
            // fi_getinfo() returned -FI_ENODATA (no provider for the hints): older plugins'
            // wording of `fi_getinfo() call failed: No data available`
            || hasm!(msg, gm, "Couldn't find any optimal provider")
        {
            Failure::OfiNoDevice
        } else if hasm!(msg, gm, "Libfabric error: (-12)") {
            // libfabric's EFA provider's abort (prov/efa: `efa_base_ep_write_eq_error`) prints
            // "Libfabric error: (%zd) %s" with the negated errno, then "EFA internal error: (%zd) %s"
            Failure::OfiNoMemory
        } else if hasm!(msg, gm, "FI_EFA_USE_DEVICE_RDMA")
            && (has!(msg, "rdma-read capability") || has!(msg, "set to an invalid value"))
        {
            // libfabric's EFA provider (prov/efa, every release since 1.10): "FI_EFA_USE_DEVICE_RDMA=1
            // was set by user(s), but EFA device has no rdma-read capability." and
            // "FI_EFA_USE_DEVICE_RDMA was set to an invalid value by the user.", then abort()
            Failure::EfaDeviceRdma
        } else if hasm!(msg, gm, "EFA internal error: (")
            || hasm!(msg, gm, "EFA provider has encountered an internal error")
        {
            Failure::OfiAbort
        } else if hasm!(msg, gm, "insert remote address into address vector")
        // libfabric's own log (FI_LOG_LEVEL=warn): `libfabric:<pid>:<ts>::efa:cq:
        // efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address …`, a send or
        // receive of the EFA provider that completed in error
        || (hasm!(msg, gm, "_handle_error():")
            && has!(msg, "libfabric:")
            && has!(msg, ":efa:")
            && has!(msg, "<warn> err: "))
            || (hasm!(msg, gm, "NET/OFI")
                && (hasm!(msg, gm, "CQ error")
                    || hasm!(msg, gm, "fi_cq_readerr")
                    || hasm!(msg, gm, "completion error")))
        {
            Failure::OfiPeer
        } else if hasm!(msg, gm, "SHARP coll init error")
            || hasm!(msg, gm, "Cannot create SHARP job")
            || hasm!(msg, gm, "Failed to lock SAT tree")
            || hasm!(msg, gm, "sharp_coll_comm_init failed")
            || hasm!(msg, gm, "Cannot initialize CollNet")
        {
            Failure::CollNet
        } else if hasm!(msg, gm, "Attribute arch of node cpu not found")
            || (hasm!(msg, gm, "NCCL_TOPO_FILE") && hasm!(msg, gm, "fail"))
        {
            Failure::TopologyFile
        } else {
            return None;
        },
    )
}

/// The process crashed, two ranks share a GPU, CUDA failed, or a collective timed out.
fn process_failure(msg: &str, gm: u64) -> Option<Failure> {
    Some(
        if hasm!(msg, gm, "Caught signal 11")
        || hasm!(msg, gm, "Segmentation fault")
        // tvm_ffi's signal handler (src/ffi/backtrace.cc; in vLLM and SGLang through FlashInfer):
        // `!!!!!!! Segfault encountered !!!!!!!` then the traceback (held-out set 27: nccl#2106)
        || hasm!(msg, gm, "Segfault encountered")
        || hasm!(msg, gm, "Caught signal 6")
        // Open MPI's handler: `[host:pid] *** Process received signal ***`, `Signal: Aborted (6)`
        || hasm!(msg, gm, "*** Process received signal ***")
        || hasm!(msg, gm, "Signal: Aborted")
        // glibc's heap checks abort the process: `free(): corrupted unsorted chunks`
        || hasm!(msg, gm, "double free or corruption")
        || (hasm!(msg, gm, "free(): ") && hasm!(msg, gm, "corrupted"))
        || (hasm!(msg, gm, "malloc(): ") && hasm!(msg, gm, "corrupted"))
        {
            Failure::Crash
        } else if hasm!(msg, gm, "Socket creation failed") {
            Failure::NoSocketInterface
        } else if hasm!(msg, gm, "Duplicate GPU detected") || hasm!(msg, gm, "using the same GPU") {
            Failure::DuplicateGpu
        } else if hasm!(msg, gm, "Cuda failure") || hasm!(msg, gm, "Test CUDA failure") {
            // cudaErrorNoDevice's words: the process sees no GPU at all
            if has!(msg, "no CUDA-capable device is detected") {
                Failure::NoGpu
            } else {
                Failure::CudaFailure
            }
        } else if hasm!(msg, gm, "Watchdog caught collective operation timeout")
            // GPU-side waits on a peer that ran out, then trap(): NCCL EP's `Warning: NCCL EP
            // timeout for dispatch receive, rank %d, …` and DeepEP's `DeepEP timeout for %s, rank
            // %d, …` (held-out set 25: nccl#2303)
            || ep_timeout(msg, gm)
            || hasm!(msg, gm, "Some NCCL operations have failed or timed out")
            || (hasm!(msg, gm, "ran for") && hasm!(msg, gm, "milliseconds before timing out"))
        {
            Failure::CollectiveTimeout
        } else {
            return None;
        },
    )
}

/// `l` without the prefix `p` that the line before it had: the same text, or a logger's
/// bracketed prefix (`LEVEL date time file:line] `) ending where `p`'s ended, give or take a few
/// bytes of a clock that moved on.
fn strip_like<'a>(l: &'a str, p: &str) -> &'a str {
    if p.is_empty() {
        return l;
    }
    if let Some(r) = l.strip_prefix(p) {
        return r;
    }
    // the same logger: the line starts with the prefix's first word (`ERROR`, `(RayWorker…`)
    let same_logger = p.split_whitespace().next().is_some_and(|w| l.starts_with(w));
    if p.ends_with("] ") && same_logger {
        let from = p.len().saturating_sub(6);
        let to = (p.len() + 4).min(l.len());
        if let Some(i) = l.get(from..to).and_then(|w| w.find("] ")) {
            return &l[from + i + 2..];
        }
    }
    l
}

/// The job named its network (`NCCL_NET=IB`) or NCCL could start none: a `NET/Socket : Using`
/// line is then no sign that NCCL took sockets.
fn net_named_elsewhere(f: &LogFacts) -> bool {
    f.env("NCCL_NET").is_some_and(|n| !n.eq_ignore_ascii_case("Socket"))
        || f.failures.iter().any(|x| x.kind == Failure::NoNetPlugin)
}

/// torchrun's (torch.distributed.elastic) report of a worker that failed, in its own formats:
/// multiprocessing/api.py `failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s` (or
/// `of fn: %s (start_method: %s)`) and errors/__init__.py's ProcessFailure message
/// `Signal {-exitcode} ({name}) received by PID {pid}`. A negative exit code is the signal that
/// killed the worker: a crash (its code the signal); a positive one a worker that exited.
fn torchrun_failure(l: &str) -> Option<(Failure, i64)> {
    if let Some(v) = after!(l, "failed (exitcode: ") {
        let (code, rest) = v.split_once(')')?;
        let code: i64 = code.trim().parse().ok()?;
        rest.trim_start().strip_prefix("local_rank: ")?;
        return Some(if code < 0 && !stopped(-code) { (Failure::Crash, -code) } else { (Failure::WorkerExit, code) });
    }
    // errors/__init__.py's table of failures: `  exitcode  : {exitcode} (pid: {pid})`
    if let Some(v) = l.trim_start().strip_prefix("exitcode") {
        let (code, rest) = v.trim_start().strip_prefix(':')?.trim_start().split_once(' ')?;
        let code: i64 = code.parse().ok()?;
        rest.starts_with("(pid: ").then_some(())?;
        return match code {
            0 => None,
            c if c < 0 && stopped(-c) => None,
            c if c < 0 => Some((Failure::Crash, -c)),
            c => Some((Failure::WorkerExit, c)),
        };
    }
    let v = after!(l, "Signal ")?;
    let (n, rest) = v.split_once(' ')?;
    let n: i64 = n.parse().ok()?;
    let rest = rest.strip_prefix('(')?;
    let (name, rest) = rest.split_once(')')?;
    (name.starts_with("SIG") && rest.starts_with(" received by PID ") && !stopped(n)).then_some((Failure::Crash, n))
}

/// torchrun's own exception at its end, the traceback's last line: launcher/api.py raises
/// `ChildFailedError` when a worker failed (a worker stopped from outside makes the agent raise
/// SignalException instead). What it says is in its table of failures (`exitcode : …`), read
/// by [`torchrun_failure`] where the log holds it.
fn child_failed(l: &str) -> bool {
    l.trim_start().starts_with("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")
}

/// The Xid of the NVIDIA driver's kernel log line, `NVRM: Xid (PCI:0000:18:00): 31, pid=…`
/// (older drivers: `NVRM: Xid (0000:01:00): 31, Ch …`), with a syslog or dmesg prefix or none.
fn gpu_xid(l: &str) -> Option<i64> {
    let r = after!(l, "NVRM: Xid (")?;
    let (bus, rest) = r.split_once("): ")?;
    if bus.len() > 24 || !bus.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.' || b"PCI".contains(&b)) {
        return None;
    }
    let n = rest.split([',', ' ']).next()?;
    n.parse::<i64>().ok().filter(|n| (1..10_000).contains(n))
}

/// A process of the job failed, in the words of nccl-tests and of Open MPI's launcher:
/// nccl-tests' TESTCHECK trace, ` .. %s pid %d: Test failure %s:%d` (src/common.h: a test call
/// returned an error, and the test stops; the error's own line comes before it where the test
/// printed one), and Open MPI's help text `%s detected that one or more processes exited with
/// non-zero status, thus causing` (help-errmgr-base.txt; %s: mpirun, mpiexec, prterun). Neither
/// says why: the failing process's own output does.
fn test_or_mpi_failure(l: &str) -> bool {
    // Each at the start of the line, or after a launcher's prefix (`[1,0]<stdout>:`, pdsh's
    // `host: `): never inside quotes, a command or code quoting the words (review 29).
    if let Some((before, after)) = l.split_once(": Test failure ") {
        // (a paste may have lost the line's leading space)
        let Some(i) = before.find(".. ") else { return false };
        let pid = before[i + 3..].rsplit_once(" pid ").map(|(_, p)| p);
        return log_prefix(&before[..i])
            && pid.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            && after
                .rsplit_once(':')
                .is_some_and(|(_, n)| !n.is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit()));
    }
    let Some((before, _)) = l.split_once(" detected that one or more processes exited with non-zero status") else {
        return false;
    };
    launcher_word(before)
}

/// `before` ends with a launcher's name as Open MPI prints it (`mpirun`, `mpiexec`, `prterun`,
/// `orterun`, `(null)`), behind at most a log's prefix (a time, a host, a pod, a rank's tag: review
/// 30) that quotes nothing.
fn launcher_word(before: &str) -> bool {
    let before = before.trim_end();
    // (a full path, `/usr/local/mpi/bin/mpirun`; Open MPI's dashed box run onto the line)
    let (prefix, who) = before.rsplit_once([' ', '\t', ':', '>', ']', '|', '/', '-']).unwrap_or(("", before));
    let word = |w: &str| {
        w == "(null)"
            || (w.len() <= 24
                && w.starts_with(|c: char| c.is_ascii_alphabetic())
                && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
    };
    word(who) && log_prefix(prefix)
}

/// Text that may stand before a launcher's line in a log: a time, a host, a pod, a rank's tag
/// (`[1,0]<stdout>:`, pdsh's `host: `, docker compose's `svc | `), never a quote, a call, an
/// assignment or a variable that would make the line a command or code quoting the words.
fn log_prefix(p: &str) -> bool {
    p.len() <= 96 && !p.contains(['"', '\'', '`', '(', '=', '$'])
}

/// Open MPI's report of a process a signal ended (help-errmgr-base.txt, PRRTE's the same):
/// `%s noticed that process rank %s with PID %s on node %s exited on signal %d (%s).` The
/// signal of the process that failed first; SIGTERM, SIGINT and SIGHUP are stops from outside
/// (a time limit, scancel), as torchrun's are read (review 29: only signal 11 was read, by its
/// words, and a rank that aborted passed).
fn mpi_signal(l: &str) -> Option<i64> {
    let (before, r) = l.split_once(" noticed that process rank ")?;
    if !launcher_word(before) {
        return None;
    }
    let n = first_int(r.split_once(" exited on signal ")?.1)?;
    (!matches!(n, 1 | 2 | 15) && n > 0 && n < 65).then_some(n)
}

/// Which Xids are the job's cause; the rest are notes (`init_completed_after`). A hardware Xid
/// ([`xid_hardware`]) always: the job's own failure may be in words no reader knows, and a GPU
/// off its bus is never a healthy node (review 30). Any other only where the log shows the job
/// failed (a healthy job's log may hold a dmesg's Xid of another process), and never one NVIDIA's
/// catalog asks nothing of a job for ([`xid_informational`], a recovery action of none: review 29).
fn xids_settled(f: &mut LogFacts, tests_wrong: bool) {
    let failed = tests_wrong
        || !f.errors.is_empty()
        || f.failures.iter().any(|x| x.kind != Failure::GpuXid && !x.init_completed_after);
    for x in f.failures.iter_mut().filter(|x| x.kind == Failure::GpuXid) {
        let hw = x.code.is_some_and(xid_hardware);
        x.init_completed_after = !hw && (!failed || x.code.is_some_and(xid_informational) || xid_no_action(&x.line));
    }
}

/// Xids of the GPU's hardware (NVIDIA's catalog: memory 48/64/94/95, NVLink 74, off the bus 79,
/// the GSP 119/120): what the job's errors after it follow from.
pub fn xid_hardware(code: i64) -> bool {
    matches!(code, 48 | 64 | 74 | 79 | 94 | 95 | 119 | 120)
}

/// How much an Xid says: the hardware's, a program's fault, one that asks nothing of a job.
fn xid_weight(code: i64) -> u8 {
    if xid_hardware(code) {
        2
    } else {
        u8::from(!xid_informational(code))
    }
}

/// Xids NVIDIA's catalog asks no action of a job for: 43 (a channel stopped, after a fault the
/// job's own error reports), 45 (clean-up after another Xid or a process's exit), 63 (a row
/// remap or page retirement recorded), 92 (a high single-bit ECC rate).
fn xid_informational(code: i64) -> bool {
    matches!(code, 43 | 45 | 63 | 92)
}

/// Xid 154's recovery action `… to 0x0 (None)`: nothing to do.
fn xid_no_action(l: &str) -> bool {
    l.contains(": 154,") && l.trim_end().trim_end_matches('.').ends_with("(None)")
}

/// A line of source code or of a document (Python, a shell script, Markdown), by its first
/// word: a file holding one is read as no log of the warnings it quotes.
fn source_or_document(l: &str) -> bool {
    let t = l.trim_start();
    [
        "def ", "class ", "import ", "from ", "\"\"\"", "\'\'\'", "```", "#!", "echo ", "print(", "raise ", "if ",
        "elif ", "return ",
    ]
    .iter()
    .any(|w| t.starts_with(w))
}

/// How many lines before NCCL's first are kept for [`Analyser::bare_warnings`], and the
/// longest kept (NCCL's WARN lines are under 1 KiB; a longer line is another program's).
const UNTAGGED_LINES: usize = 128;
const UNTAGGED_LEN: usize = 1024;

/// torch.multiprocessing.spawn (ProcessContext.join, torch/multiprocessing/spawn.py): when one
/// process exits non-zero it logs `Terminating process %s via signal SIGTERM` for each one still
/// alive, then raises ProcessRaisedException (`-- Process %d terminated with the following
/// error:`) or ProcessExitedException (`process %d terminated with signal %s`, `… with exit code
/// %d`). Those lines come only after a failure (DeepEP's and other spawn-launched tests: the
/// job's worker failed), or after a stop from outside (SIGTERM: not a failure).
fn spawn_failure(l: &str) -> Option<(Failure, Option<i64>)> {
    if has!(l, "Terminating process ") && has!(l, " via signal SIGTERM") {
        return Some((Failure::WorkerExit, None));
    }
    if has!(l, "Process ") && has!(l, " terminated with the following error:") {
        return Some((Failure::WorkerExit, None));
    }
    // ProcessExitedException: `process %d terminated with exit code %d` (a process that exited
    // without an error file: sys.exit, os._exit; review 22: one process per node, no other
    // left to terminate, prints nothing else)
    if let Some(v) = after!(l, " terminated with exit code ") {
        has!(l, "process ").then_some(())?;
        let code = first_int(v)?;
        return (code != 0).then_some((Failure::WorkerExit, Some(code)));
    }
    let v = after!(l, " terminated with signal ")?;
    has!(l, "process ").then_some(())?;
    let n = match v.trim().trim_end_matches(['.', '\'', '"']) {
        "SIGSEGV" => 11,
        "SIGABRT" => 6,
        "SIGKILL" => 9,
        "SIGBUS" => 7,
        "SIGFPE" => 8,
        "SIGILL" => 4,
        // SIGTERM, SIGINT, SIGHUP: stopped from outside (a time limit, a preemption), as
        // torchrun's `stopped` reads them (review 22)
        "SIGTERM" | "SIGINT" | "SIGHUP" => return None,
        _ => return Some((Failure::WorkerExit, None)),
    };
    Some((Failure::Crash, Some(n)))
}

/// SIGHUP, SIGINT, SIGTERM: a worker stopped from outside (torchrun stopping the others after a
/// failure, scancel, a time limit), not one that crashed.
fn stopped(signal: i64) -> bool {
    matches!(signal, 1 | 2 | 15)
}

/// Up to three host names, then how many more.
fn some_hosts(h: &[String]) -> String {
    let more = if h.len() > 3 { format!(" and {} more", h.len() - 3) } else { String::new() };
    format!("{}{more}", h.iter().take(3).cloned().collect::<Vec<_>>().join(", "))
}

/// Rows whose `%s` (or place) decides the cause: the class of a row, words of the message, and
/// the class those words make it.
const REFINED: &[(&str, &str, &str)] = &[
    // any call that failed with EMFILE (socket, accept, open, shm_open), whatever its row's
    // class (`""`): the descriptor limit (device set 11: `ulimit -n 160`)
    ("", "Too many open files", "fd-limit"),
    // xml.h's xmlGetAttrStr for a NIC that sysfs shows no PCI device for (a virtual NIC, an
    // unusual platform): topology detection cannot place it
    ("topology-internal", "busid of node nic", "topology-nic-no-busid"),
    // nvmlwrap's `nvmlDeviceGetHandleByPciBusId() failed: %s` with NVML's "Not Found": no GPU
    // at that bus id for this process
    ("nvml-call-failed", "nvmlDeviceGetHandleByPciBusId() failed: Not Found", "nvml-gpu-not-found"),
    // proxy.cc: the proxy service thread's own warnings, and the Close it fails while the
    // communicator is torn down (finish drops them together); their own classes, so that a
    // bootstrap's accept or a Connect that fails is never merged with them
    ("socket-accept-failed", "[Service thread] Accept failed", "proxy-service-thread"),
    ("proxy-error", "[Service thread] Could not receive type from localRank", "proxy-service-thread"),
    ("proxy-op-failed", "Failed to execute operation Close from rank", "proxy-teardown"),
    // NCCL's shared memory is the only caller of (posix_)fallocate and ftruncate (include/shm.h
    // before 2.12 as `Call to posix_fallocate failed : No space left on device`): /dev/shm
    ("syscall-failed", "fallocate failed", "shm-space"),
    ("syscall-failed", "ftruncate failed", "shm-space"),
];

/// cudaGetErrorString's words for the errors a distributed job meets (CUDA's
/// `cudaErrorPeerAccessUnsupported`, `…IllegalAddress`, `…MemoryAllocation`, `…InvalidDevice`,
/// `…LaunchFailure`, `…DevicesUnavailable`, `…InsufficientDriver`, `…NoDevice`), where a line
/// quotes them without a CUDA error's usual frame.
pub const CUDA_WORDS: [&str; 8] = [
    "peer access is not supported between these two devices",
    "an illegal memory access was encountered",
    "out of memory",
    "invalid device ordinal",
    "unspecified launch failure",
    "all CUDA-capable devices are busy or unavailable",
    "CUDA driver version is insufficient for CUDA runtime version",
    "no CUDA-capable device is detected",
];

/// The CUDA error's words a line quotes (one of [`CUDA_WORDS`]).
pub fn cuda_words(l: &str) -> Option<&'static str> {
    CUDA_WORDS.iter().find(|w| l.contains(*w)).copied()
}

/// Whether a warning cut short may take `class` (review 20): not where the words after the cut
/// decide what it means — the classes [`REFINED`] splits by the message's text, an async event's
/// name (`benign_ib_event`: `client reregistration` is harmless), a provider search's
/// `fi_getinfo` (a search a later selection ends) — nor harmless or unclassified, which would
/// pass a line over or say nothing.
fn cut_may_take(class: &str) -> bool {
    !matches!(class, "harmless" | "unclassified" | "ib-async-event" | "ofi-no-device")
        && !REFINED.iter().any(|r| r.0 == class)
}

/// A row's class, or the one [`REFINED`] gives this message.
fn refined_class(class: &'static str, msg: &str) -> &'static str {
    REFINED.iter().find(|(c, w, _)| (c.is_empty() || *c == class) && msg.contains(w)).map_or(class, |r| r.2)
}

/// The verbs events of a queue pair, a completion queue or the device, not a port: libibverbs'
/// ibv_event_type_str for IBV_EVENT_QP_FATAL, _QP_REQ_ERR, _QP_ACCESS_ERR (`… work queue …
/// error`), _CQ_ERR, _DEVICE_FATAL, _SRQ_ERR (`… catastrophic error`) and _WQ_FATAL.
fn fatal_ib_event(msg: &str) -> bool {
    ["work queue", "CQ error", "catastrophic error", "WQ fatal"].iter().any(|w| msg.contains(w))
}

/// The verbs events NCCL's async thread prints that are not faults: every event but
/// "communication established" is a WARN up to 2.22 (`Got async event : %s`, the string of
/// ibv_event_type_str), and 2.23+ print these under "the above are non-fatal" with port errors
/// (net_ib/common.cc). The event's words decide, as in libibverbs' table.
fn benign_ib_event(msg: &str) -> bool {
    const BENIGN: [&str; 11] = [
        "client reregistration",
        "port active",
        "LID change",
        "P_Key change",
        "SM change",
        "send queue drained",
        "path migrated",
        "GID table change",
        "last WQE reached",
        "SRQ limit reached",
        "communication established",
    ];
    let event = msg.rsplit(": ").next().unwrap_or("");
    BENIGN.iter().any(|b| event.starts_with(b))
}

/// What a class of `warns.tsv` is to the readers: `Some(None)` harmless, `Some(Some(k))` a
/// failure a specific rule explains, `None` the table's own class (or unclassified).
fn table_kind(class: &str) -> Option<Option<Failure>> {
    Some(Some(match class {
        "harmless" => return Some(None),
        "socket-connect-failed" => Failure::SocketConnect,
        "no-socket-interface" => Failure::NoSocketInterface,
        "remote-exit" | "proxy-connection-lost" => Failure::RemoteExit,
        "ib-completion-error" => Failure::CompletionError,
        "qp-modify-failed" => Failure::QpOther,
        "ibv-call-failed"
        | "ibv-reg-mr-failed"
        | "ibv-resource-alloc-failed"
        | "dmabuf-reg-failed"
        | "ibv-post-failed" => Failure::IbvResource,
        "ib-open-device-failed" => Failure::IbOpenFailed,
        "ib-device-fatal" | "ib-qp-fatal" | "ib-cq-fatal" | "ib-fatal-propagated" => Failure::IbvFatalEvent,
        "ib-async-event" => Failure::PortError,
        "ib-mixed-link-layer" => Failure::IncompatibleDevices,
        "ofi-av-insert" | "ofi-cq-error" | "ofi-security-group" => Failure::OfiPeer,
        "ofi-no-device" | "ofi-init-failed" | "ofi-endpoint-failed" => Failure::OfiNoDevice,
        "sharp-job-failed" | "sharp-op-failed" | "collnet-unavailable" => Failure::CollNet,
        "topo-xml" => Failure::TopologyFile,
        "roce-gid-type-unreadable" | "gid-change" => Failure::RoceGid,
        "duplicate-gpu" => Failure::DuplicateGpu,
        "collective-mismatch" => Failure::CollectiveMismatch,
        "cuda-error" | "cuda-oom" => Failure::CudaFailure,
        _ => return None,
    }))
}

/// NCCL error results as frameworks relay them (`ncclInternalError: …`, `unhandled system
/// error`, PyTorch's `NCCL error in: …`).
fn nccl_error(l: &str) -> Option<&str> {
    // The first of these, in this order, that the line holds (one pass of an automaton over the
    // line, where ten searches ran one after the other), from its first occurrence.
    // ncclGetErrorString's words (init.cc) as XLA, JAX and others relay them without the
    // result's name: `internal error - please report this issue to the NCCL developers`,
    // `unhandled cuda error (run with NCCL_DEBUG=INFO for details)`.
    const PATS: [&str; 16] = [
        "ncclInternalError",
        "ncclSystemError",
        "ncclRemoteError",
        "ncclInvalidUsage",
        "ncclInvalidArgument",
        "ncclUnhandledCudaError",
        "unhandled system error",
        "NCCL error",
        "ncclSocketInit:",
        "Test NCCL failure",
        "internal error - please report this issue to the NCCL developers",
        "unhandled cuda error",
        "remote process exited or there was a network error",
        "invalid usage (run with NCCL_DEBUG=",
        "invalid argument (run with NCCL_DEBUG=",
        // TensorFlow's and XLA's relay, `%s:%d: NCCL operation %s failed: %s` (nccl_utils.cc,
        // ToStatus/TranslateStatus): any release's ncclGetErrorString after it (before 2.18
        // `invalid usage`, `internal error`, `invalid argument` with nothing after them)
        "NCCL operation ",
    ];
    static AC: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    let ac = AC.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::Standard)
            .build(PATS)
            .expect("nccl_error's literals build")
    });
    let mut best: Option<(usize, usize)> = None; // (pattern, start)
    for m in ac.find_overlapping_iter(l) {
        let (p, at) = (m.pattern().as_usize(), m.start());
        // (after `file:line: `, `INTERNAL: ` or at the line's start, as XLA writes it)
        if p == PATS.len() - 1 && (!(at == 0 || l[..at].trim_end().ends_with(':')) || !xla_relay(&l[at..])) {
            continue;
        }
        best = match best {
            Some((bp, bs)) if bp < p || (bp == p && bs <= at) => Some((bp, bs)),
            _ => Some((p, at)),
        };
    }
    best.map(|(_, at)| &l[at..])
}

/// After XLA's `NCCL operation `: the call, then ` failed: ` and one of ncclGetErrorString's
/// results (every release's words; `NCCL operation in progress` is itself one, not a relay).
fn xla_relay(v: &str) -> bool {
    const RESULTS: [&str; 7] = [
        "unhandled cuda error",
        "unhandled system error",
        "internal error",
        "invalid argument",
        "invalid usage",
        "remote process exited or there was a network error",
        "unknown result code",
    ];
    v.starts_with("NCCL operation nccl")
        && v.find(" failed: ").is_some_and(|i| RESULTS.iter().any(|r| v[i + 9..].starts_with(r)))
}

/// ncclGetLastError's text as frameworks relay it: PyTorch ≥ 2.2 `Last NCCL warning(error):
/// '<msg>'` (to the end of the line), XLA's `Last NCCL warning(error) log entry (may be
/// unrelated) '<msg>'.` (between the quotes).
fn last_nccl_warning(l: &str) -> Option<&str> {
    if let Some(v) = after!(l, "Last NCCL warning(error) log entry (may be unrelated) '") {
        // `… '%s'.` then XLA's own `; current tracing scope: …`: up to the quote that ends it
        let end = v.rfind("'.").or_else(|| v.rfind('\'')).unwrap_or(v.len());
        return Some(v[..end].trim());
    }
    let v = after!(l, "Last NCCL warning(error):")?;
    Some(v.trim().trim_matches('\'').trim_matches('"'))
}

/// `… WARN <msg>` without NCCL's tag, when `<msg>` is in NCCL's words (a subsystem such as
/// `NET/IB`, a verbs call, NCCL's source files or variables).
fn bare_warn(l: &str) -> Option<&str> {
    let msg = l.strip_prefix("WARN ").or_else(|| after!(l, " WARN "))?.trim();
    let ncclish = ["NET/", "ibv_", "Bootstrap", "NCCL", "misc/", "transport/", "proxy", "socket", "Cuda failure"];
    ncclish.iter().any(|p| msg.contains(p)).then_some(msg)
}

const MAX_WARNS: usize = 200;
const MAX_FAILURES: usize = 64;
const MAX_ERRORS: usize = 64;
const MAX_SMALL: usize = 4096;
const MAX_HOSTS: usize = 65536;

/// Reads a log one line at a time; `finish` gives the facts.
#[derive(Default)]
pub struct Analyser {
    f: LogFacts,
    networks: BTreeSet<String>,
    boot: BTreeSet<String>,
    hosts: rustc_hash::FxHashSet<String>,
    /// Hosts of segments that begin mid-line (a flattened line after its first): kept unless
    /// a host of a whole line ends them (two processes' writes glued: `cudaDev 0ljm:…`).
    weak_hosts: BTreeSet<(String, String)>,
    /// `host:pid` ([`proc_of`]) of whole lines (bounded): a weak host glued to one of these
    /// names, of the same process, is that host.
    strong_procs: rustc_hash::FxHashSet<String>,
    /// `host:pid` of the last whole NCCL line (a process's lines come in runs: the next line of
    /// the same process looks nothing up).
    last_proc: String,
    /// The line being read is such a segment.
    segment: bool,
    seen: rustc_hash::FxHashSet<(u8, String)>,
    seen_dev: rustc_hash::FxHashSet<(String, u32)>,
    /// The device list of the last `NET/IB : Using` line read, and how many ports it names:
    /// every rank prints the same list, read once.
    last_ib: Option<(String, usize)>,
    gdr_disabled: bool,
    /// The previous line was a framework's `Last error:`: the next one is NCCL's warning.
    own: OwnLines,
    last_error_next: bool,
    /// What stood before `Last error:` on its line (a logger's or relay's prefix, bounded):
    /// the next line carries it too.
    last_error_prefix: String,
    /// nccl-tests' header was seen (`# nThread …`, `#  Rank …`): the job's output began, with
    /// NCCL's lines or without them (NCCL_DEBUG unset).
    tests_began: bool,
    /// torchrun's `ChildFailedError` line, and the rows of its table of failures seen: where
    /// the table was cut from the log, a worker exited, its code unknown (set 118's
    /// modded-nanogpt#15).
    child_failed: Option<String>,
    exit_rows: usize,
    /// The node counts lines stated before NCCL's first (each count and kind once): settled
    /// into [`LogFacts::launcher_nodes`] by [`settled_launcher_nodes`].
    launcher_nodes: Vec<(usize, String, Stated)>,
    /// Lines before NCCL's first (bounded: [`UNTAGGED_LINES`] of at most [`UNTAGGED_LEN`]
    /// bytes): where no line of the log is NCCL's, each is looked up as a WARN's text without
    /// its prefix ([`crate::nccl::warns::lookup_bare`]).
    untagged: Vec<String>,
    /// nccl-tests' TESTCHECK trace or Open MPI's report of a failed process (the first): a
    /// worker's failure only where the log holds no other failure, error or wrong result (it is
    /// their trace: nccl-tests prints it after its `Test NCCL failure` line, or after a table
    /// whose `Out of bounds values` FAILED; mpirun after the process's own output).
    trace_exit: Option<String>,
    /// nccl-tests' `# Out of bounds values : N FAILED`.
    tests_wrong: bool,
    /// A line with `#` first was seen (nccl-tests' header or summary, a script's comment).
    hash_seen: bool,
    /// A line of source code or of a document before NCCL's first ([`source_or_document`]).
    source_like: bool,
    /// The processes of the current nccl-tests run (its rank lines).
    tests_procs: BTreeSet<String>,
    /// Every reader on every line, no gate and no short paths (the reference the gated
    /// reading is tested against).
    ungated: bool,
    /// WARN texts looked up in `warns.tsv`, and what they matched (bounded).
    table_seen: rustc_hash::FxHashMap<String, Option<&'static super::warns::Row>>,
    /// The first warnings the table knew, for a cut copy of one.
    known_warns: Vec<(String, &'static super::warns::Row)>,
    /// An IB queue pair's `qpn` line was seen (the network is IB where no line names it).
    ib_qp: bool,
    /// Per-host views in order of first sight, their index by host, the last one used.
    views: Vec<(String, HostView)>,
    view_idx: rustc_hash::FxHashMap<String, usize>,
    last_view: Option<usize>,
    /// The IB devices net_ib.cc's device lines gave a port speed for.
    port_speed_devs: BTreeSet<String>,
    /// NCCL's return-code traces that reached set-up, and the first (a bootstrap one first).
    trace_failures: usize,
    trace_line: Option<String>,
    trace_bootstrap: bool,
    /// Processes (`host:pid`) whose set-up traced an error before any init of theirs completed,
    /// and no init of theirs has completed since; a trace of no known process, or of one past
    /// its init, or past the bound, sets `trace_kept`.
    traced_procs: BTreeSet<String>,
    trace_kept: bool,
    /// The `host:pid` of the WARN line being read, and each source-table warning's process, the
    /// failure's index, and whether that process completed its init after it.
    warn_proc: Option<String>,
    /// The failure c10d's store-wait warning opened, and the line the last init completed on.
    store_wait: Option<usize>,
    /// The watchdog's `failure detected by watchdog` lines, which NCCL's own async error makes
    /// as well as a timeout: a collective-timeout failure seen on these alone is no timeout.
    watchdog_failure_lines: usize,
    /// The processes (`host:pid`) that printed a warning no rule knows.
    unknown_procs: Vec<String>,
    last_done_at: usize,
    warned: Vec<(String, usize, bool)>,
    /// Failures printed by more processes than `warned` follows.
    warned_unfollowed: BTreeSet<usize>,
    /// Processes (`host:pid`) that completed an init (bounded): a warning one prints after it
    /// (a lazy connection, a later communicator) is not followed by a later completion
    /// (review 4: a /dev/shm full after Init COMPLETE, then a split's Init COMPLETE).
    done_procs: BTreeSet<String>,
    /// The WARN being read is RAS's own (`ras/client_support.cc:`), and the failures such
    /// warnings were recorded under, with how many (review 4: a count alone dropped the job's).
    ras_line: bool,
    ras_origin: Vec<(usize, usize)>,
    /// aws-ofi-nccl selected a provider; how many of its no-device lines were the provider
    /// search's (`No eligible providers`, `fi_getinfo`), which a selection after them ends.
    ofi_selected: bool,
    /// RAS's `RAS failed to establish a client listening socket at %s` (ras/client_support.cc):
    /// its bind/listen WARN just before is RAS's own port, not the job's (it goes on).
    ras_client_failed: usize,
    ofi_search_failed: usize,
    /// At each restart of torchrun's worker group: the failures a worker's attempt may show
    /// (its exit, a crash, a CUDA error), by index, with their count then (bounded).
    retried: Vec<(usize, usize)>,
    /// Inits completed when the last restart was read: the retry counts only if one more
    /// completed after it.
    init_at_restart: usize,
    /// The ranks whose watchdog said it ends the process (`[Rank N] To avoid data
    /// inconsistency, we are taking the entire process down.`; `u32::MAX`: no rank given): a
    /// SIGABRT of that worker is that end, not a crash of its own (bounded).
    pg_abort: Vec<u32>,
    /// `(rank, nranks)` of prefixed `rank R nranks N` lines (bounded).
    rank_pairs: BTreeSet<(usize, usize)>,
    /// The first rank whose `Init START` named each (host, commId, busId) (bounded).
    init_starts: BTreeMap<(String, u64, u64), InitStart>,
    /// Pairs of ranks of one communicator that started on one host name's one busId: (host,
    /// commId, busId, the two) (at most 16).
    same_gpu_starts: Vec<SameGpuStart>,
    /// The first address each process (`host:pid`) bootstrapped on or named as its OOB interface's
    /// (bounded): one address, one machine.
    proc_addr: BTreeMap<String, String>,
    /// The commIds of `Init COMPLETE` lines (bounded).
    comms_done: BTreeSet<u64>,
}

/// A rank's `Init START`: the rank, its process (`host:pid`), its CUDA device ordinal.
#[derive(Debug, Clone, Default)]
struct InitStart {
    rank: usize,
    proc: String,
    dev: Option<i64>,
}

/// Two ranks of one communicator that started on one host name's one busId.
#[derive(Debug, Clone, Default)]
struct SameGpuStart {
    host: String,
    comm: u64,
    bus: u64,
    first: InitStart,
    other: InitStart,
}

/// `Failed to open libibverbs.so[.1]`, `Could not open libibverbs…`, 2.30's `Count not open
/// libibverbs.so.1`: libibverbs is missing, a fact of its own (read as INFO or as WARN).
fn libibverbs_missing(l: &str, m: u64) -> bool {
    hasm!(l, m, "Failed to open libibverbs")
        || (hasm!(l, m, "ould not open") && hasm!(l, m, "libibverbs"))
        // 2.30 prints `Count not open <name>` for every name it tries (NCCL_IBVERBS_LIB,
        // libibverbs.so, libibverbs.so.1): only the last one failing is libibverbs missing.
        || hasm!(l, m, "Count not open libibverbs.so.1")
}

/// NCCL named as a program's output names it: in an identifier or a path (`nccl_op_test`,
/// `libnccl.so`, `NCCLTester`), not in prose ("nothing about NCCL here"), in binary data (bytes
/// that are not UTF-8, read as U+FFFD) or in a script's settings (`export NCCL_DEBUG=INFO`, `#SBATCH`: review 3).
fn names_nccl(l: &str) -> bool {
    let named = has!(l, "nccl")
        || memchr::memmem::find_iter(l.as_bytes(), b"NCCL")
            .any(|i| l.as_bytes().get(i + 4).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_'));
    let t = l.trim_start();
    named
        && !l.contains('\u{FFFD}')
        && !["export ", "#SBATCH", "srun ", "NCCL_", "torchrun ", "python ", "python3 "]
            .iter()
            .any(|p| t.starts_with(p))
}

/// The nodes a launcher was told to span, as a line of the log states it, read from the
/// launcher's own options only (those between its name and the first word that is none, so a
/// program's `numactl -N 2` after `srun` is not Slurm's; review 27): torchrun (`torchrun`,
/// `python -m torch.distributed.run|launch`) with `--nnodes N` or `--nnodes=N:N` (run.py:
/// `<minimum_nodes>:<maximum_nodes>`; a range of two counts states none) or `--standalone`
/// (one node); torchrun's own report of its launch configs (launcher/api.py: `  min_nodes
/// : N`, at least that many: it counts only from two, and disagrees with any other count);
/// `srun` with `-N N`, `-NN` or `--nodes=N` (`N-M`: at least N; the step's nodes, not the
/// allocation's that `#SBATCH`, `salloc` and SLURM_NNODES give, of which a step may use one);
/// DeepSpeed's `--num_nodes N` and `accelerate launch`'s `--num_machines N`. Not a comment
/// (`# srun -N 2`, a script's notes). The count, its words, and how the line states it.
fn launcher_nodes(l: &str) -> Option<(usize, String, Stated)> {
    let h = l.trim_start();
    let b = h.as_bytes();
    // (one byte test first: every form below holds "node", "NODES", "-N", "standalone" or "machines")
    if [&b"node"[..], b"NODES", b"-N", b"standalone", b"machines"].iter().all(|w| memchr::memmem::find(b, w).is_none())
    {
        return None;
    }
    if let Some(a) = allocation_nodes(h) {
        return Some(a);
    }
    if b.first() == Some(&b'#') {
        return None;
    }
    // (its column padding before the ':', which a YAML key such as an autoscaler's has not)
    if let Some(v) = h.split_once("min_nodes ").and_then(|(_, r)| r.trim_start().strip_prefix(':')) {
        if let Some(n) = v.split_whitespace().next().and_then(|v| v.parse::<usize>().ok()).filter(|n| *n >= 1) {
            return Some((n, format!("torchrun's launch configs: min_nodes {n}"), Stated::Report));
        }
    }
    let words: Vec<&str> = h.split_whitespace().take(256).collect();
    // (name, the options that take no value, the flags that give the nodes, how a range reads)
    const LAUNCHERS: [(&str, &[&str], &[&str], Span); 6] = [
        ("torchrun", TORCHRUN_BOOL, &["--nnodes"], Span::Equal),
        ("torch.distributed.run", TORCHRUN_BOOL, &["--nnodes"], Span::Equal),
        ("torch.distributed.launch", TORCHRUN_BOOL, &["--nnodes"], Span::Equal),
        ("srun", SRUN_BOOL, &["--nodes", "-N"], Span::Least),
        (
            "deepspeed",
            &["--no_ssh_check", "--no_local_rank", "--no_python", "--module", "--force_multi"],
            &["--num_nodes"],
            Span::Least,
        ),
        (
            "accelerate",
            &["--multi_gpu", "--cpu", "--use_deepspeed", "--use_fsdp", "--no_python", "-m", "--module", "--debug"],
            &["--num_machines"],
            Span::Least,
        ),
    ];
    for (name, bools, flags, span) in LAUNCHERS {
        let Some(at) = words.iter().position(|w| w.ends_with(name)) else { continue };
        // (accelerate's options follow its `launch` subcommand)
        let from = at + 1 + usize::from(name == "accelerate" && words.get(at + 1) == Some(&"launch"));
        let opts = options(&words[from.min(words.len())..], bools);
        if let Some((n, how)) = node_flag(opts, flags, span) {
            return Some((n, format!("the launch command's {how}"), Stated::Exact));
        }
        if name.starts_with("torch") && opts.contains(&"--standalone") {
            return Some((1, "the launch command's --standalone".into(), Stated::Exact));
        }
    }
    None
}

/// The job's nodes from what its lines stated: the one launcher's count (two different ones
/// state none), or torchrun's report of at least two alone; a report of another minimum than
/// the command's, or a count over the allocation's, states none.
fn settled_launcher_nodes(all: &[(usize, String, Stated)]) -> Option<(usize, String)> {
    let of = |k: Stated| all.iter().filter(move |x| x.2 == k);
    let mut exact = of(Stated::Exact);
    let report = of(Stated::Report).next();
    let (n, how) = match (exact.next(), exact.next(), report) {
        (Some(_), Some(_), _) => return None,
        (Some(e), None, Some(r)) if r.0 != e.0 => return None,
        (Some(e), None, _) => (e.0, &e.1),
        (None, _, Some(r)) if r.0 >= 2 => (r.0, &r.1),
        _ => return None,
    };
    (of(Stated::Report).count() <= 1 && of(Stated::AtMost).all(|m| n <= m.0)).then(|| (n, how.clone()))
}

/// How a line states the nodes: a launcher's count, torchrun's report of its minimum (at
/// least that many, and exactly what its command said), or an allocation's (Slurm's
/// `#SBATCH`, `sbatch`, `salloc`, SLURM_NNODES, SLURM_JOB_NUM_NODES: at most that many, for
/// a step may use fewer; review 27).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stated {
    Exact,
    Report,
    AtMost,
}

/// The nodes of a Slurm allocation (`#SBATCH -N 2`, `#SBATCH --nodes=2-4`, `sbatch`/`salloc`
/// with the same, `SLURM_NNODES=2`, `SLURM_JOB_NUM_NODES=2`): at most that many (a range's
/// largest).
fn allocation_nodes(h: &str) -> Option<(usize, String, Stated)> {
    for var in ["SLURM_NNODES=", "SLURM_JOB_NUM_NODES="] {
        if let Some(n) = h.split_whitespace().find_map(|w| w.strip_prefix(var)).and_then(|v| node_value(v, Span::Most))
        {
            return Some((n, format!("{var}{n}"), Stated::AtMost));
        }
    }
    let words: Vec<&str> = h.split_whitespace().take(64).collect();
    let at = words.iter().position(|w| *w == "#SBATCH" || w.ends_with("sbatch") || w.ends_with("salloc"))?;
    let opts = if words[at] == "#SBATCH" { &words[at + 1..] } else { options(&words[at + 1..], SRUN_BOOL) };
    let (n, how) = node_flag(opts, &["--nodes", "-N"], Span::Most)?;
    Some((n, format!("Slurm's allocation ({} {how})", words[at].trim_start_matches('#')), Stated::AtMost))
}

/// torchrun's options that take no value (run.py's `store_true` ones).
const TORCHRUN_BOOL: &[&str] = &[
    "--standalone",
    "--no-python",
    "--no_python",
    "--run-path",
    "--run_path",
    "-m",
    "--module",
    "--virtual-local-rank",
];

/// srun's options that take no value.
const SRUN_BOOL: &[&str] = &[
    "--exclusive",
    "--overlap",
    "--pty",
    "--unbuffered",
    "-u",
    "--label",
    "-l",
    "--kill-on-bad-exit",
    "-K",
    "--no-kill",
    "-k",
    "--overcommit",
    "-O",
    "--quiet",
    "-Q",
    "--verbose",
    "-v",
    "--exact",
    "--whole",
    "--x11",
    "--spread-job",
    "--use-min-nodes",
    "--multi-prog",
    "--test-only",
    "--disable-status",
    "-X",
    "--preserve-env",
    "-E",
    "--hold",
    "-H",
];

/// A launcher's options: its words up to the first that is none (the program it runs), an
/// option's value taken with it (`-N 2`, `--nodes 2`; `--nodes=2` and `bools` take none).
fn options<'a, 'w>(words: &'a [&'w str], bools: &[&str]) -> &'a [&'w str] {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if !w.starts_with('-') {
            break;
        }
        // (`-N2`: a short option with its value attached)
        let takes_value = (w.starts_with("--") || w.len() <= 2) && !bools.contains(w) && !w.contains('=');
        i += if takes_value && words.get(i + 1).is_some_and(|v| !v.starts_with('-')) { 2 } else { 1 };
    }
    &words[..i]
}

/// How a launcher's range of node counts reads: torchrun's `N:M` states a count only where
/// the two are equal; srun's and the like's `N-M` at least N (from two up); an allocation's
/// `N-M` at most M.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Span {
    Equal,
    Least,
    Most,
}

/// A node count as a launcher's flag gives it: `N`, or a range read as `span` says.
fn node_value(v: &str, span: Span) -> Option<usize> {
    let v = v.trim_matches(['"', '\'', ',', ';']);
    let sep = if span == Span::Equal { ':' } else { '-' };
    let n: usize = match (v.split_once(sep), span) {
        (Some((a, b)), Span::Equal) => (a == b).then(|| a.parse().ok()).flatten()?,
        (Some((a, _)), Span::Least) => a.parse().ok().filter(|n| *n >= 2)?,
        (Some((_, b)), Span::Most) => b.parse().ok()?,
        (None, _) => v.parse().ok()?,
    };
    (1..=100_000).contains(&n).then_some(n)
}

/// The value of the first of `names` among `words`: `--flag N`, `--flag=N`, `-NN`; the count
/// and the flag as written.
fn node_flag(words: &[&str], names: &[&str], span: Span) -> Option<(usize, String)> {
    for (i, w) in words.iter().enumerate() {
        for name in names {
            let v = if *w == *name {
                words.get(i + 1).copied()
            } else if let Some(v) = w.strip_prefix(name).and_then(|v| v.strip_prefix('=')) {
                Some(v)
            } else if name.len() == 2 && w.len() > 2 && w.starts_with(name) {
                Some(&w[2..])
            } else {
                None
            };
            if let Some((v, n)) = v.and_then(|v| Some((v, node_value(v, span)?))) {
                return Some((n, format!("{name} {}", v.trim_matches(['"', '\'']))));
            }
        }
    }
    None
}

/// A line of PyTorch's distributed launcher or its c10d library, as their loggers print them at
/// the line's start (after [`super::unwrap_line`] took off `[rankN]:`, srun's `N: ` and a
/// bracketed date): torchrun's Python logger, ≥ 2.2 `W1206 10:16:49.271000 643
/// torch/distributed/run.py:851] …`, 2.1 `torch.distributed.run: [WARNING] …` (its `[date]`
/// taken off), ≤ 2.0 `WARNING:torch.distributed.run:…`; c10d's C++ one, `[W1206
/// 10:16:49.709806710 socket.cpp:207] [c10d] …` (older `[W socket.cpp:426] [c10d] …`). Not a
/// path in a linter's or grep's output, prose or a script (review 6).
fn launcher_line(l: &str) -> bool {
    let h = l.trim_start();
    if let Some(i) = h.find("torch/distributed/") {
        // glog's header, exactly: level and date, time, pid, then the file
        let head: Vec<&str> = h[..i].split_whitespace().collect();
        let level = |t: &str| {
            let b = t.as_bytes();
            b.len() == 5 && b"IWEF".contains(&b[0]) && b[1..].iter().all(u8::is_ascii_digit)
        };
        let glog = head.len() == 3
            && level(head[0])
            && head[1].contains(':')
            && head[2].bytes().all(|b| b.is_ascii_digit())
            && h[i..]
                .split_once(".py:")
                .is_some_and(|(_, r)| r.split_once("] ").is_some_and(|(n, _)| n.bytes().all(|b| b.is_ascii_digit())));
        if glog {
            return true;
        }
    }
    let py_logger = ["DEBUG:", "INFO:", "WARNING:", "ERROR:", "CRITICAL:"]
        .iter()
        .any(|p| h.strip_prefix(p).is_some_and(|r| r.starts_with("torch.distributed.")));
    let levelled = h.strip_prefix("torch.distributed.").is_some_and(|r| {
        r.split_once(": [").is_some_and(|(m, lv)| {
            !m.contains(' ') && ["DEBUG]", "INFO]", "WARNING]", "ERROR]", "CRITICAL]"].iter().any(|x| lv.starts_with(x))
        })
    });
    // c10d: `[<L>… <file>.cpp:<N>] [c10d] ` opening the line
    let c10d = h.split_once("] [c10d] ").is_some_and(|(b, _)| {
        b.starts_with('[')
            && b[1..].starts_with(['I', 'W', 'E', 'F'])
            && !b[1..].contains('[')
            && b.rsplit_once(".cpp:").is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    });
    py_logger || levelled || c10d
}

/// An HCA NCCL could not open stays the cause where NCCL was then left with no RDMA device,
/// or its host with fewer HCA ports than another (review 4: half the rails); elsewhere NCCL
/// skipped it and a completed init makes it a note.
fn ib_open_kept(f: &mut LogFacts) {
    let ports = || f.per_host.values().map(|v| v.ib_ports).filter(|p| *p > 0);
    let uneven = ports().min() != ports().max();
    let no_rdma = f.ib_no_device || f.network.as_deref().is_some_and(is_tcp_name) || uneven;
    for x in f.failures.iter_mut().filter(|x| x.kind == Failure::IbOpenFailed && no_rdma) {
        x.init_completed_after = false;
    }
}

/// The provider's name in aws-ofi-nccl's `Selected provider is %s, fabric is %s …`.
fn ofi_provider(l: &str) -> Option<String> {
    let p = l.split_once("rovider is ")?.1.split([',', ' ']).next()?;
    (!p.is_empty()).then(|| clip(p, 40))
}

/// What Slurm says of the job (slurmstepd's and srun's `error()` lines), as a failure and its
/// code. Slurm stopped it (`SlurmStopped`: 1 a time limit, `*** %s ON %s CANCELLED AT %s DUE TO
/// TIME LIMIT ***`, older releases without `ON %s`; 2 a node failure, `… DUE TO NODE FAILURE,
/// SEE SLURMCTLD LOG FOR DETAILS ***`; 3 out of memory: cgroup v1's `Detected %u oom-kill
/// event(s) in %s`, task/cgroup v2's `Detected %lu oom_kill event%s in %ps. …`, slurmstepd's
/// `Step %u.%u exceeded memory limit (%lu > %lu), being killed`, srun's `%s: task %d: Out Of
/// Memory`); a task died of a signal (srun's `%s: task %d: %s` with strsignal's words: `Crash`);
/// a task or step failed (`Exited with exit code %d`, `*** STEP %s ON %s FAILED (non-zero exit
/// code or other failure mode) ***`: `WorkerExit`). Preemption, requeue and a user's scancel
/// are not failures of the job.
fn slurm_line(l: &str) -> Option<(Failure, i64)> {
    let stopped = |c| Some((Failure::SlurmStopped, c));
    if (has!(l, "oom-kill event") || has!(l, "oom_kill event")) && has!(l, "Detected ") {
        return stopped(3);
    }
    if has!(l, "exceeded memory limit") && has!(l, "being killed") {
        return stopped(3);
    }
    if let Some((_, r)) = l.split_once("*** ") {
        if has!(r, " FAILED (non-zero exit code") {
            return Some((Failure::WorkerExit, 1));
        }
        let (_, why) = r.split_once(" CANCELLED AT ")?;
        return if has!(why, "DUE TO TIME LIMIT") {
            stopped(1)
        } else if has!(why, "DUE TO NODE FAILURE") {
            stopped(2)
        } else {
            None
        };
    }
    let (_, r) = l.split_once("srun: error: ")?;
    let what = r.split_once(": task")?.1.split_once(": ")?.1.trim();
    if what == "Out Of Memory" {
        return stopped(3);
    }
    if let Some(n) = what.strip_prefix("Exited with exit code ").and_then(|n| n.trim().parse::<i64>().ok()) {
        return (n != 0).then_some((Failure::WorkerExit, n));
    }
    let sig =
        [("Aborted", 6), ("Killed", 9), ("Bus error", 7), ("Floating point exception", 8), ("Illegal instruction", 4)];
    sig.iter().find(|(w, _)| what.starts_with(w)).map(|(_, n)| (Failure::Crash, *n))
}

/// The signal of abseil's or glog's crash banner (`*** SIGSEGV received at time=…`, `*** SIGBUS
/// (@0x…) received by PID …`): its number, for the signals that are a crash.
fn signal_banner(l: &str) -> Option<i64> {
    let (_, r) = l.split_once("*** SIG")?;
    let name: String = r.chars().take_while(|c| c.is_ascii_uppercase()).collect();
    if !(r[name.len()..].starts_with(" received at time=") || r[name.len()..].starts_with(" (@")) {
        return None;
    }
    Some(match name.as_str() {
        "SEGV" => 11,
        "ABRT" => 6,
        "BUS" => 7,
        "FPE" => 8,
        "ILL" => 4,
        "TRAP" => 5,
        _ => return None,
    })
}

/// A Python exception line, its type and message: `[rank0]: RuntimeError: NCCL…`,
/// `torch.distributed.DistBackendError: …` (a dotted type name ending in `Error` at the line's
/// start or after PyTorch's `[rankN]: `; the gate passes it by `rror`), not a logger's line
/// that quotes one.
fn exception(l: &str) -> Option<(&str, &str)> {
    let l = l.trim_start();
    // `kubectl logs --timestamps`: an RFC 3339 time before the line (review 4)
    let l = match l.split_once(' ') {
        Some((t, r))
            if t.len() >= 20
                && t.as_bytes()[4] == b'-'
                && t.as_bytes()[10] == b'T'
                && t[..4].bytes().all(|b| b.is_ascii_digit()) =>
        {
            r
        }
        _ => l,
    };
    let l = if l.starts_with("[rank") { l.split_once("]: ").map_or(l, |(_, r)| r) } else { l };
    let (ty, msg) = l.split_once(": ")?;
    (ty.ends_with("Error") && ty.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_'))
        .then_some((ty, msg))
}

/// PyTorch's rendezvous failures before NCCL starts, by the exception's message: c10d's
/// socket.cpp (`The server socket has failed to listen on any local network address.` then
/// ≤2.2 `The server socket has failed to bind to [::]:%d (errno: 98 - Address already in
/// use).`, ≥2.3 `port: %d, useIpv6: %s, code: %d, name: %s, message: %s`; `The client socket
/// has failed to connect to any network address of (%s, %d).`, `The client socket has timed out
/// after %s while trying to connect to (%s, %d).`), TCPStore's server (`Timed out after %d
/// seconds waiting for clients. %d/%d clients joined.`) and torchrun's rendezvous handlers
/// (`RendezvousTimeoutError`, `RendezvousConnectionError`, `RendezvousClosedError` by type, in
/// the message's place when it has none). Code: 1 the port is taken (or nothing to listen on), 2
/// the store cannot be reached, 3 not every rank joined, 4 torchrun's rendezvous.
fn rendezvous_failure(msg: &str) -> Option<i64> {
    if has!(msg, "The server socket has failed to listen") || has!(msg, "The server socket has failed to bind") {
        Some(1)
    } else if has!(msg, "The client socket has failed to connect") || has!(msg, "The client socket has timed out") {
        Some(2)
    } else if has!(msg, "retrieving ncclUniqueId from [0] via c10d key-value store") {
        // ProcessGroupNCCL's broadcastUniqueNCCLID (1.13–2.9: `[%d] is setting up NCCL
        // communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key
        // '%s', but store->get('%s') got error: %s`, DistBackendError since 2.1, a
        // RuntimeError before): rank 0 never published NCCL's id
        Some(5)
    } else if msg.starts_with("Socket Timeout") {
        // c10d's store client, after socket.cpp's `waitForInput: socket %s timed out after %dms`
        Some(6)
    } else if msg.starts_with("Timed out after") && has!(msg, "waiting for clients")
        // TCPStore.cpp's doWait (`wait timeout after %dms, keys: %s`), ≤ 2.0's store-based
        // barrier (`Timed out initializing process group in store based barrier on rank %d, …`)
        || msg.starts_with("wait timeout after") && has!(msg, "keys:")
        || msg.starts_with("Timed out initializing process group in store based barrier")
    {
        Some(3)
    } else {
        None
    }
}

/// The loader's `<file>: cannot open shared object file` names libnccl (by name or path:
/// vLLM 0.4's `/root/.config/vllm/nccl/cu12/libnccl.so.2.18.1`).
fn loads_libnccl(msg: &str) -> bool {
    let file = msg.split_once(": cannot open").map_or("", |(f, _)| f.trim());
    file.rsplit('/').next().is_some_and(|n| n.starts_with("libnccl.so"))
}

/// The signal of bash's report on a command of its script that a signal ended (`slurm_script:
/// line 12:   957 Aborted                 (core dumped) ./all_reduce_perf -b 8`): strsignal's
/// words after the pid. Segmentation faults are read as such elsewhere; SIGTERM and SIGINT are
/// stops from outside.
fn shell_signal(l: &str) -> Option<i64> {
    let (_, r) = l.split_once(": line ")?;
    let (n, r) = r.split_once(": ")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let r = r.trim_start();
    let pid_end = r.find(|c: char| !c.is_ascii_digit())?;
    if pid_end == 0 {
        return None;
    }
    let what = r[pid_end..].trim_start();
    let (w, n) = SIGNAL_WORDS.iter().find(|(w, _)| what.starts_with(w))?;
    // SIGKILL is also how a script stops its own helpers (`nvidia-smi dmon &` … `kill -9 $!`:
    // review 7): a crash only where the command is the job's
    (*n != 9 || job_command(&what[w.len()..])).then_some(*n)
}

/// strsignal's words for the signals that end a job with a crash, as bash prints them (glibc's
/// `sys_siglist`), and their numbers. Segmentation faults are read as such elsewhere; SIGTERM
/// and SIGINT are stops from outside.
const SIGNAL_WORDS: [(&str, i64); 8] = [
    ("Aborted", 6),
    ("Killed", 9),
    ("Bus error", 7),
    ("Floating point exception", 8),
    ("Illegal instruction", 4),
    ("Quit", 3),
    ("Trace/breakpoint trap", 5),
    ("CPU time limit exceeded", 24),
];

/// A command line that runs the job itself, not a helper the script started and killed
/// (review 7: `nvidia-smi dmon &` … `kill -9 $!`; review 8: `python gpu_monitor.py`, `python3 -m
/// http.server`, `srun --overlap … nvidia-smi dmon`). Its program decides: the first word that
/// is no assignment, option or wrapper (`nohup`, `numactl`, `apptainer exec`: review 9). A
/// helper's program (a monitor, `tail`, `sleep`, …) is not the job; Python or a shell running a
/// monitor's script is not; a launcher (srun, mpirun, torchrun, …) is the job unless what it
/// runs is a helper; any other program is the job's own (`llamafactory-cli`, `swift`).
/// Programs that watch a job beside it (killed by the script when the job is done).
const HELPER_PROGRAMS: [&str; 18] = [
    "nvidia-smi",
    "dcgmi",
    "tail",
    "sleep",
    "watch",
    "top",
    "htop",
    "nvtop",
    "iostat",
    "vmstat",
    "dstat",
    "tensorboard",
    "http.server",
    "tee",
    "cat",
    "ping",
    "ssh",
    "nsys",
];
/// Programs that start the job's processes.
const LAUNCHERS: [&str; 7] = ["torchrun", "srun", "mpirun", "mpiexec", "deepspeed", "accelerate", "horovodrun"];
/// Programs that run another with a changed environment, placement or container.
const WRAPPERS: [&str; 14] = [
    "nohup",
    "env",
    "time",
    "nice",
    "ionice",
    "stdbuf",
    "taskset",
    "numactl",
    "chrt",
    "setsid",
    "exec",
    "sudo",
    "apptainer",
    "singularity",
];

/// A word's file name (`/usr/bin/python3` → `python3`).
fn base_name(t: &str) -> &str {
    t.rsplit('/').next().unwrap_or(t)
}

/// A helper's program, or a script that monitors.
fn helper_word(t: &str) -> bool {
    let b = base_name(t);
    HELPER_PROGRAMS.contains(&b) || ((b.ends_with(".py") || b.ends_with(".sh")) && b.contains("monitor"))
}

fn job_command(cmd: &str) -> bool {
    let (base, helper) = (base_name, helper_word);
    let script_of = |b: &str| b.starts_with("python") || b == "bash" || b == "sh";
    let mut words = cmd.split_whitespace();
    while let Some(w) = words.next() {
        let b = base(w);
        if w.starts_with('-') || (w.contains('=') && !w.starts_with('$')) || WRAPPERS.contains(&b) {
            continue;
        }
        if script_of(b) {
            // the script or module it runs (`-m mod`), past its options
            let mut rest = words.by_ref().skip_while(|x| x.starts_with('-') && *x != "-m");
            let script = match rest.next() {
                Some("-m") => rest.next(),
                s => s,
            };
            return !script.is_some_and(helper);
        }
        if LAUNCHERS.contains(&b) {
            // what it runs, past its options and their values: a helper, or the job's program
            for x in words {
                let xb = base(x);
                if helper(x) {
                    return false;
                }
                if script_of(xb) || xb.ends_with(".py") || xb.ends_with("_perf") || xb.ends_with(".sh") {
                    return true;
                }
            }
            return true;
        }
        return !helper(w);
    }
    false
}

/// The signal of an interactive bash's report on its foreground command, a line of its own
/// (`Aborted (core dumped)`, `Killed`: bash's `%s%s` of strsignal's words and ` (core
/// dumped)`), or of its job-control notice (`[1]+  Aborted                 (core dumped) python
/// train.py`: `[%d]%c ` with `+`, `-` or a space, the status padded to its column, the command;
/// a SIGKILL only of the job's own command). None for any other line: the words must be the
/// whole line, or the notice's padded status (review 8: `[0] Quitting training loop`, an MPI
/// rank's prefix, is no notice). Not `Quit` alone (gdb's answer to Ctrl-C).
fn bare_signal(l: &str) -> Option<i64> {
    let t = l.trim();
    let (notice, rest) = match t.strip_prefix('[') {
        Some(r) => {
            let (n, r) = r.split_once(']')?;
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let r = r.strip_prefix(['+', '-', ' '])?;
            (true, r.strip_prefix("  ")?.trim_start())
        }
        None => (false, t),
    };
    let (w, n) = SIGNAL_WORDS.iter().find(|(w, _)| rest.starts_with(w))?;
    let after = &rest[w.len()..];
    if notice {
        // the status column's padding, or ` (core dumped)`, then the command; a status as wide
        // as the column has no padding (review 9, bash in a pty: `Floating point
        // exception(core dumped) cmd`, `CPU time limit exceededcmd`)
        let padded = after.starts_with("  ")
            || after.starts_with(" (core dumped)")
            || after.starts_with("(core dumped)")
            || (w.len() >= 19 && !after.is_empty());
        let cmd = after.trim_start();
        let cmd = cmd.strip_prefix("(core dumped)").unwrap_or(cmd).trim_start();
        return (padded && !cmd.is_empty() && (*n != 9 || job_command(cmd))).then_some(*n);
    }
    let after = after.trim_start();
    let bare = after.is_empty() || after == "(core dumped)";
    (bare && *n != 3).then_some(*n)
}

/// An expert-parallel kernel or its host waited on a peer past its timeout: NCCL EP's `NCCL EP
/// timeout for %s, …` and DeepEP's printf before trap() (`DeepEP timeout for %s, …`, `DeepEP
/// timeout check failed: rank = %d, …`, `DeepEP dispatch forwarder timeout …`), and DeepEP's
/// host errors (`DeepEP error: CPU recv timeout`, `DeepEP error: timeout (dispatch CPU)`);
/// not NCCL EP's `NCCL EP: using timeout=…` at its start (review 7).
fn ep_timeout(msg: &str, gm: u64) -> bool {
    if hasm!(msg, gm, "NCCL EP timeout") {
        return true;
    }
    hasm!(msg, gm, "DeepEP ") && msg.find("DeepEP ").is_some_and(|i| msg[i..].contains("timeout"))
}

/// torchrun's rendezvous exceptions, by their type's name.
fn rendezvous_error_type(ty: &str) -> bool {
    let t = ty.rsplit('.').next().unwrap_or(ty);
    matches!(t, "RendezvousTimeoutError" | "RendezvousConnectionError" | "RendezvousClosedError")
}

/// nccl-tests' CUDACHECK: `<host>: Test CUDA failure common.cu:891 '<error>'` (since 2.x),
/// `Cuda failure common.cu:891 '<error>'` (its first releases): the test stopped on a CUDA error.
fn tests_cuda_failure(l: &str) -> bool {
    let loc = after!(l, "Test CUDA failure ").or_else(|| after!(l, "Cuda failure "));
    loc.and_then(|r| r.split_once(" '")).and_then(|(loc, _)| source_file(loc)).is_some()
}

/// `host:pid` of a line that starts `host:pid:tid [dev] …`.
/// nccl-tests' rank line, `#  Rank  0 Group  0 Pid  27998 on     jetson device  0 …`: its
/// process as NCCL's prefix names it, `host:pid` (tests_output's reading of the line).
fn tests_rank_proc(l: &str) -> Option<String> {
    super::tests_output::rank_proc(l.strip_prefix('#')?.trim_start().strip_prefix("Rank ")?)
}

/// `lo:127.0.0.1<0>`, `ib0:fe80::1%ib0<0>` (NCCL's `%s:%s<%d>` of an interface): the address,
/// without the port.
fn if_address(v: &str) -> Option<&str> {
    let a = v.split_once(':')?.1.split('<').next().unwrap_or("").trim();
    (!a.is_empty()).then_some(a)
}

/// An address no other host reaches: loopback, link-local (IPv4 169.254/16, IPv6 fe80::/10),
/// Docker's default bridge (172.17.0.0/16: a container not on the host's network).
pub fn unroutable(a: &str) -> Option<&'static str> {
    let a = a.to_ascii_lowercase();
    let a = a.trim_start_matches("::ffff:");
    if a.starts_with("127.") || a == "::1" {
        Some("loopback")
    } else if a.starts_with("fe80:") || a.starts_with("169.254.") {
        Some("link-local")
    } else if a.starts_with("172.17.") {
        Some("Docker's default bridge (172.17.0.0/16)")
    } else {
        None
    }
}

/// An address every machine may have, which names none (review 20): an unroutable one, and the
/// other default NAT networks each host hands out alike — podman's 10.88.0.0/16, libvirt's
/// 192.168.122.0/24, VirtualBox's 10.0.2.0/24 (subnets a cluster may also use on purpose: only
/// this reading, which gives up where unsure, counts them).
fn shared_address(a: &str) -> bool {
    unroutable(a).is_some()
        || ["10.88.", "192.168.122.", "10.0.2."].iter().any(|p| a.trim_start_matches("::ffff:").starts_with(p))
}

/// A version NCCL printed (`2.28.9+cuda13.0`) as (major, minor, patch).
pub fn version_triple(v: &str) -> Option<(u32, u32, u32)> {
    let mut n = v.split(['.', '+']).map(|x| x.parse::<u32>().ok());
    Some((n.next()??, n.next()??, n.next()??))
}

/// The hexadecimal number `s` starts with (NCCL's `%lx`, `%llx`; at most 16 digits).
fn hex_prefix(s: &str) -> Option<u64> {
    let n = s.bytes().take_while(u8::is_ascii_hexdigit).count();
    (1..=16).contains(&n).then(|| u64::from_str_radix(&s[..n], 16).ok()).flatten()
}

/// The dynamic loader's error in a NET/Plugin line where it says the plugin library is there
/// but cannot be loaded; None where the library is simply absent (NCCL's normal case without
/// a plugin) or the line holds no loader error. NCCL's wordings (src/net.cc, then
/// src/plugin/plugin_open.cc): `NET/Plugin : dlerror=%s No plugin found (%s), using internal
/// implementation` and `Plugin load returned %d : %s.` (2.19–2.20, whose "No plugin found"
/// follows errno, which dlopen need not set: gpu-recipes#5's glibc error came that way),
/// `NET/Plugin: Plugin load returned %d : %s when loading %s`, `… : %s : when loading %s`,
/// `Most recent plugin load returned %d : %s. All attempts …` (2.21–2.22), `NET/Plugin: %s`
/// (2.23–2.25) and `NET/Plugin: %s: %s` (library: error, 2.26+) with the loader's error.
pub fn plugin_load_error(l: &str) -> Option<&str> {
    let r = &l[find!(l, "NET/Plugin")? + "NET/Plugin".len()..];
    let r = r.trim_start_matches([' ', ':']);
    let e = if let Some(d) = r.strip_prefix("dlerror=") {
        d.split(" No plugin found").next().unwrap_or(d)
    } else if let Some(i) = find!(r, "load returned ") {
        let d = r[i..].split_once(" : ").map_or("", |(_, d)| d);
        d.split(" when loading").next().unwrap_or(d).split(". All attempts").next().unwrap_or(d)
    } else {
        r
    };
    const LOADER: [&str; 10] = [
        "cannot open shared object file",
        "version `",
        "undefined symbol",
        "wrong ELF class",
        "file too short",
        "invalid ELF header",
        "not found (required by",
        "cannot allocate memory in static TLS block",
        "failed to map segment",
        "only ET_DYN and ET_EXEC can be loaded",
    ];
    if !LOADER.iter().any(|w| e.contains(w)) {
        return None;
    }
    // absent: the object the loader could not find is the plugin itself — the name NCCL was
    // loading (`when loading %s`, `No plugin found (%s)`, 2.26's `%s: %s`; 2.21 tries
    // NCCL_NET_PLUGIN's bare value first, `ofi`), or a net plugin's name — not a library the
    // plugin needs; `No such file or directory` may be cut by NCCL's 255-character copy of a
    // long path's error (review 21)
    if let Some((before, after)) = e.split_once(": cannot open shared object file") {
        // (`e` ends where NCCL's own words begin; 2.21's ` : when loading` leaves a ` :`)
        if ": No such file or directory".starts_with(after.trim_end_matches(['.', ' ', ':'])) {
            let base = |x: &str| x.trim().rsplit('/').next().unwrap_or("").to_string();
            let obj = base(before.rsplit(": ").next().unwrap_or(before));
            let loading = [
                r.split(" when loading ").nth(1).map(|x| x.trim_start_matches([':', ' '])),
                r.split("No plugin found (").nth(1).and_then(|x| x.split(')').next()),
                r.split(": ").next(),
            ];
            if obj.contains("-net") || !obj.contains(".so") || loading.iter().flatten().any(|n| base(n) == obj) {
                return None;
            }
        }
    }
    Some(e.trim().trim_end_matches('.'))
}

fn proc_of(l: &str) -> Option<&str> {
    let head = &l[..find!(l, " [")?];
    host_head(head)?;
    head.rsplit_once(':').map(|(hp, _)| hp)
}

impl Analyser {
    pub fn new() -> Self {
        Self::default()
    }

    /// An analyser that runs every reader on every line: slower, and the same facts.
    pub fn ungated() -> Self {
        Self { ungated: true, ..Self::default() }
    }

    fn fail(&mut self, k: Failure, code: Option<i64>, vendor: Option<i64>, line: &str) {
        if k == Failure::OfiNoDevice && (has!(line, "No eligible providers") || has!(line, "fi_getinfo")) {
            self.ofi_search_failed += 1;
        }
        let i = if let Some(i) = self.f.failures.iter().position(|x| x.kind == k) {
            let x = &mut self.f.failures[i];
            x.count += 1;
            if x.code.is_none() {
                x.code = code;
            }
            // c10d's store-wait warning, then the exception that says what was waited for
            // (device set 12: NCCL's unique id from rank 0): the exception is the cause
            if k == Failure::Rendezvous && x.code == Some(6) && code == Some(5) {
                x.code = code;
                x.line = clip(line, 300);
            }
            Some(i)
        } else {
            self.record(FailureSeen {
                kind: k,
                line: clip(line, 300),
                count: 1,
                code,
                vendor_err: vendor,
                class: None,
                init_completed_after: false,
                at: self.f.lines,
            })
        };
        // NCCL skips an HCA it cannot open and goes on with the others (net_ib's `continue`):
        // followed like the table's warnings, a failure only where no init completed after it
        // or NCCL was left with no RDMA device (finish). A duplicate GPU fails that one
        // communicator's init (init.cc returns ncclInvalidUsage); a later communicator of the
        // same process that completes is the job going on (set 129's Gadi rank: two probes on
        // device 0 before the script set its device).
        if let Some(i) = i.filter(|_| matches!(k, Failure::IbOpenFailed | Failure::DuplicateGpu)) {
            self.follow(i);
        }
    }

    /// A worker's end as torchrun, srun or a crash banner reports it: a SIGABRT of a worker
    /// whose watchdog said it would end the process is that exit, on the error found before,
    /// not a crash of its own.
    fn fail_exit(&mut self, k: Failure, code: i64, l: &str) {
        let (k, code) = if k == Failure::Crash && code == 6 && self.announced_abort(l) {
            (Failure::WorkerExit, -6)
        } else {
            (k, code)
        };
        self.fail(k, Some(code), None, l);
    }

    /// A SIGABRT torchrun reports (`failed (exitcode: -6) local_rank: L …`, its table's
    /// `exitcode : -6 (pid: P)`) of a worker whose watchdog announced it: local rank L among the
    /// announced ranks (one node's numbering: another node's rank 9 is its local rank 1, so a
    /// multi-node abort stays a crash); a table line where no unannounced SIGABRT was seen.
    fn announced_abort(&self, l: &str) -> bool {
        let any = self.pg_abort.contains(&u32::MAX);
        match l.split_once("local_rank: ").and_then(|(_, r)| first_int(r)) {
            // its own rank announced (one node's numbering; review 5: a guess for another node's
            // global ranks took a rank's own abort for its peers')
            Some(r) => any || self.pg_abort.contains(&(r as u32)),
            None => {
                !self.pg_abort.is_empty()
                    && !self.f.failures.iter().any(|x| x.kind == Failure::Crash && x.code == Some(6))
            }
        }
    }

    /// Follow failure `i` to see whether the process that printed it completed its init after.
    fn follow(&mut self, i: usize) {
        let after_init = self.warn_proc.as_ref().is_some_and(|p| self.done_procs.contains(p));
        if self.warned.len() < 256 && !after_init {
            // which process printed it: none known (a pasted line) keeps it a failure
            let p = self.warn_proc.clone().unwrap_or_default();
            self.warned.push((p, i, false));
        } else {
            // a process not followed may never have completed: it stays a failure
            self.warned_unfollowed.insert(i);
        }
    }

    /// net_ib's init listed the HCAs it kept after the ones it could not open: the process that
    /// warned went on past them (set 46: ImageReward#65).
    fn kept_hcas(&mut self, l: &str) {
        if self.warned.is_empty() {
            return;
        }
        let Some(p) = proc_of(l) else { return };
        let kinds = &self.f.failures;
        for w in self.warned.iter_mut().filter(|w| w.0 == p) {
            w.2 |= kinds.get(w.1).is_some_and(|x| x.kind == Failure::IbOpenFailed);
        }
    }

    /// A new failure, while the bound allows: its index.
    fn record(&mut self, f: FailureSeen) -> Option<usize> {
        (self.f.failures.len() < MAX_FAILURES).then(|| {
            self.f.failures.push(f);
            self.f.failures.len() - 1
        })
    }

    /// A WARN no specific reader knows, by NCCL's sources (`warns.tsv`): harmless, a failure of
    /// a kind the readers know, one of the table's classes, or one no rule knows.
    /// The table's row of a warning, looked up once per distinct text.
    fn row_of(&mut self, msg: &str) -> Option<&'static super::warns::Row> {
        if let Some(r) = self.table_seen.get(msg) {
            return *r;
        }
        // A warning cut short (an excerpt's last line, a pasted fragment) that begins a warning
        // the log already showed whole is that warning again: looked for on a message's first
        // sight only, among the first known warnings kept.
        // One that begins the literal text of formats of one class only is of that class.
        let r = super::warns::lookup(msg)
            .or_else(|| {
                let cut = |k: &String| msg.len() >= 12 && k.len() > msg.len() && k.starts_with(msg);
                self.known_warns.iter().find(|(k, _)| cut(k)).map(|(_, r)| *r)
            })
            .or_else(|| super::warns::lookup_cut(msg).filter(|r| cut_may_take(r.class)));
        if self.table_seen.len() < 4096 {
            self.table_seen.insert(msg.to_string(), r);
        }
        if let Some(r) = r.filter(|_| self.known_warns.len() < 64) {
            self.known_warns.push((msg.to_string(), r));
        }
        r
    }

    fn by_table(&mut self, msg: &str) {
        let Some(row) = self.row_of(msg) else {
            // a WARN of a release the table does not hold that quotes a CUDA error's words
            // (NCCL 2.7's p2p.cc `failed to open CUDA IPC handle : 217 peer access is not
            // supported between these two devices`): the CUDA call failed
            let k = if cuda_words(msg).is_some() { Failure::CudaFailure } else { Failure::UnknownWarning };
            self.fail_class(k, msg, None);
            return;
        };
        if row.class == "ib-async-event" && benign_ib_event(msg) {
            return;
        }
        if row.class == "ib-async-event" && fatal_ib_event(msg) {
            // up to 2.22 every event is `Got async event : %s`; 2.23+ print these as fatal
            // (ib-qp-fatal, ib-cq-fatal, ib-device-fatal rows)
            self.fail(Failure::IbvFatalEvent, None, None, msg);
            return;
        }
        if row.class == "ibverbs-not-loaded" {
            // `lib wrapper not initialized.` (misc/ibvwrap.cc CHECK_NOT_NULL, 2.18–2.31): a verbs
            // call whose symbol was never loaded, because libibverbs did not open (its `Failed to
            // open` is an INFO since 2.19, often not in the excerpt). The library is missing; not
            // a failure of its own.
            self.f.ibverbs_missing = true;
            return;
        }
        if row.class == "topo-file-skipped" {
            // graph/xml.cc returns ncclSuccess after it: NCCL detects the topology itself, on
            // every communicator's start (review 25: a second communicator's copy after the
            // first init completed was a failure), whatever else fails later
            self.f.topo_file_skipped.get_or_insert_with(|| clip(msg, 200));
            return;
        }
        if row.class == "tcpx-stall" {
            self.f.last_stall_at = self.f.lines;
        }
        match table_kind(row.class) {
            Some(None) => {}
            Some(Some(k)) => self.fail(k, None, None, msg),
            None if row.class == "unclassified" => {
                let note = format!(
                    "{} prints it in {} (unclassified)",
                    row.producer(),
                    if row.releases.is_empty() { row.source } else { row.releases }
                );
                self.fail_class(Failure::UnknownWarning, msg, Some(note));
            }
            None => self.fail_class(Failure::NcclWarning, msg, Some(refined_class(row.class, msg).to_string())),
        }
    }

    /// As `fail`, one entry per class.
    fn fail_class(&mut self, k: Failure, line: &str, class: Option<String>) {
        let same = |x: &FailureSeen| x.kind == k && (k == Failure::UnknownWarning || x.class == class);
        let i = match self.f.failures.iter().position(same) {
            Some(i) => {
                self.f.failures[i].count += 1;
                Some(i)
            }
            None => self.record(FailureSeen {
                kind: k,
                line: clip(line, 300),
                count: 1,
                code: None,
                vendor_err: None,
                class,
                init_completed_after: false,
                at: self.f.lines,
            }),
        };
        // (past the bound, a warning is not kept and so not followed either)
        let Some(i) = i else { return };
        if self.ras_line {
            if let Some(r) = self.ras_origin.iter_mut().find(|r| r.0 == i) {
                r.1 += 1;
            } else if self.ras_origin.len() < 64 {
                self.ras_origin.push((i, 1));
            }
        }
        if k == Failure::NcclWarning {
            self.follow(i);
        }
        if let Some(p) = self.warn_proc.as_ref().filter(|_| k == Failure::UnknownWarning) {
            if self.unknown_procs.len() < 64 && !self.unknown_procs.contains(p) {
                self.unknown_procs.push(p.clone());
            }
        }
    }

    /// A ring's order line of `n` ranks.
    fn ring(&mut self, n: usize) {
        self.f.ring_max = Some(self.f.ring_max.map_or(n, |m| m.max(n)));
    }

    /// `Connected all rings, use ring PXN %d GDR %d`: see [`LogFacts::ring_gdr`].
    fn ring_gdr_line(&mut self, l: &str) {
        if !has!(l, "use ring PXN ") {
            return;
        }
        match after!(l, " GDR ").and_then(first_int) {
            Some(0) => self.f.ring_gdr = Some(false),
            Some(1) if self.f.channels.net_ib + self.f.channels.net_other > 0 => {
                self.f.ring_gdr.get_or_insert(true);
            }
            _ => {}
        }
    }

    /// A process (`host:pid`) completed its init: the source-table warnings it printed before
    /// did not stop it.
    fn completed(&mut self, l: &str) {
        self.last_done_at = self.f.lines;
        let Some(p) = proc_of(l) else { return };
        if self.done_procs.len() < 4096 && !self.done_procs.contains(p) {
            self.done_procs.insert(p.to_string());
        }
        self.traced_procs.remove(p);
        if self.warned.is_empty() {
            return;
        }
        let kinds = &self.f.failures;
        for w in self.warned.iter_mut().filter(|w| w.0 == p) {
            // a duplicate GPU only where the process's later communicator is on another GPU
            // (its busId named, not the one the warning named)
            w.2 |= kinds.get(w.1).is_none_or(|x| x.kind != Failure::DuplicateGpu || moved_gpu(&x.line, l));
        }
    }

    fn error(&mut self, msg: &str) {
        let msg = clip(msg, 300);
        if self.f.errors.len() < MAX_ERRORS && self.seen.insert((1, msg.clone())) {
            self.f.errors.push(msg);
        }
    }

    /// A warning's text (NCCL's WARN, or relayed by a framework).
    fn warning(&mut self, msg: &str) {
        let msg = msg.trim();
        if msg.is_empty() {
            return;
        }
        if let Some((k, code, vendor)) = classify(msg) {
            if let Some(n) = code.filter(|_| {
                matches!(
                    k,
                    Failure::QpInvalid
                        | Failure::QpUnreachable
                        | Failure::QpTimeout
                        | Failure::QpNoDevice
                        | Failure::QpOther
                )
            }) {
                if !self.f.modify_qp_errnos.contains(&(n as i32)) {
                    self.f.modify_qp_errnos.push(n as i32);
                }
            }
            if matches!(k, Failure::RetryExceeded | Failure::LocalProtection | Failure::CompletionError)
                && has!(msg, "from peer")
            {
                self.f.remote_peer = true;
            }
            self.fail(k, code, vendor, msg);
        } else if msg == "No module present for GPU Direct RDMA." {
            // NCCL 2.0–2.3 transport/net_ib.cu: nv_peer_mem is not loaded, so the IB transport
            // runs without GPUDirect RDMA (a fact the verdict weighs across nodes, not a failure)
            self.gdr_disabled = true;
            if self.f.gdr_disabled_hcas.is_empty() {
                self.f.gdr_disabled_hcas.push("every HCA (no nv_peer_mem module)".into());
            }
        } else if msg.starts_with("Unable to load NCCL library") {
            // TensorFlow/XLA's NCCL stub (tsl/cuda/nccl_stub.cc) where libnccl.so.2 did not
            // load: its words for every call, relayed as XLA's `Last NCCL warning(error) log
            // entry` (held-out set 22: LWM#44)
            self.fail(Failure::NcclNotLoaded, None, None, msg);
        } else if libibverbs_missing(msg, u64::MAX) {
            // NCCL before 2.19 printed a missing libibverbs as a WARN (`misc/ibvwrap.cu`); its
            // own reader records the fact (`ibverbs_missing`), which counts only across nodes.
        } else {
            self.by_table(msg);
        }
        if has!(msg, "libibverbs") && (has!(msg, "Failed to open") || has!(msg, "ould not open")) {
            self.f.ibverbs_missing = true;
        }
        let m = clip(msg, 300);
        if self.f.warns.len() < MAX_WARNS {
            if self.seen.insert((2, m.clone())) {
                self.f.warns.push(m);
            }
        } else {
            // Past the bound nothing more is kept (nor compared): the count says how many.
            self.f.warns_dropped += 1;
        }
    }

    /// One line: which kinds of NCCL line it is decides which readers see it. Each reader below
    /// takes the line as it is, so a line that is two things at once (a relayed warning that
    /// names libibverbs) is read by both, in this order.
    pub fn line(&mut self, raw: &str) {
        let cleaned = clean(raw);
        if self.own.skip(&cleaned) {
            return;
        }
        match super::flattened(&cleaned) {
            None => self.line_unwrapped(super::unwrap_line(&cleaned)),
            Some(lines) => {
                for (k, l) in lines.into_iter().enumerate() {
                    self.line_segment(super::unwrap_line(l), Pre::NONE, k > 0);
                }
            }
        }
    }

    /// As [`Analyser::line_pre`], for a segment of a flattened line (`segment`: not its first).
    pub fn line_segment(&mut self, l: &str, pre: Pre, segment: bool) {
        self.segment = segment;
        self.line_pre(l, pre);
        self.segment = false;
    }

    /// One line already cleaned and unwrapped ([`clean`], [`unwrap_line`]).
    ///
    /// Most lines of a large log say nothing verify uses (topology dumps, thresholds, the
    /// job's own output): one pass of [`gate`] over the line finds whether it holds any literal
    /// a reader below acts on, and a line that holds none costs only that pass (and, for NCCL's
    /// lines, the host of its prefix). Channel lines, the bulk of a large job's INFO log, take
    /// their own short path.
    pub fn line_unwrapped(&mut self, l: &str) {
        self.line_pre(l, Pre::NONE);
    }

    /// As [`Analyser::line_unwrapped`], with the line's [`pre`] worked out already (by another
    /// thread).
    pub fn line_pre(&mut self, l: &str, pre: Pre) {
        let mask = (pre.mask != u64::MAX).then_some(pre.mask);
        if l.is_empty() {
            return;
        }
        self.f.lines += 1;
        if self.f.nccl_lines == 0 {
            self.before_nccl(l);
        }
        if std::mem::take(&mut self.last_error_next) {
            // PyTorch: "Last error:\n<NCCL's warning>"; the next line is NCCL's own text,
            // behind the same logger's prefix where the first had one (vLLM's
            // `ERROR 04-07 00:57:46 ray_utils.py:45] `).
            let l = strip_like(l, &std::mem::take(&mut self.last_error_prefix));
            self.warn_proc = None;
            self.f.nccl_lines += 1;
            self.warning(l);
            self.error(l);
            return;
        }
        if self.hash_line(l) {
            return;
        }
        let tag = pre.tag(l);
        let is_nccl = tag.is_some();
        let host = self.prefix(l, is_nccl);
        self.warn_proc = match tag {
            Some((true, _)) => proc_of(l).map(str::to_string),
            _ => None,
        };
        self.ras_line = matches!(tag, Some((true, _))) && has!(l, " ras/client_support.cc:");
        if let Some((false, msg)) = tag.filter(|_| !self.ungated) {
            if self.short_line(l, msg, host, Short::from_code(pre.short)) {
                return;
            }
        }
        // Which of the gate's literals the line holds: each reader runs only where one of its
        // own is there (all of them, ungated). The reader thread of `verify` computes it.
        if self.ungated {
            if let Some(n) = tag.and_then(|(_, msg)| ring_len(msg)) {
                self.ring(n);
            }
            self.f.nvls_used |= tag.is_some_and(|(warn, msg)| !warn && nvls_evidence(msg));
        }
        if !is_nccl {
            self.shell_report(l);
        }
        let m = match tag {
            _ if self.ungated => u64::MAX,
            _ if mask.is_some() => mask.unwrap_or(u64::MAX),
            Some((true, _)) => u64::MAX,
            // (the whole line, as `pre_tag` gates it)
            Some((false, _)) | None => gate_mask(l),
        };
        if m == 0 {
            return;
        }
        self.gated_readers(l, m, is_nccl, host);
    }

    /// Until NCCL's first line, on every line (gated or not: the facts are the same): a line
    /// that names NCCL, the launcher's.
    fn before_nccl(&mut self, l: &str) {
        let t = l.trim();
        if self.untagged.len() < UNTAGGED_LINES && (40..=UNTAGGED_LEN).contains(&t.len()) && !t.starts_with('#') {
            self.untagged.push(t.to_string());
        }
        self.source_like |= self.untagged.len() < UNTAGGED_LINES && source_or_document(t);
        // nccl-tests' header and summary behind a prefix (kubectl's, pdsh's, a time's): its
        // table is NCCL's evidence of its own, as at a line's start (review 30)
        self.hash_seen |=
            ["# nThread ", "#  Rank ", "# Avg bus bandwidth", "# Out of bounds values"].iter().any(|w| t.contains(w));
        if self.f.names_nccl.is_none() && names_nccl(l) {
            self.f.names_nccl = Some(clip(l.trim(), 160));
        }
        if launcher_line(l) {
            self.f.launcher = Some(clip(l.trim(), 160));
        }
        if let Some(x) = launcher_nodes(l) {
            if self.launcher_nodes.len() < 16 && !self.launcher_nodes.iter().any(|y| (y.0, y.2) == (x.0, x.2)) {
                self.launcher_nodes.push(x);
            }
        }
    }

    /// A log without any NCCL line: its first lines that are NCCL's WARN texts whole, pasted
    /// without `host:pid:tid [dev] file:line NCCL WARN` (a thread's quote of the message: set
    /// 134's nccl#2329, `P2P is disabled between NVLINK connected GPUs 1 and 0. …`), read as
    /// those warnings. Only classified formats with 60 or more characters of their own text that
    /// name NCCL's domain are taken ([`crate::nccl::warns::lookup_bare`]): a sentence of another
    /// program does not match one; nor in a log with a `#` line or a line of source code.
    fn bare_warnings(&mut self) {
        // (an nccl-tests table, its `#` lines, is NCCL's evidence of its own; a file of source
        // code or a document that quotes a warning is no log of it: review 29)
        if self.f.nccl_lines > 0 || self.hash_seen || self.source_like {
            return;
        }
        for l in std::mem::take(&mut self.untagged) {
            if let Some(at) = crate::nccl::warns::lookup_bare(&l) {
                self.f.nccl_lines += 1;
                self.warning(&l[at..]);
            }
        }
    }

    /// A line with `#` first: nccl-tests' header and summary (its rank lines read here, the
    /// rest by tests_output) or a comment (a job script's, a YAML file's) that may quote a
    /// failure's words; no line NCCL or PyTorch prints starts with it (review 23: a healthy job
    /// whose log echoed a comment quoting the watchdog's timeout was NOT OK). Read no further.
    fn hash_line(&mut self, l: &str) -> bool {
        if l.trim_start().as_bytes().first() != Some(&b'#') {
            return false;
        }
        self.hash_seen = true;
        if l.starts_with('#') {
            self.tests_wrong |= l.starts_with("# Out of bounds values") && l.contains("FAILED");
            if !self.tests_began {
                self.tests_began = l.starts_with("# nThread ") || l.starts_with("#  Rank ");
            }
            self.tests_header(l);
        }
        true
    }

    /// The hosts of the log, glued names left out: a segment's host (a flattened paste) whose
    /// name ends with a host of whole lines whose process of the same pid wrote whole lines too,
    /// and a whole line's host glued at its start ([`Analyser::glued_whole`]).
    fn settled_hosts(&mut self) -> Vec<String> {
        let mut pids: rustc_hash::FxHashMap<&str, Vec<&str>> = Default::default();
        for p in &self.strong_procs {
            if let Some((h, pid)) = p.rsplit_once(':') {
                pids.entry(h).or_default().push(pid);
            }
        }
        let same_pid = |h: &str, pid: &str| pids.get(h).is_some_and(|p| p.contains(&pid));
        let mut weak = Vec::new();
        // (a weak host is never merged into another weak one: behind a wrapper every host is
        // weak, and `gpunode1` beside `node1` with the same pid are two containers, review 8 —
        // a host too many is a false "not ok", a host too few can be a false "ok")
        for (w, pid) in std::mem::take(&mut self.weak_hosts) {
            // no host name is this long (HOST_NAME_MAX is 64): text of a paste, not a host,
            // and its suffixes are not looked up (review 9: quadratic)
            if w.len() > 160 {
                continue;
            }
            let glued = w.char_indices().skip(1).any(|(i, _)| self.hosts.contains(&w[i..]) && same_pid(&w[i..], &pid));
            if !glued {
                weak.push(w);
            }
        }
        let glued: Vec<String> = self.hosts.iter().filter(|w| self.glued_whole(w, &pids)).cloned().collect();
        drop(pids);
        for w in glued {
            self.hosts.remove(&w);
        }
        for w in weak {
            if self.hosts.len() < MAX_HOSTS {
                self.hosts.insert(w);
            }
        }
        std::mem::take(&mut self.hosts).into_iter().collect()
    }

    /// A host of whole lines that is two processes' writes run together at a line's start
    /// (held-out set 29, an interleaved trace: `stonstone:2984738:…` and `stone:29stone:2984736:…`
    /// where the host is `stone`): its name is a host's name behind the cut-off head of that
    /// host's own prefix (`ston`, `stone:29`: the start of `stone:<pid>`), and that host's process
    /// of the same pid wrote whole lines. A real host whose name ends with another's
    /// (`gpunode1`, `node1`) has no such head (review 8). Each of the name's suffixes is looked
    /// up once.
    fn glued_whole(&self, w: &str, pids: &rustc_hash::FxHashMap<&str, Vec<&str>>) -> bool {
        // a host name is at most 64 bytes (HOST_NAME_MAX), a glued head a prefix's length
        let Some(own) = pids.get(w).filter(|_| w.len() <= 160) else { return false };
        w.char_indices().skip(1).any(|(i, _)| {
            let (head, h) = w.split_at(i);
            // the head of `h:<pid>`: a proper prefix of the name, or the name, a colon and digits
            let cut = h.starts_with(head)
                || head
                    .strip_prefix(h)
                    .and_then(|r| r.strip_prefix(':'))
                    .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()));
            cut && self.hosts.contains(h) && pids.get(h).is_some_and(|p| p.iter().any(|x| own.contains(x)))
        })
    }

    /// An interactive shell's report on the job's end by a signal, a short line of its own
    /// ([`bare_signal`]; on every line, gated or not: the first bytes decide at once).
    fn shell_report(&mut self, l: &str) {
        let first = l.trim_start().as_bytes().first();
        // after the job's first line only (NCCL's, its launcher's, nccl-tests' header: review
        // 9): a pasted session's earlier command (pip's build killed by the OOM killer before
        // the job: review 8) is not the job
        let began = self.f.nccl_lines > 0 || self.f.launcher.is_some() || self.tests_began;
        if began
            && l.len() <= 160
            && matches!(first, Some(b'A' | b'K' | b'B' | b'F' | b'I' | b'Q' | b'T' | b'C' | b'['))
        {
            if let Some(n) = bare_signal(l) {
                self.f.nccl_lines += 1;
                self.fail_exit(Failure::Crash, n, l.trim());
            }
        }
    }

    /// nccl-tests prints its table's header once ncclCommInitAll (or the group of
    /// ncclCommInitRank) returned (common.cu's run()): the warnings its own processes printed
    /// before it did not stop their init (set 40: jetson-containers#1636). Its processes are the
    /// run's `#  Rank %2d Group %2d Pid %6d on %10s …` lines since its `# nThread` line (review
    /// 11: another run's, host's or a quoted header excuses nothing).
    fn tests_header(&mut self, l: &str) {
        if l.starts_with("# nThread ") {
            self.tests_procs.clear();
        } else if let Some(p) = tests_rank_proc(l) {
            if self.tests_procs.len() < 4096 {
                self.tests_procs.insert(p);
            }
        } else if !self.tests_procs.is_empty() && has!(l, " size ") && has!(l, "algbw") && has!(l, "busbw") {
            let procs = &self.tests_procs;
            for w in self.warned.iter_mut().filter(|w| procs.contains(&w.0)) {
                w.2 = true;
            }
        }
    }

    /// The most frequent lines (channels, traces, rings, connected, comm), known by their
    /// shape alone: read here, nothing else to do with them.
    #[inline]
    fn short_line(&mut self, l: &str, msg: &str, host: Option<&str>, known: Option<Option<Short>>) -> bool {
        match known.unwrap_or_else(|| short(msg)) {
            Some(Short::Channel(i)) => {
                let t = transport(&msg[i + 5..]);
                let recv = msg[..i].ends_with("[receive]");
                self.channel(t, recv, true, true, host);
                // 2.2x's P2P channel lines end `comm 0x… nRanks %d`: the job's rank count
                if let Some(n) = after!(&msg[i..], " nRanks ").and_then(first_int) {
                    self.f.nranks = Some(self.f.nranks.map_or(n as usize, |m| m.max(n as usize)));
                }
                true
            }
            Some(Short::Trace) => {
                self.error_trace(l);
                true
            }
            // a ring's or tree's order, thresholds: nothing to read
            Some(Short::Nothing) => true,
            Some(Short::Nvls) => {
                self.f.nvls_used = true;
                true
            }
            Some(Short::Ring(n)) => {
                self.ring(n);
                true
            }
            Some(Short::Connected) => {
                // The process got past its warnings to connect every ring or tree: they did not
                // stop its set-up (held-out vllm#18731's benign CUDA warnings).
                self.ring_gdr_line(msg);
                self.f.init_complete += 1;
                self.completed(l);
                true
            }
            Some(Short::Comm) => {
                // `comm 0x… rank 3 nRanks 16 nNodes 2 localRanks 8 …`, `… Init COMPLETE`
                self.counts(l);
                true
            }
            None => false,
        }
    }

    /// Each reader runs where one of its own literals is on the line (`m`, the gate's mask).
    #[inline]
    fn gated_readers(&mut self, l: &str, m: u64, is_nccl: bool, host: Option<&str>) {
        let any = |lits: &[u64]| lits.iter().any(|b| m & b != 0);
        // (`nccl` only for vLLM's `is using nccl==`: it is on every line naming a library path)
        if any(&[
            gbit!("NCCL version"),
            gbit!("Using network"),
            gbit!("ternal Network "),
            gbit!("Selected "),
            gbit!("Bootstrap"),
            gbit!("evice found"),
            gbit!(": Using "),
            gbit!("disabling GDR"),
        ]) || (m & gbit!("nccl") != 0 && has!(l, "is using nccl=="))
        {
            self.network_choice(l, m, host);
        }
        if any(&[gbit!("set by environment"), gbit!("NCCL_")]) {
            self.env_line(l);
        }
        if m & gbit!("ailed") != 0 && has!(l, "RAS failed to establish a client listening socket") {
            self.ras_client_failed += 1;
        }
        if any(&[gbit!(" via ")]) {
            self.channel_line(l, is_nccl, host);
        }
        if any(&[gbit!("GPU Direct")]) {
            self.gdr_disabled_line(l, host);
        }
        if any(&[gbit!("anks "), gbit!(" nNodes "), gbit!("Init COMPLETE"), gbit!("Connected all"), gbit!(" qpn ")]) {
            self.counts(l);
        }
        if any(&[
            gbit!("libibverbs"),
            gbit!("not open"),
            gbit!("Plugin"),
            gbit!("plugin"),
            gbit!("evice found"),
            gbit!(": Using "),
        ]) {
            self.verbs_and_plugin(l, m, is_nccl, host);
        }
        if any(&[gbit!("ocket"), gbit!(" provider")]) {
            self.retries_and_port_speeds(l, m, is_nccl);
        }
        // (`ProcessGroupNCCL`: PyTorch's line glued onto an NCCL one, review 23)
        const WARNISH: u64 = gbit!("WARN")
            | gbit!("rror")
            | gbit!("Test NCCL")
            | gbit!("atchdog")
            | gbit!("userspace device")
            | gbit!("ProcessGroupNCCL");
        if !is_nccl || m & WARNISH != 0 || names_result(l, m) || (self.ungated && has!(l, " -> ")) {
            self.warnings_and_errors(l, is_nccl, m);
        }
        // NCCL's error traces behind a plugin's words (`NCCL/NET (shim) …/x.cc:132 -> 4`), the
        // plain ones being short lines: any NCCL line with ` -> `
        if is_nccl && has_arrow(l) {
            self.error_trace(l);
        }
    }

    /// The `host:pid:tid` prefix: counts the line as NCCL's, records the host and CUDA device,
    /// and gives the host whose per-host view this line may update (hosts past the bound are
    /// counted in the totals only).
    fn prefix<'a>(&mut self, l: &'a str, is_nccl: bool) -> Option<&'a str> {
        // The tag is there (is_nccl), but only a ` NCCL` after the prefix makes a host.
        // `host:pid:tid [dev] …`: NCCL's own prefix read in one pass, or else one search for
        // ` [` gives both.
        let head = if is_nccl { nccl_head(l) } else { None };
        let bracket = match &head {
            Some(h) => Some(h.bracket),
            None if is_nccl => space_bracket(l),
            None => None,
        };
        let host = match &head {
            Some(h) => Some(&l[..h.host]),
            None => bracket.and_then(|i| host_head(&l[..i])),
        };
        if is_nccl {
            self.f.nccl_lines += 1;
            if let Some(h) = host {
                // `host:pid`, the prefix up to its tid (host_head found both ':' there)
                let b = bracket.unwrap_or(0);
                let proc = match &head {
                    Some(x) => &l[..x.pid],
                    None => memchr::memrchr(b':', &l.as_bytes()[..b]).map_or(h, |c| &l[..c]),
                };
                if self.segment {
                    if self.weak_hosts.len() < MAX_HOSTS && !self.hosts.contains(h) {
                        let pid = proc.rsplit_once(':').map_or("", |(_, pid)| pid);
                        self.weak_hosts.insert((h.to_string(), pid.to_string()));
                    }
                } else if proc != self.last_proc {
                    // (looked up only where the process changed — its lines come in runs — and
                    // recorded only where it is new: an allocation per line cost; a process
                    // recorded before had its host recorded then)
                    let full = self.strong_procs.len() >= 4096;
                    if full || !self.strong_procs.contains(proc) {
                        if self.hosts.len() < MAX_HOSTS && !self.hosts.contains(h) {
                            self.hosts.insert(h.to_string());
                        }
                        if !full {
                            self.strong_procs.insert(proc.to_string());
                        }
                    }
                    self.last_proc.clear();
                    self.last_proc.push_str(proc);
                }
                let rest = &l[bracket.unwrap_or(0) + 2..];
                let close = match &head {
                    Some(x) => Some(x.after - 2 - (x.bracket + 2)),
                    None => memchr::memchr(b']', rest.as_bytes()),
                };
                if let Some(d) = close.and_then(|e| rest[..e].parse::<usize>().ok()) {
                    if d < 4096 {
                        self.f.cuda_devs = self.f.cuda_devs.max(d + 1);
                    }
                }
            }
        }
        host.filter(|h| self.views.len() < MAX_HOSTS || self.view_idx.contains_key(*h))
    }

    /// The per-host view of `host`: the last host's at the cost of one comparison (a rank's
    /// lines come in runs), any other's by one hash lookup.
    fn view(&mut self, host: Option<&str>) -> Option<&mut HostView> {
        let h = host?;
        let i = match self.last_view {
            Some(i) if self.views[i].0 == h => i,
            _ => {
                let i = match self.view_idx.get(h) {
                    Some(i) => *i,
                    None => {
                        self.views.push((h.to_string(), HostView::default()));
                        self.view_idx.insert(h.to_string(), self.views.len() - 1);
                        self.views.len() - 1
                    }
                };
                self.last_view = Some(i);
                i
            }
        };
        Some(&mut self.views[i].1)
    }

    /// What NCCL chose: its version, `Using network`, the bootstrap interface, the IB devices and
    /// OOB interface (`NET/IB : Using`), "No device found", and the socket interfaces.
    fn network_choice(&mut self, l: &str, m: u64, host: Option<&str>) {
        // `NCCL version 2.28.9+cuda13.0`: NCCL's banner (NCCL_DEBUG=WARN prints it alone);
        // vLLM's `vLLM is using nccl==2.21.5` (pynccl.py): the job ran NCCL, without its log.
        if let Some(v) = afterm!(l, m, "NCCL version ").or_else(|| afterm!(l, m, "is using nccl==")) {
            let v = v.split_whitespace().next().unwrap_or("").trim_end_matches(',');
            if v.starts_with(|c: char| c.is_ascii_digit()) && v.contains('.') {
                if host.is_none() && !hasm!(l, m, " NCCL INFO") {
                    self.f.nccl_lines += 1;
                }
                self.f.version.get_or_insert_with(|| v.to_string());
            }
        }
        // aws-ofi-nccl: `Selected provider is cxi, fabric is cxi (found 4 nics)` (before 1.14:
        // `Selected Provider is cxi (found 8 nics)`), after any provider it tried and found
        // nothing for.
        if hasm!(l, m, "Selected ") && (has!(l, "Selected provider is ") || has!(l, "Selected Provider is ")) {
            self.ofi_selected = true;
            self.f.ofi_provider = self.f.ofi_provider.take().or_else(|| ofi_provider(l));
        }
        // aws-ofi-nccl (INFO from 1.7.4): `Could not disable CUDA API usage for HMEM, disabling
        // GDR`; where its platform table says GPUDirect, it stops instead (`GDR disabled on
        // GDR-supported instance type %s`): a job that goes on has none.
        if hasm!(l, m, "disabling GDR") && has!(l, "NET/OFI") {
            self.f.ofi_gdr_off = true;
        }
        // NCCL before 2.6: `Using internal Network Socket`, `Using external Network <plugin>`.
        if let Some(v) = afterm!(l, m, "Using network ")
            .or_else(|| afterm!(l, m, "Using internal Network "))
            .or_else(|| afterm!(l, m, "Using external Network "))
        {
            // a paste's quoting or a sentence's end is not part of the name: `Socket\``, `IB.`
            let n = v.trim().trim_end_matches(['`', '\'', '"', '.', ',', ';', ')']).to_string();
            if let Some(h) = self.view(host) {
                if h.networks.len() < 8 {
                    h.networks.insert(n.clone());
                }
            }
            if self.networks.len() < 64 {
                self.networks.insert(n);
            }
        }
        if let Some(v) = afterm!(l, m, "Bootstrap : Using ").or_else(|| afterm!(l, m, "Bootstrap: Using ")) {
            self.bootstrap(v, host);
            self.proc_address(l, v);
        }
        if hasm!(l, m, "NET/IB : No device found") {
            self.f.ib_no_device = true;
            if let Some(h) = self.view(host) {
                h.no_device = true;
            }
        }
        if let Some(v) = afterm!(l, m, "NET/IB : Using ") {
            self.ib_devices(v, host);
            self.kept_hcas(l);
            if let Some(o) = after!(v, "; OOB ") {
                self.proc_address(l, o);
            }
        }
        self.socket_ifs(l, m);
    }

    /// The socket transport's interfaces: `NET/Socket : Using [0]eth0:10.0.0.1<0> [1]…`, and
    /// 2.3–2.4's one line each, `NET : Using interface lo:127.0.0.1<0>` (net_socket.cu).
    fn socket_ifs(&mut self, l: &str, m: u64) {
        let mut names = Vec::new();
        if let Some(v) = afterm!(l, m, "NET/Socket : Using ") {
            for tok in v.split_whitespace() {
                if let Some((_, body)) = tok.strip_prefix('[').and_then(|r| r.split_once(']')) {
                    names.push(if_name(body));
                }
            }
        } else if let Some(v) = afterm!(l, m, "NET : Using interface ") {
            names.push(if_name(v.trim()));
        }
        for n in names {
            if self.f.socket_ifs.len() < MAX_SMALL && self.seen.insert((0, n.clone())) {
                self.f.socket_ifs.push(n);
            }
        }
    }

    /// `Bootstrap : Using eth0:10.0.0.1<0>`: the interface and its address (without the port).
    fn bootstrap(&mut self, v: &str, host: Option<&str>) {
        let v = v.trim_start_matches("[0]").trim();
        if self.boot.len() < MAX_SMALL {
            self.boot.insert(if_name(v));
        }
        if let Some(a) = if_address(v) {
            // another host on an address one host already bootstrapped on (loopback aside:
            // its own finding)
            if let (None, Some(h)) = (&self.f.shared_bootstrap, host) {
                if let Some(b) = self.f.bootstrap_on.iter().find(|b| b.address == a && b.host != h) {
                    if !a.starts_with("127.") && a != "::1" {
                        self.f.shared_bootstrap = Some((a.to_string(), vec![b.host.clone(), h.to_string()]));
                    }
                }
            }
            if self.f.bootstrap_addrs.len() < 64 && !self.f.bootstrap_addrs.iter().any(|x| x == a) {
                self.f.bootstrap_addrs.push(a.to_string());
                if let Some(h) = host {
                    let on = BootstrapOn { address: a.to_string(), interface: if_name(v), host: h.to_string() };
                    self.f.bootstrap_on.push(on);
                }
            }
        }
    }

    /// Lines that name a socket (connect retries) or a provider (net_ib.cc's device line).
    fn retries_and_port_speeds(&mut self, l: &str, m: u64, is_nccl: bool) {
        if m & gbit!("ocket") != 0 {
            self.connect_retries(l);
        }
        if is_nccl && m & gbit!(" provider") != 0 && has!(l, " speed=") {
            self.ib_port_speed(l);
        }
    }

    /// net_ib.cc's device line (2.27+, INFO with the NET subsystem; a TRACE before):
    /// `NET/IB: [%d] %s:%s:%d/%s provider=%s speed=%d context=%p pciPath=%s ar=%d`. The speed is
    /// the port's active rate (ncclIbSpeed(active_speed) × width, Mb/s): the link as trained,
    /// not the NIC's nominal rate. By device name, the slowest where hosts print different ones.
    fn ib_port_speed(&mut self, l: &str) {
        let Some(v) = after!(l, "NET/IB: [") else { return };
        let Some((_, rest)) = v.split_once("] ") else { return };
        let name = rest.split(':').next().unwrap_or("");
        // the number whole: the format goes on (` context=`), so a line cut inside it (`speed=40`
        // at a line's end) gives none (review 25)
        let Some(v) = after!(rest, " speed=") else { return };
        let digits = v.bytes().take_while(u8::is_ascii_digit).count();
        if v.as_bytes().get(digits) != Some(&b' ') {
            return;
        }
        let Some(mbps) = v[..digits].parse::<u32>().ok().filter(|m| *m > 0) else { return };
        if name.is_empty() || name.len() > 64 || name.contains(char::is_whitespace) {
            return;
        }
        if self.port_speed_devs.len() < MAX_SMALL {
            self.port_speed_devs.insert(name.to_string());
        }
        let speeds = &mut self.f.ib_port_speeds_mbps;
        if !speeds.contains(&mbps) && speeds.len() < 8 {
            speeds.push(mbps);
            speeds.sort_unstable();
        }
    }

    /// `[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB ib0:10.0.0.1<0>`
    fn ib_devices(&mut self, v: &str, host: Option<&str>) {
        let (devs, oob) = match v.split_once("; OOB ") {
            Some((d, o)) => (d, Some(o)),
            None => (v, None),
        };
        if let Some(o) = oob {
            self.f.oob_if = Some(if_name(o));
        }
        // the list the last line named: its devices are recorded, only the host's count is new
        if let Some(n) = self.last_ib.as_ref().filter(|(d, _)| d == devs).map(|(_, n)| *n) {
            if let Some(h) = self.view(host) {
                h.ib_ports = h.ib_ports.max(n);
            }
            return;
        }
        let mut n = 0;
        for tok in devs.split_whitespace() {
            let Some(rest) = tok.strip_prefix('[') else { continue };
            let Some((idx, body)) = rest.split_once(']') else { continue };
            let Ok(index) = idx.parse::<u32>() else { continue };
            let mut sl = body.split('/');
            let id = sl.next().unwrap_or("");
            let link = sl.next().unwrap_or("").to_string();
            let mut c = id.split(':');
            let name = c.next().unwrap_or("").to_string();
            let port = c.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            n += 1;
            if self.seen_dev.len() < MAX_SMALL && self.seen_dev.insert((name.clone(), port)) {
                self.f.ib_devices.push(IbDev { index, name, port, link });
            }
        }
        // (a list the bound cut may have more to record: read again)
        if self.seen_dev.len() < MAX_SMALL && devs.len() <= 4096 {
            self.last_ib = Some((devs.to_string(), n));
        }
        if let Some(h) = self.view(host) {
            h.ib_ports = h.ib_ports.max(n);
        }
    }

    /// `NCCL_X set by environment to V` (and the older `NCCL_IB_HCA set to V`); a net plugin's
    /// own additions to the environment.
    fn env_line(&mut self, l: &str) {
        if let Some(v) = after!(l, " set by environment to ") {
            // `v` is the rest of `l` after the literal: the name ends where the literal starts
            let at = l.len() - v.len() - " set by environment to ".len();
            let name = l[..at].rsplit(' ').next().unwrap_or("");
            if !name.starts_with("NCCL_") {
                return;
            }
            let v = v.trim().trim_end_matches(|c: char| c == '.' || c.is_whitespace());
            self.env_value(name, v);
        } else if let Some(v) = after!(l, "NCCL_IB_HCA set to ") {
            if self.f.env("NCCL_IB_HCA").is_none() {
                self.f.env_set.push(("NCCL_IB_HCA".into(), v.trim().to_string()));
            }
        } else if let Some(name) = plugin_env_name(l) {
            if self.f.env_by_plugin.len() < 64 && !self.f.env_by_plugin.iter().any(|n| n == name) {
                self.f.env_by_plugin.push(name.to_string());
            }
        }
    }

    /// A variable's value: the first in `env_set`, a different one (bounded) in `env_more`.
    fn env_value(&mut self, name: &str, v: &str) {
        let f = &mut self.f;
        match f.env_set.iter().find(|(n, _)| n == name) {
            None if f.env_set.len() < 256 => f.env_set.push((name.to_string(), v.to_string())),
            None => {}
            Some((_, first)) => {
                let more = f.env_more.iter().filter(|(n, _)| n == name);
                if name != "NCCL_HOSTID"
                    && !first.eq_ignore_ascii_case(v)
                    && f.env_more.len() < 64
                    && more.clone().count() < 3
                    && !more.clone().any(|(_, x)| x.eq_ignore_ascii_case(v))
                {
                    f.env_more.push((name.to_string(), v.to_string()));
                }
            }
        }
    }

    /// A channel connection (`Channel 00/0 : 0[0] -> 1[1] [receive] via NET/IB/0/GDRDMA`): its
    /// transport, GPUDirect, and per host the receives with and without GPUDirect.
    fn channel_line(&mut self, l: &str, is_nccl: bool, host: Option<&str>) {
        let Some(v) = after!(l, " via ") else { return };
        let t = transport(v);
        let recv = has!(l, "[receive]");
        let is_channel = has!(l, " -> ") || has!(l, "Channel") || has!(l, "Ring") || has!(l, "Tree");
        self.channel(t, recv, is_channel, is_nccl, host);
    }

    fn channel(&mut self, t: &str, recv: bool, is_channel: bool, is_nccl: bool, host: Option<&str>) {
        if !is_channel || t.is_empty() {
            return;
        }
        if !is_nccl {
            // A pasted channel line without its prefix is NCCL's all the same.
            self.f.nccl_lines += 1;
        }
        let c = &mut self.f.channels;
        let net = if t.starts_with("NET/IB") {
            c.net_ib += 1;
            true
        } else if t.starts_with("NET/Socket") {
            c.net_socket += 1;
            true
        } else if let Some(rest) = t.strip_prefix("NET/") {
            c.net_other += 1;
            if self.f.net_other_name.is_none() {
                let name = rest.split('/').next().unwrap_or("").trim();
                if !name.is_empty() {
                    self.f.net_other_name = Some(clip(name, 64));
                }
            }
            true
        } else if t.starts_with("P2P") {
            c.p2p += 1;
            false
        } else if t.starts_with("SHM") || t.starts_with("direct shared memory") || t == "direct" {
            c.shm += 1;
            false
        } else {
            c.other += 1;
            false
        };
        if !net {
            return;
        }
        let gdr = has!(t, "/GDRDMA") || gdrdma_cut(t);
        if gdr {
            c.net_ib_gdr += 1;
        }
        if recv && !t.starts_with("NET/Socket") {
            self.received(gdr, host);
        }
        if let Some(h) = self.view(host) {
            h.net_channels += 1;
        }
        if let Some(h) = self.view(host).filter(|h| h.networks.is_empty()) {
            // `NET/IB/0/GDRDMA` → `IB`, `NET/AWS Libfabric/1` → `AWS Libfabric`
            let word = t.strip_prefix("NET/").unwrap_or(t).split('/').next().unwrap_or("");
            h.networks.insert(word.to_string());
        }
    }

    /// An inter-node receive channel over RDMA, with or without GPUDirect, in all and per host.
    fn received(&mut self, gdr: bool, host: Option<&str>) {
        if gdr {
            self.f.recv_gdr += 1;
        } else {
            self.f.recv_plain += 1;
        }
        if let Some(h) = self.view(host) {
            if gdr {
                h.recv_gdr += 1;
            } else {
                h.recv_plain += 1;
            }
        }
    }

    /// `GPU Direct RDMA Disabled for HCA 0 'mlx5_0'`.
    fn gdr_disabled_line(&mut self, l: &str, host: Option<&str>) {
        // graph/topo.cc `NET/%s : GPU Direct RDMA Enabled for HCA %d '%s'` (2.19+), HPC-X's
        // plugin `GPU Direct RDMA (DMABUF) enabled for HCA %d '%s'`: the NIC can do it.
        if has!(l, "GPU Direct RDMA Enabled for HCA") || has!(l, "GPU Direct RDMA (DMABUF) enabled") {
            self.f.gdr_hca_capable = true;
            return;
        }
        let Some(v) = after!(l, "GPU Direct RDMA Disabled for HCA") else { return };
        if has!(l, "NET/Socket") {
            return;
        }
        self.gdr_disabled = true;
        let name = v.split('\'').nth(1).unwrap_or("").to_string();
        if !name.is_empty() && self.f.gdr_disabled_hcas.len() < 256 && !self.f.gdr_disabled_hcas.contains(&name) {
            self.f.gdr_disabled_hcas.push(name);
        }
        if let Some(h) = self.view(host) {
            h.gdr_disabled = true;
        }
    }

    /// The job's shape in NCCL's words (`nranks`, `nNodes`, `localRanks`), and a queue pair set
    /// up towards a peer (NET subsystem): the job crosses a network.
    fn counts(&mut self, l: &str) {
        // (each literal looked for once: this reads every communicator's lines)
        let (lower, upper) = (after!(l, " nranks "), after!(l, " nRanks "));
        for n in [lower, upper].into_iter().flatten().filter_map(first_int) {
            let n = n as usize;
            self.f.nranks = Some(self.f.nranks.map_or(n, |m| m.max(n)));
        }
        if let Some(n) = after!(l, " nNodes ").and_then(first_int) {
            self.f.nnodes = Some(self.f.nnodes.map_or(n as usize, |m| m.max(n as usize)));
        }
        // ` rank R` sits before the ` nranks`/` nRanks` that brought the line here
        if let (Some(r), Some(n)) = (
            finder!(" rank ").find(l.as_bytes()).map(|i| &l[i + 6..]).and_then(first_int),
            lower.or(upper).and_then(first_int),
        ) {
            if proc_of(l).is_some() && self.rank_pairs.len() < MAX_HOSTS {
                self.rank_pairs.insert((r as usize, n as usize));
            }
        }
        if has!(l, "ncclCommInitAll ") {
            if let Some(n) = lower.and_then(first_int) {
                self.f.init_all_nranks = Some(self.f.init_all_nranks.map_or(n as usize, |m| m.max(n as usize)));
            }
        }
        if let Some(n) = after!(l, " localRanks ").and_then(first_int) {
            self.f.local_ranks = Some(self.f.local_ranks.map_or(n as usize, |m| m.max(n as usize)));
            if let Some(v) = after!(l, " MNNVL ").and_then(first_int) {
                self.f.mnnvl = Some(self.f.mnnvl.unwrap_or(false) || v != 0);
            }
        }
        // `Init timings - %s: rank %d nranks %d total …` (init.cc, 2.23+) is printed on the
        // success path only, right after Init COMPLETE: an excerpt that kept it and not the
        // other still shows the init done.
        let timings = lower.is_some() && has!(l, "Init timings - ");
        // ncclCommDestroy (init.cc, 2.18–2.31) prints `comm %p rank %d nranks %d cudaDev %d
        // busId %lx - Destroy COMPLETE` only after ncclCommEnsureReady returned success: the
        // communicator it destroyed had finished its init (an excerpt may have cut that line).
        // (2.12 printed it after any error: a log that old shows its Init COMPLETE anyway.)
        let complete = has!(l, "COMPLETE");
        let destroyed = complete && lower.is_some() && has!(l, " - Destroy COMPLETE");
        let init_complete = complete && has!(l, "Init COMPLETE");
        if init_complete || has!(l, "Init START") {
            self.init_start(l, lower, init_complete);
        }
        let connected = has!(l, "Connected all ") && (has!(l, "Connected all rings") || has!(l, "Connected all trees"));
        if init_complete || timings || destroyed || connected {
            self.ring_gdr_line(l);
            self.f.init_complete += 1;
            self.f.init_done += usize::from(init_complete || timings || destroyed);
            // a destroy is per communicator and may follow a failed collective (a blocking
            // communicator keeps no error for ncclCommEnsureReady): it follows no warning
            if !destroyed {
                self.completed(l);
            }
        }
        if has!(l, " qpn ") && (has!(l, "NET/IB: ") || has!(l, "NET/IB : ")) {
            self.f.remote_peer = true;
            self.ib_qp = true;
        }
    }

    /// Init START and Init COMPLETE of NCCL ≥ 2.18 (init.cc: `comm %p rank %d nranks %d cudaDev
    /// %d nvmlDev %d busId %lx commId 0x%llx - Init START`): two ranks of one communicator that
    /// start on one host's one GPU. NCCL stops such a communicator in its setup (init.cc's
    /// `Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx`, ncclInvalidUsage,
    /// where the peers' host hashes and busIds are equal), so an excerpt that cut that warning
    /// still shows it. Where the communicator completed, or NCCL_HOSTID made one machine hosts
    /// of their own, the two were not one host's (judged in `finish`).
    fn init_start(&mut self, l: &str, nranks: Option<&str>, complete: bool) {
        let Some(comm) = after!(l, " commId 0x").and_then(hex_prefix) else { return };
        if complete {
            if self.comms_done.len() < MAX_HOSTS {
                self.comms_done.insert(comm);
            }
            return;
        }
        let (Some(proc), Some(bus), Some(rank)) = (
            proc_of(l),
            after!(l, " busId ").and_then(hex_prefix),
            nranks.and(finder!(" rank ").find(l.as_bytes()).map(|i| &l[i + 6..]).and_then(first_int)),
        ) else {
            return;
        };
        let Some((host, _)) = proc.rsplit_once(':') else { return };
        let rank = rank as usize;
        // Two CUDA devices of one busId are partitions of one GPU (MIG, 2.30's MLOPart), each
        // its own device to NCCL ≥ 2.30 (review 20): the same device ordinal only.
        let dev = after!(l, " cudaDev ").and_then(first_int);
        let this = InitStart { rank, proc: proc.to_string(), dev };
        match self.init_starts.get(&(host.to_string(), comm, bus)) {
            Some(s) if s.rank != rank && s.proc != proc && s.dev == dev && self.same_gpu_starts.len() < 16 => {
                let pair = SameGpuStart { host: host.to_string(), comm, bus, first: s.clone(), other: this };
                self.same_gpu_starts.push(pair);
            }
            Some(_) => {}
            None if self.init_starts.len() < MAX_HOSTS => {
                self.init_starts.insert((host.to_string(), comm, bus), this);
            }
            None => {}
        }
    }

    /// The address a process bootstrapped on, or its OOB interface's (`eth0:10.0.0.1<0>`), kept
    /// once per process.
    fn proc_address(&mut self, l: &str, v: &str) {
        let (Some(proc), Some(a)) = (proc_of(l), if_address(v.trim_start_matches("[0]").trim())) else { return };
        if self.proc_addr.len() < MAX_HOSTS && !self.proc_addr.contains_key(proc) {
            self.proc_addr.insert(proc.to_string(), a.to_string());
        }
    }

    /// libibverbs that cannot be opened, a verbs provider that is missing, a named net plugin
    /// that is absent.
    /// `m`: the gate's mask of the line; each search runs only where its literal's gate bits
    /// are set.
    fn verbs_and_plugin(&mut self, l: &str, m: u64, is_nccl: bool, host: Option<&str>) {
        self.net_plugin_lines(l, m, host);
        if libibverbs_missing(l, m) {
            self.f.ibverbs_missing = true;
            if !is_nccl {
                self.f.nccl_lines += 1;
            }
        }
        if let Some(v) = afterm!(l, m, "libibverbs: Warning: couldn't load driver '") {
            let d = v.split('\'').next().unwrap_or("").to_string();
            if self.f.provider_missing.len() < 64 && !self.f.provider_missing.contains(&d) {
                self.f.provider_missing.push(d);
            }
        }
        // Which NET transports NCCL tried (2.28+: `Initialized NET plugin Socket`, `Failed to
        // initialize NET plugin IB`): only Socket tried is NCCL_NET=Socket, which 2.28 does not echo.
        if let Some(v) = afterm!(l, m, "Initialized NET plugin ") {
            if v.trim() == "Socket" {
                self.f.socket_initialized = true;
            } else {
                self.f.rdma_tried = true;
            }
        }
        if hasm!(l, m, "initialize NET plugin IB")
            || hasm!(l, m, "NET/IB : No device found")
            || has!(l, "NET/IB : Using")
        {
            self.f.rdma_tried = true;
        }
    }

    /// Which net plugin a line names, and one that is missing, rejected or does not load.
    fn net_plugin_lines(&mut self, l: &str, m: u64, host: Option<&str>) {
        // Which net plugin (plugin/net.cc, plugin_open.cc by release): `Loaded net plugin %s
        // (v%d)`, the HPC-X plugin's own `Plugin Path : %s`; NCCL's own: `No plugin found, using
        // internal implementation` (≤ 2.18), `Using internal network plugin.` (2.19–2.25),
        // `Using internal net plugin.` (2.26+).
        let plugin = if hasm!(l, m, "Loaded net plugin") || hasm!(l, m, "Plugin Path : ") {
            1
        } else if hasm!(l, m, "internal net plugin")
            || hasm!(l, m, "internal network plugin")
            || hasm!(l, m, "No plugin found")
        {
            2
        } else {
            0
        };
        if plugin != 0 {
            if let Some(h) = self.view(host) {
                h.net_plugin |= plugin;
            }
        }
        if hasm!(l, m, "NET/Plugin") && plugin_load_error(l).is_some() {
            let at = find!(l, "NET/Plugin").unwrap_or(0);
            self.fail(Failure::NetPluginBroken, None, None, &l[at..]);
            if let Some(h) =
                host.filter(|h| self.f.plugin_broken_on.len() < 64 && !self.f.plugin_broken_on.iter().any(|x| x == h))
            {
                self.f.plugin_broken_on.push(h.to_string());
            }
        }
        if (hasm!(l, m, "NET/Plugin") && (has!(l, "Could not find:") || hasm!(l, m, "Plugin load")))
            && self.f.env("NCCL_NET_PLUGIN").is_some_and(|p| !p.is_empty() && p != "none")
        {
            self.f.plugin_missing = true;
        }
        // 2.28+: `External network plugin <lib> is unsupported` (not a net plugin, or of a
        // version this NCCL does not take): NCCL goes on without it.
        if hasm!(l, m, "network plugin") && has!(l, "is unsupported") {
            self.f.plugin_rejected = true;
        }
    }

    /// Warnings (NCCL's WARN, a framework's relay of it, or NCCL's words without a prefix), NCCL's
    /// error results, and the watchdog's timeout.
    /// `m`: the gate's mask of the line; each search below runs only where its literal's gate
    /// bit is set (each literal holds the GATE entry it is gated by).
    fn warnings_and_errors(&mut self, l: &str, is_nccl: bool, m: u64) {
        let warn = m & gbit!("WARN") != 0;
        if let Some(i) = if warn { find!(l, "NCCL WARN ") } else { None } {
            let msg = l[i + "NCCL WARN ".len()..].to_string();
            // a CUDA call of NCCL's NVLS transport (transport/nvls.cc: the multicast objects
            // over the NVSwitches, cuMulticast*), by the WARN's source location — where it is
            // the first CUDA failure, the one the finding quotes
            if has!(&msg, "Cuda failure") && self.f.failed(Failure::CudaFailure).is_none() {
                self.f.nvls_cuda_failure = has!(&l[..i], "nvls.cc:");
            }
            self.warning(&msg);
        } else if let Some((true, msg)) = if warn && is_nccl { old_tag(l).or_else(|| ofi_test_tag(l)) } else { None } {
            // NCCL 2.0–2.2's untagged `… [0] transport/net_ib.cu:204 WARN <msg>`; aws-ofi-nccl's
            // tests' `WARN: Function: … Line: …: <msg>`
            self.warning(msg);
        } else if l.starts_with("Last error:") || l.ends_with("Last error:") {
            self.last_error_next = true;
            let p = l.strip_suffix("Last error:").unwrap_or("");
            if p.len() <= 256 {
                self.last_error_prefix = p.to_string();
            }
            self.f.nccl_lines += 1;
        } else if let Some(v) = if m & gbit!("rror") != 0 { last_nccl_warning(l) } else { None } {
            // PyTorch ≥ 2.2: Last NCCL warning(error): 'Bootstrap : no socket interface found'
            self.f.nccl_lines += 1;
            let v = v.to_string();
            self.warning(&v);
        } else if let Some(msg) = if warn && !is_nccl { bare_warn(l) } else { None } {
            // `WARN NET/IB: read failed in …`: NCCL's warning without its `NCCL` tag (a relay, a
            // paste): read as one when it carries NCCL's own words.
            self.f.nccl_lines += 1;
            self.warning(msg);
        } else if !is_nccl && !has!(l, "] [c10d] ") {
            // A warning pasted without NCCL's prefix still has NCCL's words; c10d's own logger
            // lines are not NCCL's (its socket and TCPStore retries, `The client socket has
            // failed to connect to [localhost]:… (errno: 99 …)` in healthy jobs: review 6): a
            // rendezvous that failed ends in the exception the framework reader takes.
            if let Some((k, c, ve)) = classify_masked(l, m) {
                if !matches!(k, Failure::CudaFailure) || has!(l, "NCCL") || tests_cuda_failure(l) {
                    self.f.nccl_lines += 1;
                    self.fail(k, c, ve, l);
                }
            }
        }
        self.nccl_error_line(l, is_nccl, m);
        self.framework_failures(l, is_nccl, m);
        self.verbs_lines(l, is_nccl, m);
    }

    /// ncclGetErrorString's words and the results' names (`ncclSystemError`, `NCCL error`, …).
    fn nccl_error_line(&mut self, l: &str, is_nccl: bool, m: u64) {
        // nccl_error's patterns hold `rror` or `Test NCCL`, or are [`names_result`]'s (the gate's
        // `nccl` alone is on every line that names a library path or an NCCL function)
        let error_bits = gbit!("rror") | gbit!("Test NCCL");
        if let Some(e) = if m & error_bits != 0 || names_result(l, m) { nccl_error(l) } else { None } {
            if !is_nccl {
                self.f.nccl_lines += 1;
            }
            let e = e.to_string();
            self.error(&e);
            if has!(&e, "ncclRemoteError") || has!(&e, "remote process exited") {
                self.fail(Failure::RemoteExit, None, None, &e);
            } else if has!(&e, "ncclSocketInit") && has!(&e, "family") {
                self.fail(Failure::NoSocketInterface, None, None, &e);
            }
        }
    }

    /// PyTorch's NCCL process group: its lines, its check for GPUs, its watchdog's end.
    fn process_group_lines(&mut self, l: &str, is_nccl: bool, m: u64) {
        // Any line of PyTorch's NCCL process group (its C++ logger names ProcessGroupNCCL.cpp)
        // is a job on NCCL: without NCCL's own lines the log is thin (inconclusive, with the
        // variables to set), not "not a log".
        // (`ProcessGroupNCCL.cpp:` as its logger prints it, not a build's `ProcessGroupNCCL.cpp.o`)
        if !is_nccl && m & gbit!("ProcessGroupNCCL") != 0 && has!(l, "ProcessGroupNCCL.cpp:") {
            self.f.nccl_lines += 1;
        }
        // ProcessGroupNCCL's check for GPUs before it makes a communicator
        if !is_nccl && m & gbit!("ProcessGroupNCCL") != 0 && has!(l, "ProcessGroupNCCL is only supported with GPUs") {
            self.f.nccl_lines += 1;
            self.fail(Failure::NoGpu, None, None, l);
        }
        // ProcessGroupNCCL.cpp, after an error or a timeout its watchdog caught (async error
        // handling on, the default): it then calls std::abort.
        if !is_nccl && m & gbit!("ProcessGroupNCCL") != 0 && has!(l, "we are taking the entire process down") {
            let rank = l.split_once("[Rank ").and_then(|(_, r)| first_int(r)).map_or(u32::MAX, |r| r as u32);
            if self.pg_abort.len() < 64 && !self.pg_abort.contains(&rank) {
                self.pg_abort.push(rank);
            }
        }
        // Its watchdog ended the process (also as `what():` relays it without the logger's
        // prefix): a collective that timed out when the exception is a timeout's.
        if !is_nccl && m & gbit!("atchdog") != 0 {
            const END: &str = "atchdog thread terminated with exception: ";
            if let Some(e) = l.find(END).map(|i| &l[i + END.len()..]) {
                if ["imeout", "timed out", "DesyncReport"].iter().any(|w| e.contains(w)) {
                    self.f.nccl_lines += 1;
                    self.fail(Failure::CollectiveTimeout, None, None, l);
                } else if e.starts_with("CUDA error: ") {
                    // c10's C10_CUDA_CHECK in the watchdog's own CUDA calls (its event queries:
                    // a kernel's fault surfaces there, review 23)
                    self.f.nccl_lines += 1;
                    self.fail(Failure::CudaFailure, None, None, l);
                }
            }
        }
    }

    /// rdma-core's own lines: a missing provider, libmlx5's completion error.
    fn verbs_lines(&mut self, l: &str, is_nccl: bool, m: u64) {
        if m & gbit!("userspace device") != 0 {
            self.provider_missing(l, is_nccl);
        }
        // libmlx5 (providers/mlx5/cq.c): `PFX "%s: got completion with error:\n"`, PFX
        // `mlx5: `, then the CQE's words: a work request the HCA completed in error.
        if !is_nccl && m & gbit!("rror") != 0 {
            let t = l.trim_end();
            if t.starts_with("mlx5: ") && t.ends_with(": got completion with error:") {
                self.f.nccl_lines += 1;
                self.fail(Failure::CompletionError, None, None, t);
            }
        }
    }

    /// Exceptions of the framework around NCCL (a line with `rror`, not NCCL's own).
    fn framework_errors(&mut self, l: &str) {
        if let Some((k, code)) = slurm_line(l) {
            self.f.nccl_lines += 1;
            self.fail_exit(k, code, l.trim());
        }
        // PyTorch's exceptions for a failed CUDA call: c10's C10_CUDA_CHECK `CUDA error: %s`
        // (cudaGetErrorString's words) and the caching allocator's `CUDA out of memory. Tried
        // to allocate …`, each after the exception's type (`torch.AcceleratorError: `,
        // `RuntimeError: `, `torch.OutOfMemoryError: `).
        if has!(l, "Error: CUDA error: ") || has!(l, "Error: CUDA out of memory.") {
            self.f.nccl_lines += 1;
            let k = if has!(l, "no CUDA-capable device is detected") { Failure::NoGpu } else { Failure::CudaFailure };
            self.fail(k, None, None, l);
        }
        // A Python exception whose message starts with NCCL's name (`RuntimeError: NCCL
        // communicator was aborted …`, a relay cut after `RuntimeError: NCCL`): an NCCL error
        // the framework raised (a failure where no more specific line explains it, as
        // nccl_error's).
        // CuPy's NCCL binding (Ray, Alpa, Chainer): `NcclError: NCCL_ERROR_…`, relayed by Ray as
        // `RayTaskError(NcclError)`: an NCCL call returned an error
        if has!(l, "NcclError: ") || has!(l, "(NcclError)") {
            self.f.nccl_lines += 1;
            self.error(l.trim());
        }
        let exc = exception(l);
        self.aborts_and_exceptions(l, exc);
        if exc.is_some_and(|(_, msg)| msg.starts_with("NCCL")) && nccl_error(l).is_none() {
            self.f.nccl_lines += 1;
            self.error(l.trim());
        }
        // c10/cuda/CUDAFunctions.cpp: `TORCH_CHECK(count, "No CUDA GPUs are available")`;
        // ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL): `Detected mismatch between
        // collectives on ranks. Rank %d is running collective: %s, but Rank %d is running …`;
        // the exception itself, not a line that quotes it (a CPU-only helper of a healthy job
        // may log its own probe's message)
        // an exception without a message prints its type alone (`…api.RendezvousTimeoutError`)
        let t = l.trim();
        if exc.is_none() && !t.contains(' ') && rendezvous_error_type(t) {
            self.f.nccl_lines += 1;
            self.fail(Failure::Rendezvous, Some(4), None, t);
        }
        let Some((ty, msg)) = exc else { return };
        if let Some(code) = rendezvous_failure(msg).or_else(|| rendezvous_error_type(ty).then_some(4)) {
            self.f.nccl_lines += 1;
            self.fail(Failure::Rendezvous, Some(code), None, l.trim());
        } else if has!(msg, "cannot open shared object file") && loads_libnccl(msg) {
            self.f.nccl_lines += 1;
            self.fail(Failure::NcclNotLoaded, None, None, l.trim());
        } else if msg.starts_with("No CUDA GPUs are available") {
            self.f.nccl_lines += 1;
            self.fail(Failure::NoGpu, None, None, l);
        } else if has!(msg, "Detected mismatch between collectives on ranks") {
            self.f.nccl_lines += 1;
            self.fail(Failure::CollectiveMismatch, None, None, l);
        }
    }

    /// vLLM's and SGLang's pynccl wrapper that could not load its library; the failures
    /// torch.multiprocessing.spawn reports.
    fn wrapper_lines(&mut self, l: &str, is_nccl: bool, m: u64) {
        // The pynccl wrappers of vLLM, SGLang, Megatron and their forks (pynccl_wrapper.py:
        // `logger.error("Failed to load NCCL library from %s. It is expected if you are not
        // running on NVIDIA/AMD GPUs. …", so_file, …)`, then `raise e`, which most callers catch
        // to disable the wrapper): a fact for a note, not a failure (review 21)
        if !is_nccl && m & gbit!("ailed") != 0 && self.f.pynccl_unloaded.is_none() {
            if let Some(v) = after!(l, "Failed to load NCCL library from ") {
                self.f.nccl_lines += 1;
                let path = v.split(' ').next().unwrap_or("").trim_end_matches('.');
                self.f.pynccl_unloaded = Some(clip(path, 200));
            }
        }
        if !is_nccl && m & (gbit!("ignal") | gbit!("rror") | gbit!("xit")) != 0 {
            if let Some((k, code)) = spawn_failure(l) {
                self.f.nccl_lines += 1;
                match code {
                    // a SIGABRT the watchdog announced is its own stop (fail_exit reads it)
                    Some(n) => self.fail_exit(k, n, l.trim()),
                    None => self.fail(k, None, None, l.trim()),
                }
            }
        }
    }

    /// An uncaught DistBackendError's abort (PyTorch's own, as its announced one), and the
    /// first exception a worker raised that is not NCCL's relayed error (review 5).
    fn aborts_and_exceptions(&mut self, l: &str, exc: Option<(&str, &str)>) {
        // `terminate called after throwing an instance of 'c10::DistBackendError'`: the process
        // ends (SIGABRT) on an NCCL error PyTorch raised, as its announced abort does
        // (the watchdog's own exception, `… watchdog thread terminated with exception: …`, thrown
        // from its thread, ends the process the same way: tistory 9566's spawn-reported SIGABRT)
        if (has!(l, "terminate called after throwing an instance of 'c10::DistBackendError'")
            || has!(l, "watchdog thread terminated with exception"))
            && !self.pg_abort.contains(&u32::MAX)
            && self.pg_abort.len() < 64
        {
            self.pg_abort.push(u32::MAX);
        }
        // the worker's own exception, not NCCL's relayed error (review 5)
        let own = |ty: &str, m: &str| {
            !m.trim().is_empty()
                && !ty.ends_with("ChildFailedError")
                && !ty.ends_with("DistBackendError")
                && !ty.starts_with("nccl")
                && !m.starts_with("NCCL")
        };
        if let Some((ty, msg)) = exc.filter(|(ty, m)| self.f.exception.is_none() && own(ty, m)) {
            self.f.exception = Some(clip(&format!("{ty}: {}", msg.trim()), 200));
        }
    }

    /// What the framework around NCCL reports: PyTorch's watchdog timeout, torchrun's worker
    /// that failed or died of a signal.
    /// misc/socket.cc's `%s: connect returned %s, retrying (%d/%ld) after sleep for %u msec`
    /// (2.19+; `%s: connect to %s returned %s, …` since 2.2x): its counter is post-incremented,
    /// so at `(N/N)` the next refusal ends the connect with `exceeded error retry count`; a log
    /// that stops there shows every attempt failing (a peer that never listened, no route).
    fn connect_retries(&mut self, l: &str) {
        let Some((head, n)) = l.split_once(", retrying (") else { return };
        if !(has!(head, "onnect returned ") || (has!(head, "onnect to ") && has!(head, " returned "))) {
            return;
        }
        let mut it = n.split(['/', ')']).map(|x| x.trim().parse::<u64>().ok());
        if let (Some(Some(i)), Some(Some(max))) = (it.next(), it.next()) {
            if max > 0 && i >= max {
                // the last attempt comes after this line and may connect: a failure only where
                // its process completed no init after it (followed as the table's warnings)
                let first = !self.f.failures.iter().any(|x| x.kind == Failure::SocketConnect);
                self.fail(Failure::SocketConnect, None, None, l.trim());
                if let Some(i) = self.f.failures.iter().position(|x| x.kind == Failure::SocketConnect) {
                    if first {
                        self.warn_proc = proc_of(l).map(str::to_string);
                        self.follow(i);
                        self.warn_proc = None;
                    }
                }
            }
        }
    }

    /// ProcessGroupNCCL's heartbeat monitor (2.2+, TORCH_NCCL_ENABLE_MONITORING, on by default):
    /// `ProcessGroupNCCL's watchdog got stuck for %d seconds without making progress in
    /// monitoring enqueued collectives. …` (2.3+; 2.8+ from the watchdog's own handleStall),
    /// 2.2's `Heartbeat monitor timed out! Process will be terminated after dumping debug info.`
    /// — then it aborts the process (pytorch's ProcessGroupNCCL.cpp HeartbeatMonitor); also
    /// glued onto the end of an NCCL line by another process's write (review 23).
    fn heartbeat_monitor(&mut self, l: &str, is_nccl: bool, m: u64) {
        if m & gbit!("ProcessGroupNCCL") != 0
            && (has!(l, "ProcessGroupNCCL's watchdog got stuck for ")
                || has!(l, "Heartbeat monitor timed out! Process will be terminated"))
        {
            self.f.nccl_lines += usize::from(!is_nccl);
            self.fail(Failure::WatchdogStuck, None, None, l);
        }
    }

    /// PyTorch's watchdog on a collective, and its store's client timing out.
    fn watchdog_and_store(&mut self, l: &str, is_nccl: bool, m: u64) {
        if m & gbit!("atchdog") != 0 && has!(l, "Watchdog caught collective operation timeout") {
            self.fail(Failure::CollectiveTimeout, None, None, l);
        }
        // ProcessGroupNCCL's watchdog (2.3+): `%s failure detected by watchdog at work sequence
        // id: %d PG status: …` once a work holds an exception (a timeout or NCCL's async
        // error), `Received a dump signal due to a collective timeout from %s …` on the ranks
        // told of another's timeout
        // (2.5+: `Observed flight recorder dump signal from another rank via TCPStore.`, the
        // heartbeat monitor's when another rank's watchdog broadcast it); a C++ backtrace whose
        // exception was built in WorkNCCL::checkTimeout (c10::Error records its throw site)
        if !is_nccl
            && ((m & gbit!("atchdog") != 0 && has!(l, " failure detected by watchdog at work sequence id"))
                || (m & gbit!("ignal") != 0
                    && (has!(l, "Received a dump signal due to a collective timeout")
                        || has!(l, "Observed flight recorder dump signal from another rank")))
                || (m & gbit!("ProcessGroupNCCL") != 0
                    && l.trim_start().starts_with("frame #")
                    && has!(l, "ProcessGroupNCCL::WorkNCCL::checkTimeout(")))
        {
            self.f.nccl_lines += 1;
            self.watchdog_failure_lines += usize::from(has!(l, " failure detected by watchdog at work sequence id"));
            self.fail(Failure::CollectiveTimeout, None, None, l);
        }
        // c10d's TCPStore (2.8+, pytorch#153586): a client whose server went away while it waited
        // on a key — the store's host exited or crashed (a crash, or rank 0 ending first): a
        // note, not a failure (the same line follows a healthy rank 0 that finished first)
        if !is_nccl
            && self.f.store_closed.is_none()
            && m & gbit!("ailed") != 0
            && has!(l, "Connection was likely closed. Did the remote server shutdown or crash?")
        {
            self.f.nccl_lines += 1;
            // the store's address, `remote=[host]:port` (2.8+), else the line
            let remote = after!(l, "remote=[").and_then(|r| r.split_once(']')).map(|(h, p)| {
                let port: String = p.trim_start_matches(':').chars().take_while(char::is_ascii_digit).collect();
                format!("{h}:{port}")
            });
            self.f.store_closed = Some(remote.unwrap_or_else(|| clip(l.trim(), 300)));
        }
        // c10d's socket.cpp (2.2+): `waitForInput: socket %s timed out after %dms`, then the
        // store client raises `Socket Timeout`: a store peer that never answered
        if !is_nccl
            && m & gbit!("ocket") != 0
            && has!(l, "waitForInput: socket ")
            && after!(l, " timed out after ").and_then(first_int).is_some()
        {
            self.f.nccl_lines += 1;
            let first = !self.f.failures.iter().any(|x| x.kind == Failure::Rendezvous);
            self.fail(Failure::Rendezvous, Some(6), None, l.trim());
            // PyTorch's store-based barrier waits in slices and retries after each warning: a
            // failure only where no init completed after it (finish)
            if first {
                self.store_wait = self.f.failures.iter().position(|x| x.kind == Failure::Rendezvous);
            }
        }
    }

    fn framework_failures(&mut self, l: &str, is_nccl: bool, m: u64) {
        if !is_nccl && m & gbit!("rror") != 0 {
            self.framework_errors(l);
        }
        self.watchdog_and_store(l, is_nccl, m);
        self.heartbeat_monitor(l, is_nccl, m);
        self.wrapper_lines(l, is_nccl, m);
        // ProcessGroupNCCL's watchdog ended the process: `[Rank %d] NCCL watchdog thread
        // terminated with exception: %s` (`Process group watchdog …` since 2.2). Its exception
        // from a timeout (its own text, or the desync report it builds only after one:
        // retrieveDesyncReport) is a collective that timed out; an NCCL error in it is read
        // as one by nccl_error.
        self.process_group_lines(l, is_nccl, m);
        // abseil's failure signal handler (JAX, XLA, TensorFlow, …): `*** %s received at time=%ld
        // on cpu %d ***`; glog's `*** SIGSEGV (@0x0) received by PID %d (TID …) from PID %d;
        // stack trace: ***`. SIGTERM is a stop from outside, not a crash.
        if !is_nccl && m & gbit!("*** SIG") != 0 {
            if let Some(n) = signal_banner(l) {
                self.f.nccl_lines += 1;
                self.fail_exit(Failure::Crash, n, l.trim());
            }
        }
        // a batch script's shell on a command that died of a signal: bash's `%s: line %d: %5d
        // %s %s` (script, line, pid, strsignal's words with ` (core dumped)`, the command)
        if !is_nccl && m & gbit!(": line ") != 0 {
            if let Some(n) = shell_signal(l) {
                self.f.nccl_lines += 1;
                self.fail_exit(Failure::Crash, n, l.trim());
            }
        }
        self.launcher_and_driver_lines(l, is_nccl, m);
        if !is_nccl && m & (gbit!("ailed") | gbit!("ignal") | gbit!("xit")) != 0 {
            if let Some((k, code)) = torchrun_failure(l) {
                self.f.nccl_lines += 1;
                self.fail_exit(k, code, l);
            } else if m & gbit!("ailed") != 0 && child_failed(l) && self.child_failed.is_none() {
                self.f.nccl_lines += 1;
                self.child_failed = Some(clip(l.trim(), 160));
            }
            // a row of its table of failures, whatever the code (`-15`, stopped, is none)
            let t = l.trim_start();
            self.exit_rows += usize::from(t.starts_with("exitcode") || has!(t, "failed (exitcode: "));
        }
        // agent/server/api.py: `[%s] Worker group %s. %s/%s attempts left; will restart worker
        // group`: the attempt's failures before it were retried (one seen again after it says
        // the retry failed too).
        if m & gbit!("restart worker group") != 0 && has!(l, "attempts left; will restart worker group") {
            self.init_at_restart = self.f.init_done;
            for (i, x) in self.f.failures.iter().enumerate() {
                if matches!(x.kind, Failure::WorkerExit | Failure::Crash | Failure::CudaFailure | Failure::Rendezvous) {
                    if let Some(r) = self.retried.iter_mut().find(|r| r.0 == i) {
                        r.1 = x.count;
                    } else if self.retried.len() < 64 {
                        self.retried.push((i, x.count));
                    }
                }
            }
        }
    }

    /// Lines of no NCCL of the job's other producers: the GPU driver's Xid, nccl-tests' failure
    /// trace, Open MPI's reports of a failed process.
    fn launcher_and_driver_lines(&mut self, l: &str, is_nccl: bool, m: u64) {
        if is_nccl {
            return;
        }
        // (the driver's line, not NCCL's: a dmesg alone is no NCCL log)
        // (the log's weightiest Xid stands for them all: a clean-up's 45 or a remap's 63 before
        // a GPU that fell off the bus hid it: review 30)
        if m & gbit!("Xid (") != 0 {
            if let Some(n) = gpu_xid(l) {
                match self.f.failures.iter_mut().find(|x| x.kind == Failure::GpuXid) {
                    Some(x) if x.code.is_none_or(|c| xid_weight(n) > xid_weight(c)) => {
                        (x.code, x.line) = (Some(n), clip(l.trim(), 300));
                        x.count += 1;
                    }
                    Some(x) => x.count += 1,
                    None => self.fail(Failure::GpuXid, Some(n), None, l.trim()),
                }
            }
        }
        // (weighed at the end: [`Analyser::trace_exit_failure`])
        if m & (gbit!(" failure") | gbit!("xit")) != 0 && test_or_mpi_failure(l) {
            self.f.nccl_lines += usize::from(has!(l, ": Test failure "));
            if self.trace_exit.is_none() {
                self.trace_exit = Some(clip(l.trim(), 300));
            }
        }
        // (Open MPI's lines are any MPI program's: no NCCL line, a log of them alone is none)
        if m & gbit!("ignal") != 0 {
            if let Some(n) = mpi_signal(l) {
                self.fail_exit(Failure::Crash, n, l.trim());
            }
        }
    }

    /// nccl-tests' trace or Open MPI's report, where the log holds no failure of its own (an
    /// Xid is the driver's, weighed after), no error and no wrong result: a worker's failure.
    fn trace_exit_failure(&mut self) {
        if let Some(l) = self.trace_exit.take() {
            if self.f.failures.iter().all(|x| x.kind == Failure::GpuXid)
                && self.f.errors.is_empty()
                && !self.tests_wrong
            {
                self.fail(Failure::WorkerExit, None, None, &l);
            }
        }
    }

    /// torchrun's ChildFailedError with no row of its table of failures in the log, and no
    /// other worker's exit or crash: a worker exited, its code unknown.
    fn child_failed_exit(&mut self) {
        if let Some(l) = self.child_failed.take().filter(|_| self.exit_rows == 0) {
            if !self.f.failures.iter().any(|x| matches!(x.kind, Failure::WorkerExit | Failure::Crash)) {
                self.fail(Failure::WorkerExit, None, None, &l);
            }
        }
    }

    /// libibverbs without the provider for a device (libmlx5 for mlx5).
    fn provider_missing(&mut self, l: &str, is_nccl: bool) {
        if let Some(v) = after!(l, "no userspace device-specific driver found for ") {
            let d = v.trim().rsplit('/').next().unwrap_or("").to_string();
            if self.f.provider_missing.len() < 64 && !self.f.provider_missing.contains(&d) {
                self.f.provider_missing.push(d);
            }
            if !is_nccl {
                self.f.nccl_lines += 1;
            }
        }
    }

    /// NCCL's return-code trace, `INFO <file>:<line> -> <result>` (NCCLCHECK's), printed on the
    /// way up from a failed call. One that reaches communicator set-up, a group, the transport
    /// set-up, the proxy or the bootstrap is a failure even when no WARN says more; a trace
    /// inside a plugin's property query (`include/net.h`) alone is NCCL trying the next
    /// device, and is not.
    fn error_trace(&mut self, l: &str) {
        let Some(rest) = after!(l, "NCCL INFO ") else { return };
        let Some((base, code)) = trace_parts(rest.trim_start()).or_else(|| prefixed_trace(rest)) else { return };
        if code == 0 {
            return;
        }
        // an error on its way up after a warning no rule knows: that warning failed the call
        // (7, ncclInProgress, is a non-blocking call still running)
        if code != 7 && proc_of(l).is_some_and(|p| self.unknown_procs.iter().any(|u| u == p)) {
            self.f.error_after_unknown_warning = true;
        }
        let top = ["init.cc", "group.cc", "transport.cc", "proxy.cc", "bootstrap.cc", "enqueue.cc", "collectives.cc"];
        if !top.contains(&base) {
            return;
        }
        self.trace_failures += 1;
        match proc_of(l) {
            Some(p) if !self.done_procs.contains(p) && self.traced_procs.len() < 256 => {
                self.traced_procs.insert(p.to_string());
            }
            _ => self.trace_kept = true,
        }
        if self.trace_line.is_none() || (base == "bootstrap.cc" && !self.trace_bootstrap) {
            self.trace_line = Some(clip(rest, 300));
            self.trace_bootstrap = base == "bootstrap.cc";
        }
    }

    pub fn finish(mut self) -> LogFacts {
        self.bare_warnings();
        self.child_failed_exit();
        self.trace_exit_failure();
        let mut f = std::mem::take(&mut self.f);
        f.launcher_nodes = settled_launcher_nodes(&self.launcher_nodes);
        if let Some(n) = f.nranks {
            f.ranks_seen = self.rank_pairs.iter().filter(|(r, m)| *m == n && *r < n).count();
        }
        self.passed_failures(&mut f);
        f.per_host = std::mem::take(&mut self.views).into_iter().map(HostView::settled).collect();
        f.net_plugin_split = plugin_split(&f.per_host);
        f.modify_qp_errnos.sort_unstable();
        f.modify_qp_errnos.dedup();
        f.ib_speeds_cover_devices =
            !f.ib_devices.is_empty() && f.ib_devices.iter().all(|d| self.port_speed_devs.contains(&d.name));
        // No `Using network` line, and channels over both NET/IB and NET/Socket: processes that
        // took different networks (NCCL's net is one per process), or two jobs in one file (an
        // `sbatch --open-mode=append` output, review 12) — both networks seen, so "mixed"
        if self.networks.is_empty() && f.channels.net_ib > 0 && f.channels.net_socket > 0 {
            self.networks.extend(["IB".to_string(), "Socket".to_string()]);
        }
        let held: BTreeSet<String> = f.per_host.values().flat_map(|v| v.networks.iter().cloned()).collect();
        f.networks_seen = one_plugin_one_network(&mut self.networks, &held);
        f.network = self.chosen_network(&f);
        ib_open_kept(&mut f);
        self.drop_superseded_failures(&mut f);
        self.abort_announced_anywhere(&mut f);
        f.bootstrap_ifs = std::mem::take(&mut self.boot).into_iter().collect();
        f.hosts = self.settled_hosts();
        f.hosts.sort_unstable();
        // Rings of one rank, printed on several hosts: each process made a communicator of its
        // own (one job per node, or mpirun without MPI in the test): they never joined.
        let net = f.channels.net_ib + f.channels.net_socket + f.channels.net_other;
        if f.ring_max == Some(1) && f.hosts.len() >= 2 && net == 0 && f.separate_runs.is_none() {
            f.separate_runs = Some(format!(
                "every ring NCCL printed holds one rank (\"Channel 00/NN :    0\"), on {} hosts: each process formed a communicator of its own",
                f.hosts.len()
            ));
        }
        let net_channels = f.channels.net_ib + f.channels.net_other;
        // Channels with /GDRDMA are GPUDirect in use (where some ranks lack it, `gdr_partial`
        // says so); none, with network channels or an HCA's "Disabled", is no GPUDirect.
        f.gdr = if f.channels.net_ib_gdr > 0 {
            Some(true)
        } else if net_channels > 0 || self.gdr_disabled {
            Some(false)
        } else {
            None
        };
        self.trace_and_error_failures(&mut f);
        self.same_gpu_failure(&mut f);
        f.failures.sort_by_key(|x| x.kind);
        f
    }

    /// Failures the job went past (`init_completed_after`): warnings every process that printed
    /// them completed its init after, the store's wait a later init answered, and Xids of no
    /// consequence to the job ([`xids_settled`]).
    fn passed_failures(&self, f: &mut LogFacts) {
        for (i, x) in f.failures.iter_mut().enumerate() {
            let mut by = self.warned.iter().filter(|w| w.1 == i).peekable();
            x.init_completed_after =
                !self.warned_unfollowed.contains(&i) && by.peek().is_some() && by.all(|w| w.2 && !w.0.is_empty());
        }
        if let Some(x) = self.store_wait.and_then(|i| f.failures.get_mut(i)) {
            x.init_completed_after |= x.count == 1 && self.last_done_at > x.at;
        }
        xids_settled(f, self.tests_wrong);
    }

    /// Two ranks of one communicator that started on one machine's one GPU ([`Self::init_start`]):
    /// NCCL's duplicate check (init.cc, after its first all-gather: equal host hashes and busIds,
    /// ncclInvalidUsage) stops that communicator, and an excerpt may have cut its warning.
    /// A host name is not a machine (NCCL's host hash is the whole name and the boot id, the
    /// prefix the name up to its first dot: `localhost`, `ubuntu`, `10` of an IP-named host;
    /// identical machines share busIds — review 19), so only where both processes bootstrapped
    /// on one address, and not where the log shows the check passed or cannot apply: a line NCCL
    /// prints after it (`nNodes`/`localRanks`, a channel, a ring, a connection or its failure, Init
    /// COMPLETE), NCCL_HOSTID (one machine as several hosts), NCCL ≥ 2.30 (GPUs compared by UUID,
    /// several ranks on one GPU allowed with NCCL_MULTI_RANK_GPU_ENABLE), or NCCL's own warning.
    fn same_gpu_failure(&mut self, f: &mut LogFacts) {
        let c = &f.channels;
        let past_check = f.nnodes.is_some()
            || f.local_ranks.is_some()
            || f.ring_max.is_some()
            || f.init_complete > 0
            || c.net_ib + c.net_socket + c.net_other + c.p2p + c.shm + c.other > 0
            || f.failures.iter().any(|x| {
                matches!(
                    x.kind,
                    Failure::QpInvalid
                        | Failure::QpUnreachable
                        | Failure::QpTimeout
                        | Failure::QpNoDevice
                        | Failure::QpOther
                        | Failure::RetryExceeded
                        | Failure::LocalProtection
                        | Failure::CompletionError
                        | Failure::DuplicateGpu
                )
            });
        let v230 = f.version.as_deref().and_then(version_triple).is_some_and(|v| v >= (2, 30, 0));
        if past_check || v230 || f.env("NCCL_HOSTID").is_some() || f.env("NCCL_MULTI_RANK_GPU_ENABLE").is_some() {
            return;
        }
        let one_machine = |a: &String, b: &String| match (self.proc_addr.get(a), self.proc_addr.get(b)) {
            (Some(x), Some(y)) => x == y && !shared_address(x),
            _ => false,
        };
        let Some(SameGpuStart { host, comm, bus, first, other }) = self
            .same_gpu_starts
            .iter()
            .find(|p| !self.comms_done.contains(&p.comm) && one_machine(&p.first.proc, &p.other.proc))
        else {
            return;
        };
        let (a, b) = (first.rank, other.rank);
        let addr = self.proc_addr.get(&first.proc).map(String::as_str).unwrap_or("");
        f.failures.push(FailureSeen {
            kind: Failure::DuplicateGpu,
            line: clip(
                &format!(
                    "ranks {} and {} of one communicator (commId 0x{comm:x}) started on {host}'s GPU busId {bus:x} from one address ({addr}), and the log shows nothing of that communicator after: NCCL's duplicate-GPU check stops it",
                    a.min(b),
                    a.max(b)
                ),
                300,
            ),
            count: 1,
            code: None,
            vendor_err: None,
            class: None,
            init_completed_after: false,
            at: f.lines,
        });
    }

    /// [`Analyser::announced_abort`] for a SIGABRT report that names no local rank (bash's
    /// `line N: PID Aborted`, srun's `task N: Aborted`, abseil's banner), over the whole log: the
    /// announcement may come after the report (an .err file read before its .out).
    fn abort_announced_anywhere(&self, f: &mut LogFacts) {
        if self.pg_abort.is_empty() {
            return;
        }
        let unlabelled =
            |x: &FailureSeen| x.kind == Failure::Crash && x.code == Some(6) && !x.line.contains("local_rank: ");
        let Some(i) = f.failures.iter().position(unlabelled) else { return };
        let x = f.failures.remove(i);
        match f.failures.iter_mut().find(|w| w.kind == Failure::WorkerExit) {
            Some(w) => w.count += x.count,
            None => f.failures.push(FailureSeen { kind: Failure::WorkerExit, code: Some(-6), ..x }),
        }
    }

    /// The network NCCL took: its `Using network` line, or where none is in the log, what the
    /// lines it prints on the way show.
    fn chosen_network(&mut self, f: &LogFacts) -> Option<String> {
        match self.networks.len() {
            // No `Using network` line (NCCL before 2.6 printed none, and excerpts cut it): NCCL
            // starts its socket transport only after the IB one found no device (2.4–2.18
            // init.cc initNet: IB, else Socket; 2.19+ net.cc: the first network with devices),
            // so `NET/Socket : Using` after `NET/IB : No device found` is the network it took; so
            // it is after `Failed to open libibverbs.so[.1]` (ibvwrap's symbols missing: ncclIbInit
            // fails, and NCCL goes on to the next transport).
            // Not where another host listed IB devices or aws-ofi-nccl selected a provider: that
            // one took it, the job is mixed (reviews 19, 20).
            0 if (f.ib_no_device || f.ibverbs_missing)
                && !f.socket_ifs.is_empty()
                && !net_named_elsewhere(f)
                && !f.per_host.iter().any(|(_, h)| h.ib_ports > 0)
                && f.ofi_provider.is_none() =>
            {
                Some("Socket".into())
            }
            // `NET/IB: Dev 0 Port 1 qpn 3928 mtu 3 …`: a queue pair NCCL's IB transport set up
            // (net_ib.cc's connect/accept, NET subsystem) — the network is IB.
            0 if self.ib_qp => Some("IB".into()),
            0 => None,
            1 => std::mem::take(&mut self.networks).into_iter().next(),
            _ => Some("mixed".into()),
        }
    }

    /// Failures that later lines showed were not the job's: an OFI provider search that ended
    /// in a selection, worker failures torchrun restarted the group after, an OFI plugin NCCL
    /// dropped for its own IB transport.
    fn drop_superseded_failures(&self, f: &mut LogFacts) {
        // A worker's failures that torchrun restarted the group after, not seen again, where an
        // init completed after the restart: the retries are the job's own policy, and what the
        // restarted run did is in the lines after. RAS could not listen on its client port
        // (another job's RAS holds it: the same port on a shared node) and went on without it:
        // the warnings of ras/client_support.cc are not the job's (where a failure holds only
        // those). Both by the failures' own indices, in one pass (review 5: a second pass read
        // shifted indices and dropped the job's failure).
        let (retried, origin) = (&self.retried, &self.ras_origin);
        let restarted = f.init_done > self.init_at_restart;
        let ras = self.ras_client_failed > 0;
        let mut i = 0;
        f.failures.retain(|x| {
            let drop = (restarted && retried.iter().any(|r| r.0 == i && r.1 == x.count))
                || (ras && origin.iter().any(|r| r.0 == i && r.1 == x.count));
            i += 1;
            !drop
        });
        // The watchdog's `failure detected by watchdog` with no line saying a collective timed
        // out, beside NCCL's own error (a peer that left, ncclRemoteError): the watchdog relaying
        // that error, not a timeout (device set 13: rank 0 exited, rank 1's watchdog reported)
        let nccl_err = f.failures.iter().any(|x| matches!(x.kind, Failure::RemoteExit | Failure::NcclError));
        let wd = self.watchdog_failure_lines;
        if nccl_err {
            f.failures.retain(|x| !(x.kind == Failure::CollectiveTimeout && x.count <= wd));
        }
        // Slurm stopped the job (a time limit, scancel: SIGTERM, then SIGKILL after KillWait):
        // a SIGKILL reported after the stop is the stop's (review 8: bash's `Killed` after
        // `CANCELLED … DUE TO TIME LIMIT`)
        if let Some(stop) = f.failures.iter().filter(|x| x.kind == Failure::SlurmStopped).map(|x| x.at).min() {
            f.failures.retain(|x| !(x.kind == Failure::Crash && x.code == Some(9) && x.at > stop));
            // torch.multiprocessing.spawn terminating the others after the stop reached one
            // of its processes (review 22: submitit's SIGTERM at a time limit)
            f.failures.retain(|x| !(x.kind == Failure::WorkerExit && x.code.is_none() && x.at > stop));
        }
        // A provider selected: the search's misses on the way were not the failure; any other
        // no-device line (no protocol worked, the plugin failed to initialise) still is.
        if self.ofi_selected {
            let search = self.ofi_search_failed;
            f.failures.retain(|x| x.kind != Failure::OfiNoDevice || x.count > search);
        }
        // The OFI plugin could not start and NCCL went on with its own IB transport
        // (plugin/net.cc disables a plugin whose init fails): the plugin's failure is not the job's.
        if f.network.as_deref().is_some_and(|n| n.starts_with("IB")) {
            f.failures.retain(|x| x.kind != Failure::OfiNoDevice);
        }
        // The proxy's own teardown (proxy.cc: `[Proxy Service %d] Failed to execute operation
        // Close from rank %d`, after its service thread's `Accept failed` and `Could not receive
        // type from localRank`): the communicator was being closed, as a process that exits
        // without destroying it does; not the job's failure (a failure before it stays).
        let class_is = |x: &FailureSeen, c: &str| x.kind == Failure::NcclWarning && x.class.as_deref() == Some(c);
        if f.failures.iter().any(|x| class_is(x, "proxy-teardown")) {
            f.failures.retain(|x| !class_is(x, "proxy-teardown") && !class_is(x, "proxy-service-thread"));
        }
    }

    /// NCCL's return-code trace up from a failed set-up, or its error result alone, where no
    /// classified WARN says more: still a failure.
    fn trace_and_error_failures(&mut self, f: &mut LogFacts) {
        // NCCL's return-code trace up from a failed set-up, with no WARN that says more: the
        // bootstrap's is a connection between ranks that failed. Not where every process that
        // traced one completed an init after it (a failed communicator the job went on past, as
        // followed warnings are).
        let went_on = !self.trace_kept && self.traced_procs.is_empty();
        if let Some(t) = self.trace_line.take().filter(|_| !went_on) {
            let kind = if self.trace_bootstrap { Failure::SocketConnect } else { Failure::NcclError };
            if !f.failures.iter().any(|x| x.kind != Failure::UnknownWarning && !x.init_completed_after) {
                f.failures.push(FailureSeen {
                    kind,
                    line: t,
                    count: self.trace_failures,
                    code: None,
                    vendor_err: None,
                    class: None,
                    init_completed_after: false,
                    at: usize::MAX,
                });
            }
        }
        // NCCL's error result alone (no WARN classified): still a failure.
        if f.failures.iter().all(|x| x.kind == Failure::UnknownWarning || x.init_completed_after)
            && !f.errors.is_empty()
        {
            let e = f.errors[0].clone();
            f.failures.push(FailureSeen {
                kind: Failure::NcclError,
                line: e,
                count: 1,
                code: None,
                vendor_err: None,
                class: None,
                init_completed_after: false,
                at: usize::MAX,
            });
        }
    }
}

/// Some hosts load a net plugin, others use NCCL's internal one: which (plugin/net.cc).
fn plugin_split(per_host: &BTreeMap<String, HostView>) -> Option<String> {
    let on = |bit: u8| -> Vec<String> {
        per_host.iter().filter(|(_, v)| v.net_plugin & bit != 0).map(|(h, _)| h.clone()).collect()
    };
    let (ext, int) = (on(1), on(2));
    (!ext.is_empty() && !int.is_empty() && per_host.len() >= 2).then(|| {
        format!(
            "{} {} a net plugin; {} {} NCCL's internal one",
            some_hosts(&ext),
            if ext.len() == 1 { "loads" } else { "load" },
            some_hosts(&int),
            if int.len() == 1 { "uses" } else { "use" }
        )
    })
}

/// The variable a network plugin put in the environment itself: aws-ofi-nccl's `NET/OFI Adding
/// NCCL_PROTO=simple to environment` (v1.7+) and `NET/OFI Setting NCCL_PROTO to "simple"`.
fn plugin_env_name(l: &str) -> Option<&str> {
    let (_, r) = l.split_once("NET/OFI ")?;
    let r =
        r.strip_prefix("Adding ").filter(|r| r.ends_with(" to environment")).or_else(|| r.strip_prefix("Setting "))?;
    let name = r.split(['=', ' ']).next()?;
    (name.starts_with("NCCL_") && name.len() > 5).then_some(name)
}

pub fn analyse(text: &str) -> LogFacts {
    let mut a = Analyser::new();
    for l in text.lines() {
        a.line(l);
    }
    a.finish()
}

#[cfg(test)]
mod tests {

    #[test]
    fn nccl_own_prefix_read_in_one_pass_is_what_the_searches_find() {
        // The one-pass reading of `host:pid:tid [dev] ` against the searches it stands in for:
        // the tag's message, the ` [`, the host and its `host:pid`, on prefixes that are NCCL's
        // and on ones that only look like it.
        fn general_tag(l: &str) -> Option<(bool, &str)> {
            let b = l.as_bytes();
            memchr::memchr_iter(b'N', b).find_map(move |at| {
                let rest = &b[at..];
                (rest.starts_with(b"NCCL ")
                    && (at == 0 || b[at - 1] == b' ')
                    && (rest[5..].starts_with(b"INFO") || rest[5..].starts_with(b"WARN")))
                .then(|| (rest[5..].starts_with(b"WARN"), l[at + 9..].trim_start()))
            })
        }
        let mut fast = 0;
        for l in [
            "gpu-000:207008:207008 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
            "h:1:2 [0] NCCL WARN Call to ibv_modify_qp failed",
            "NODE1:1:2 [12] NCCL INFOx",
            "a[1]:1:2 [0] NCCL INFO x",
            "h:1:2 [0]  NCCL INFO x",
            "h:1:2 [x] NCCL INFO x",
            "h:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN x",
            "h:1: [0] NCCL INFO x",
            "h::2 [0] NCCL INFO x",
            ":1:2 [0] NCCL INFO x",
            "a b:1:2 [0] NCCL INFO x",
            "a:b:1:2 [0] NCCL INFO x",
            "h:1:2 [0] NCCL",
            "h:1:2 [0]",
            "h:1:2 [",
            "h:99999999999999999999999:2 [99999999999999999999999] NCCL INFO x",
        ] {
            let head = nccl_head(l);
            fast += usize::from(head.is_some());
            assert_eq!(nccl_tag(l), general_tag(l).or_else(|| old_tag(l)).or_else(|| ofi_test_tag(l)), "{l}");
            if let Some(h) = head {
                assert_eq!(Some(h.bracket), space_bracket(l), "{l}");
                assert_eq!(Some(&l[..h.host]), host_head(&l[..h.bracket]), "{l}");
                assert_eq!(Some(&l[..h.pid]), proc_of(l), "{l}");
            }
        }
        assert_eq!(fast, 8);
        // a channel's ` via ` found by its 'v' as by a substring search
        for m in [
            "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
            "Channel 00/0 : vm0[0] -> v1[1] [receive] via NET/IB/0/GDRDMA",
            "Ring 00 : 0 -> 1 -> 2 vvia via",
            "Tree 0 : no way",
            "via x",
            " via",
            "a  via b via c",
        ] {
            assert_eq!(via(m), find!(m, " via "), "{m}");
        }
    }

    #[test]
    fn review_16_what_the_speed_work_must_still_read() {
        // A library's words run onto an NCCL line before its tag: the gate read the message
        // only, so these readers look at the text before the tag too.
        let f = analyse("Failed to open libibverbs.so.1 NCCL INFO NET/IB : No device found.\n");
        assert!(f.ibverbs_missing);
        let f = analyse(
            "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34': cannot open NCCL INFO NET/IB : No device found.\n",
        );
        assert_eq!(f.provider_missing, ["libmlx5-rdmav34"]);
        // (and where the message holds none of the gate's words: the gate reads the whole line)
        assert!(analyse("Failed to open libibverbs.so.1 NCCL INFO cudaDriverVersion 12040\n").ibverbs_missing);
        // 2.2x's rank count after a channel's transport, whatever follows it
        let f = analyse("a:1:1 [0] NCCL INFO Channel 00/1 : 0[0] -> 1[1] via P2P/CUMEM/read comm 0x55d0 nRanks 16.\n");
        assert_eq!(f.nranks, Some(16));
        // A host's second process is recorded as it comes, not only where the host changes:
        // `stonstone` (`ston` run onto `stone:2984738:…`) is that process's glued head, no host.
        // (a04b29f skipped recording a process whose host was the last view's: two hosts here.)
        let f = analyse(concat!(
            "stone:111:111 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n",
            "stone:111:111 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n",
            "stone:2984738:2984738 [1] NCCL INFO cudaDriverVersion 12040\n",
            "stonstone:2984738:2984738 [1] NCCL INFO cudaDriverVersion 12040\n",
        ));
        assert_eq!(f.hosts, ["stone"]);
    }

    #[test]
    fn a_short_path_survives_the_trip_between_threads() {
        let all = [
            None,
            Some(Short::Trace),
            Some(Short::Nothing),
            Some(Short::Connected),
            Some(Short::Comm),
            Some(Short::Nvls),
            Some(Short::Channel(0)),
            Some(Short::Channel(65535)),
            Some(Short::Ring(1)),
            Some(Short::Ring((1 << 30) - 1)),
        ];
        for s in all {
            let code = Short::to_code(s.as_ref());
            assert_ne!(code, 0);
            assert_eq!(Short::from_code(code), Some(s));
        }
        // a number too large for the word: not worked out, the analyser works it out itself
        assert_eq!(Short::to_code(Some(&Short::Channel(1 << 30))), 0);
        assert!(Short::from_code(0).is_none());
        // through the bytes of a batch, with a line's tag and mask
        let l = "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC";
        let p = pre(l);
        assert_eq!(Pre::from_bytes(&p.to_bytes()), p);
        let msg = &l[20..];
        assert!(msg.starts_with("Channel "));
        assert_eq!(Short::from_code(p.short), Some(Some(Short::Channel(msg.find(" via ").unwrap()))));
    }

    #[test]
    fn the_gate_reads_a_line_in_halves_as_it_reads_it_whole() {
        // every literal placed across the middle of long lines, and the corpus's own lines
        let pad = "x".repeat(200);
        for (i, lit) in GATE.iter().enumerate() {
            for len in [96usize, 97, 120, 255] {
                for at in (len / 2).saturating_sub(lit.len() + 1)..=(len / 2 + 1) {
                    let mut l = pad[..at.min(len)].to_string();
                    l.push_str(lit);
                    l.push_str(&pad[..len.saturating_sub(l.len())]);
                    assert_eq!(gate_mask(&l), gate_mask_serial(l.as_bytes()), "{lit:?} at {at} in {len}");
                    assert_ne!(gate_mask(&l) & (1 << i), 0, "{lit:?} at {at} in {len}");
                }
            }
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify-corpus");
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let t = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
            for l in t.lines() {
                assert_eq!(gate_mask(l), gate_mask_serial(l.as_bytes()), "{l}");
                // and the table against the literals themselves
                let naive = GATE.iter().enumerate().filter(|(_, g)| l.contains(*g)).fold(0u64, |m, (i, _)| m | 1 << i);
                assert_eq!(gate_mask(l), naive, "{l}");
            }
        }
    }

    #[test]
    fn two_lines_side_by_side_get_what_each_gets_alone() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify-corpus");
        let mut lines: Vec<String> = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let t = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
            lines.extend(t.lines().map(String::from));
        }
        // every literal at either end of lines of many lengths, paired with lines of others
        let pad = "y".repeat(300);
        for lit in GATE {
            for len in [0usize, 5, 30, 95, 96, 130, 290] {
                lines.push(format!("{lit}{}", &pad[..len]));
                lines.push(format!("{}{lit}", &pad[..len]));
            }
        }
        assert!(lines.len() > 10_000, "{}", lines.len());
        for w in lines.windows(2).step_by(1) {
            let (a, b) = pre2(&w[0], &w[1]);
            assert_eq!(
                (a.to_bytes(), b.to_bytes()),
                (pre(&w[0]).to_bytes(), pre(&w[1]).to_bytes()),
                "{:?} / {:?}",
                w[0],
                w[1]
            );
        }
    }

    /// `cargo test --release -- --ignored gate_speed --nocapture`: the gate alone on a log.
    #[test]
    #[ignore = "a measurement: run by hand with IBWIRE_GATE_LOG=FILE"]
    fn gate_speed() {
        let Some(p) = std::env::var_os("IBWIRE_GATE_LOG") else { return };
        let t = std::fs::read_to_string(p).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        for _ in 0..3 {
            let a = std::time::Instant::now();
            let x = lines.iter().fold(0u64, |m, l| m ^ gate_mask(l));
            let b = std::time::Instant::now();
            let y = lines.iter().fold(0u64, |m, l| m ^ gate_mask_serial(l.as_bytes()));
            let c = std::time::Instant::now();
            let z = lines.chunks(2).fold(0u64, |m, p| match p {
                [a, b] => {
                    let (x, y) = gate_mask2(a.as_bytes(), b.as_bytes());
                    m ^ x ^ y
                }
                [a] => m ^ gate_mask(a),
                _ => m,
            });
            let d = std::time::Instant::now();
            assert_eq!((x, y), (y, z));
            eprintln!("halves {:?}  serial {:?}  pairs {:?}", b - a, c - b, d - c);
        }
    }
    use super::*;

    /// The NVIDIA driver's Xid line in its formats (kernel log, syslog's prefix, older drivers
    /// without `PCI:`), from the driver's own messages as NVIDIA's Xid catalog and dmesg show them;
    /// prose that names an Xid is none.
    #[test]
    fn a_gpu_xid_line_is_read_with_its_code() {
        for (l, n) in [
            ("NVRM: Xid (PCI:0000:18:00): 31, pid=1847919, name=sendrecv_perf, channel 0x0000000a, intr 00000000.", 31),
            ("May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.", 79),
            ("[ 966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120, intr 10000000", 31),
            ("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.", 63),
        ] {
            assert_eq!(gpu_xid(l), Some(n), "{l}");
            let f = analyse(&format!("{l}\n"));
            assert_eq!((f.failures[0].kind, f.failures[0].code), (Failure::GpuXid, Some(n)), "{l}");
        }
        for l in [
            "see NVRM: Xid (the catalog): 31, for more",
            "NVRM: Xid (PCI:0000:18:00): many",
            "an Xid (PCI:0000:18:00): 31 without NVRM",
        ] {
            assert_eq!(gpu_xid(l), None, "{l}");
        }
    }

    /// nccl-tests' TESTCHECK trace (src/common.h: ` .. %s pid %d: Test failure %s:%d`) and Open
    /// MPI's help text (`%s detected that one or more processes exited with non-zero status, thus
    /// causing`): a process of the job failed.
    #[test]
    fn nccl_tests_trace_and_mpi_report_are_a_worker_failure() {
        for l in [
            " .. node-a pid 1871349: Test failure common.cu:1454",
            ".. node-b pid 2073154: Test failure common.cu:1454",
            "[1,0]<stdout>: .. gpu-7 pid 12: Test failure all_reduce.cu:90",
            "mpirun detected that one or more processes exited with non-zero status, thus causing",
            "prterun detected that one or more processes exited with non-zero status, thus causing the job to be terminated. The first process to do so was:",
        ] {
            assert!(test_or_mpi_failure(l), "{l}");
            assert_eq!(analyse(&format!("{l}\n")).failures[0].kind, Failure::WorkerExit, "{l}");
        }
        for l in [
            "a Test failure common.cu:1454",
            " .. node pid x: Test failure common.cu:1",
            " .. node pid 1: Test failure common.cu",
        ] {
            assert!(!test_or_mpi_failure(l), "{l}");
        }
    }

    /// Review 29's rows, each a test: Open MPI's report of a rank a signal ended (any fatal
    /// signal, not only 11; not SIGTERM), the launchers' words only where a launcher printed
    /// them (not in a quoted command or code), Xids that ask nothing of a job or sit in a log
    /// with no failure as notes, and a warning's bare text not read beside an nccl-tests table,
    /// in source code or documents, for generic or advisory formats.
    #[test]
    fn review_29_rows() {
        let ok = "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 1000 - Init COMPLETE\n";
        let sig = |n: &str| {
            format!("{ok}mpirun noticed that process rank 1 with PID 12346 on node node01 exited on signal {n}.\n")
        };
        for (n, want) in
            [("6 (Aborted)", Some(6)), ("9 (Killed)", Some(9)), ("7 (Bus error)", Some(7)), ("15 (Terminated)", None)]
        {
            let f = analyse(&sig(n));
            assert_eq!(f.failures.iter().find(|x| x.kind == Failure::Crash).and_then(|x| x.code), want, "{n}");
        }
        assert_eq!(
            mpi_signal(
                "echo \"mpirun noticed that process rank 1 with PID 1 on node n exited on signal 6 (Aborted).\""
            ),
            None
        );
        for l in [
            "+ grep -q 'mpirun detected that one or more processes exited with non-zero status, thus causing' nccl.out",
            "    assert \"mpirun detected that one or more processes exited with non-zero status\" not in out",
            "echo \" .. node01 pid 11111: Test failure common.cu:1151\"",
        ] {
            assert!(!test_or_mpi_failure(l), "{l}");
        }
        // Open MPI's box alone is any MPI program's: no NCCL line
        assert_eq!(
            analyse("mpirun detected that one or more processes exited with non-zero status, thus causing\n")
                .nccl_lines,
            0
        );
        let xid = |c: &str| format!("NVRM: Xid (PCI:0000:18:00): {c}, pid=1896, name=all_reduce_perf\n");
        for (log, note) in [
            (format!("{ok}{}", xid("63")), true),
            (format!("{ok}{}", xid("92")), true),
            // (review 30: a hardware Xid is a cause whatever else the log shows)
            (format!("{ok}{}", xid("79")), false),
            (format!("{}h:1:1 [0] enqueue.cc:1 NCCL WARN Cuda failure 'unspecified launch failure'\n", xid("79")), false),
            (format!("{}h:1:1 [0] enqueue.cc:1 NCCL WARN Cuda failure 'unspecified launch failure'\n", xid("45")), true),
            (format!("{ok}NVRM: Xid (PCI:0000:18:00): 154, GPU recovery action changed from 0x0 (None) to 0x0 (None)\nh:1:1 [0] misc/socket.cc:1 NCCL WARN socketProgress: Connection closed by remote peer\n"), true),
        ] {
            let f = analyse(&log);
            let x = f.failures.iter().find(|x| x.kind == Failure::GpuXid).unwrap();
            assert_eq!(x.init_completed_after, note, "{log}");
        }
        let p2p = "P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.";
        for log in [
            format!("{p2p}\n# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"),
            format!("def check():\n    \"\"\"\n    {p2p}\n    \"\"\"\n"),
            format!("echo \"{p2p}\"\n"),
            format!("```\n{p2p}\n```\n"),
            "job started\nGetProcessAffinityMask failed with error: 5\njob finished successfully\n".into(),
            "job started\nNCCL_WORK_FIFO_BYTES=12345 is being ignored because it is not a power of 2.\njob finished successfully\n".into(),
        ] {
            assert!(analyse(&log).failures.is_empty(), "{log}");
        }
    }

    /// Review 30's rows: Open MPI's lines behind a log's prefix (a CI runner's time, kubectl's,
    /// pdsh's), the weightiest of several Xids, an NCCL error as the job's failure for a
    /// program's Xid, and nccl-tests' header behind a prefix keeping the bare lookup off.
    #[test]
    fn review_30_rows() {
        let ok = "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 1000 - Init COMPLETE\n";
        for p in [
            "2026-12-07T10:00:00.1234567Z ",
            "node01: ",
            "pod-7 | ",
            "[1,0]<stderr>:",
            "",
            "/usr/local/mpi/bin/",
            "-------",
        ] {
            let l = format!(
                "{p}mpirun noticed that process rank 1 with PID 12346 on node node01 exited on signal 6 (Aborted)."
            );
            assert_eq!(mpi_signal(&l), Some(6), "{l}");
            let l = format!("{p}prterun detected that one or more processes exited with non-zero status, thus causing");
            assert!(test_or_mpi_failure(&l), "{l}");
            let f = analyse(&format!("{ok}{l}\n"));
            assert_eq!(f.failures[0].kind, Failure::WorkerExit, "{l}");
        }
        assert_eq!(
            mpi_signal(
                "x = f(\"mpirun noticed that process rank 1 with PID 1 on node n exited on signal 6 (Aborted).\")"
            ),
            None
        );
        let xid = |c: &str| format!("NVRM: Xid (PCI:0000:18:00): {c}, pid=1896, name=all_reduce_perf\n");
        let f = analyse(&format!("{}{}{ok}", xid("45"), xid("79")));
        let x = f.failures.iter().find(|x| x.kind == Failure::GpuXid).unwrap();
        assert_eq!((x.code, x.init_completed_after, x.count), (Some(79), false, 2));
        let f = analyse(&format!("{}{}", xid("13"), xid("48")));
        assert_eq!(f.failures[0].code, Some(48));
        let f = analyse(&format!("{}torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n", xid("31")));
        assert!(!f.failures.iter().find(|x| x.kind == Failure::GpuXid).unwrap().init_completed_after);
        let p2p = "P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.";
        let f = analyse(&format!("{p2p}\npod-7 | # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"));
        assert!(f.failures.is_empty(), "{f:?}");
    }

    /// NCCL's WARN texts pasted without its prefix, in a log with no NCCL line (set 134's
    /// nccl#2329): each format of 40 characters of its own text or more, instanced from the
    /// table of NCCL's sources, is read as its warning; a line of another program is not, nor
    /// are such lines in a log that has NCCL's own.
    #[test]
    fn a_warning_pasted_without_its_prefix_is_read_where_no_line_is_nccls() {
        let l = "P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.";
        let f = analyse(&format!("{l}\n"));
        assert_eq!(f.failures.len(), 1, "{f:?}");
        assert_eq!(f.failures[0].class.as_deref(), Some("p2p-disabled-nvlink"));
        // behind a relay's prefix
        let f = analyse(&format!("[rank3]: {l}\n"));
        assert_eq!(f.failures[0].class.as_deref(), Some("p2p-disabled-nvlink"));
        // every long-enough, classified NCCL format of the table, instanced, is found whole
        let mut n = 0;
        for r in crate::nccl::warns::rows()
            .iter()
            .filter(|r| r.source == "nccl" && !matches!(r.class, "harmless" | "unclassified"))
        {
            let first = r.format.split("\\n").next().unwrap();
            let m = crate::nccl::warns::instance(first);
            if m.len() > 1000 || crate::nccl::warns::lookup_bare(&m).is_none() {
                continue;
            }
            assert_eq!(crate::nccl::warns::lookup_bare(&m), Some(0), "{m}");
            n += 1;
        }
        assert!(n >= 50, "{n}");
        // a sentence of another program is none; nor a line beside NCCL's own
        assert_eq!(
            crate::nccl::warns::lookup_bare("The quick brown fox jumps over the lazy dog and keeps on running away"),
            None
        );
        let f = analyse(&format!("h:1:2 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n{l}\n"));
        assert!(f.failures.is_empty(), "{f:?}");
    }

    fn kinds(t: &str) -> Vec<Failure> {
        analyse(t).failures.iter().map(|f| f.kind).collect()
    }

    #[test]
    fn modify_qp_in_every_wording() {
        // ≥2.24 (misc/ibvwrap.cc), ≤2.23, and the plugins' strerror-only form.
        let t = "h:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR\n\
                 h:1:2 [0] misc/ibvwrap.cc:206 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110\n\
                 h:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable\n\
                 h:1:2 [0] ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error No such device\n";
        let f = analyse(t);
        assert_eq!(f.modify_qp_errnos, vec![19, 22, 101, 110]);
        assert_eq!(kinds(t), vec![Failure::QpInvalid, Failure::QpUnreachable, Failure::QpTimeout, Failure::QpNoDevice]);
    }

    #[test]
    fn completion_errors_in_every_wording() {
        for (l, k, code, vendor) in [
            ("NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129", Failure::RetryExceeded, 12, 129),
            ("NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)", Failure::LocalProtection, 4, 81),
            ("NET/IB : Got completion from peer x<55921> with status=12 opcode=1 len=0 vendor err 129 (Send) localGid ::ffff:1.2.3.4", Failure::RetryExceeded, 12, 129),
            ("NET/IB: Got completion from peer 1.2.3.4<5> with status=IBV_WC_LOC_PROT_ERR(4) opcode=IBV_WC_RDMA_WRITE(1) vendor_err=81  hca mlx5_0", Failure::LocalProtection, 4, 81),
            ("NET/IB : Got completion from peer 1.2.3.4<5> with error 5, opcode 0, len 0, vendor err 249 (Recv)", Failure::CompletionError, 5, 249),
        ] {
            let f = analyse(&format!("h:1:2 [0] transport/net_ib.cc:1 NCCL WARN {l}\n"));
            assert_eq!(f.failures[0].kind, k, "{l}");
            assert_eq!((f.failures[0].code, f.failures[0].vendor_err), (Some(code), Some(vendor)), "{l}");
        }
    }

    #[test]
    fn relayed_and_prefixless_failures_are_read() {
        let t = "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3135, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.28.9\n\
                 [rank0]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n\
                 [rank0]: Last error:\n\
                 [rank0]: Bootstrap : no socket interface found\n";
        assert_eq!(kinds(t), vec![Failure::NoSocketInterface]);
        let t = "RuntimeError: ... Last NCCL warning(error): 'Bootstrap : no socket interface found'";
        assert_eq!(kinds(t), vec![Failure::NoSocketInterface]);
        let f =
            analyse("9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA\n9[1a000] -> 2[6b000] [receive] via NET/IB/1\n");
        assert!(f.nccl_lines > 0);
        assert!(f.gdr_partial());
        assert_eq!(f.channels.net_ib, 2);
    }

    #[test]
    fn a_named_plugin_that_is_missing() {
        let f = analyse("h:1:1 [0] NCCL INFO NCCL_NET_PLUGIN set by environment to x\nh:1:1 [0] NCCL INFO NET/Plugin: Could not find: x libnccl-net-x.so\n");
        assert!(f.plugin_missing);
        assert!(!analyse("h:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so\n").plugin_missing);
    }

    #[test]
    fn nccls_ring_gdr_flag_is_read_after_rdma_channels() {
        // transport/generic.cc (2.24+): "Connected all rings, use ring PXN %d GDR %d"
        let ch = "h:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n";
        let one = "h:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n";
        let zero = "h:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0\n";
        assert_eq!(analyse(&format!("{ch}{one}")).ring_gdr, Some(true));
        // before any network channel (a one-node communicator: nothing clears the flag) it
        // says nothing
        assert_eq!(analyse(&format!("{one}{ch}")).ring_gdr, None);
        assert_eq!(analyse(&format!("{ch}{one}{zero}")).ring_gdr, Some(false));
        assert_eq!(analyse(&format!("{ch}h:1:2 [0] NCCL INFO Connected all rings\n")).ring_gdr, None);
    }

    #[test]
    fn the_watchdogs_failure_line_alone_is_no_timeout_beside_nccls_error() {
        // ProcessGroupNCCL.cpp: "%s failure detected by watchdog at work sequence id: %d PG
        // status: …" follows any work's exception, NCCL's async error as well as a timeout
        // (device set 13: rank 0 left, rank 1's socket saw the close)
        let close = "h:2:9 [0] misc/socket.cc:72 NCCL WARN socketProgress: Connection closed by remote peer\n";
        let relay = "[rank1]:[E1206 20:04:59.286408767 ProcessGroupNCCL.cpp:2303] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 2 PG status: last enqueued work: 4, last completed work: 1\n";
        let f = analyse(&format!("{close}{relay}"));
        assert!(f.failed(Failure::RemoteExit).is_some());
        assert!(f.failed(Failure::CollectiveTimeout).is_none(), "{:?}", f.failures);
        // alone it stays: the watchdog found a failure, and nothing else says which
        assert!(analyse(relay).failed(Failure::CollectiveTimeout).is_some());
        // a line that says a collective timed out keeps the timeout beside the close
        let timeout = "[rank1]:[E1206 20:04:59.2 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=25000) ran for 25001 milliseconds before timing out.\n";
        assert!(analyse(&format!("{close}{timeout}{relay}")).failed(Failure::CollectiveTimeout).is_some());
        // so does any other timeout rule's line (review 13: `ran for … before timing out` alone)
        let ran_for = "[rank0]:[E1206 20:04:59.2 ProcessGroupNCCL.cpp:632] [Rank 0] Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.\n";
        assert!(analyse(&format!("{ran_for}{close}")).failed(Failure::CollectiveTimeout).is_some());
    }

    #[test]
    fn libibverbs_at_info_counts() {
        let f = analyse("h:1:2 [4] NCCL INFO Failed to open libibverbs.so[.1]\nh:1:2 [4] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n");
        assert!(f.ibverbs_missing);
    }

    #[test]
    fn node_count_evidence() {
        let f = analyse("vm:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n");
        assert_eq!((f.nnodes, f.local_ranks, f.nranks, f.mnnvl), (Some(2), Some(1), Some(2), Some(false)));
        // init.cc's "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d":
        // any communicator on multi-node NVLink makes it true; before 2.24 no MNNVL field
        let f = analyse("a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 1\na:1:1 [0] NCCL INFO comm 0x2 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n");
        assert_eq!(f.mnnvl, Some(true));
        assert_eq!(
            analyse("a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0\n").mnnvl,
            None
        );
        let f = analyse("h:1:2 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1047 mtu 5 GID 0 (80FE/1)\n");
        assert!(f.remote_peer);
    }

    #[test]
    fn empty_using_list_on_a_real_h200() {
        let f = analyse(include_str!("../../tests/fixtures/h200-1gpu/nccl-allreduce-1gpu.log"));
        assert!(f.ib_no_device);
        assert!(f.ib_devices.is_empty());
        assert_eq!(f.oob_if.as_deref(), Some("eth0"));
        assert_eq!(f.network.as_deref(), Some("Socket"));
        assert_eq!(f.version.as_deref(), Some("2.28.9+cuda13.0"));
        assert_eq!(f.bootstrap_ifs, vec!["eth0"]);
    }

    #[test]
    fn truncated_and_garbage_lines_are_harmless() {
        let f = analyse("h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/I\n\u{0}\u{1}garbage\nh:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] via");
        assert_eq!(f.ib_devices.len(), 1);
        assert_eq!(f.channels, Channels::default());
    }

    #[test]
    fn control_bytes_inside_a_device_name_are_removed_not_kept() {
        // fuzz/nccl_log found this shape (CI, 2026-12-01): NUL/SOH/DEL inside `[1]ird..1/RoCE`.
        let f = analyse("h:1:2 [0] NCCL INFO NET/IB : Using [0]irdma0:1/RoCE [1]ird\u{1}\u{0}\u{0}\u{7f}ma3:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n");
        let names: Vec<_> = f.ib_devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["irdma0", "irdma3"]);
        assert!(f.ib_devices.iter().all(|d| !d.name.chars().any(char::is_control)));
    }

    #[test]
    fn thin_input_is_read() {
        // NCCL's warning without its tag, the banner alone (NCCL_DEBUG=WARN), libibverbs without a
        // provider, nccl-tests' failure line.
        let f = analyse("WARN NET/IB: read failed in ncclIbRoceGetVersionNum: Invalid argument\n");
        assert_eq!((f.nccl_lines, f.failures[0].kind), (1, Failure::RoceGid));
        let f = analyse("NCCL version 2.28.9+cuda13.0\n");
        assert_eq!((f.nccl_lines, f.version.as_deref()), (1, Some("2.28.9+cuda13.0")));
        assert!(analyse("the NCCL version of this image is unknown\n").nccl_lines == 0);
        let f = analyse("libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0\nip-0A: Test NCCL failure common.cu:775 'internal error'\n");
        assert_eq!(f.provider_missing, ["uverbs0"]);
        assert_eq!(f.failures[0].kind, Failure::NcclError);
        let f =
            analyse("include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol\n");
        assert_eq!(f.failures[0].kind, Failure::NoSocketInterface);
    }

    #[test]
    fn plugin_and_fabric_failures() {
        for (l, k) in [
            ("NET/IB : Got async event : port error", Failure::PortError),
            ("NET/OFI Unable to insert remote address into address vector for device 0. RC: -22", Failure::OfiPeer),
            ("NET/OFI OFI fi_getinfo() call failed: No data available", Failure::OfiNoDevice),
            // libfabric prov/efa's abort: "Libfabric error: (%zd) %s" / "EFA internal error: (%zd) %s"
            ("Libfabric error: (-12) Cannot allocate memory", Failure::OfiNoMemory),
            ("EFA internal error: (4112) Failure to post internal receive buffers", Failure::OfiAbort),
            ("Libfabric EFA provider has encountered an internal error:", Failure::OfiAbort),
            ("NET/IB : SHARP coll init error: Cannot create SHARP job(-11)", Failure::CollNet),
            ("Cannot initialize CollNet, using point-to-point network instead", Failure::CollNet),
        ] {
            let f = analyse(&format!("h:1:2 [0] x.c:1 NCCL WARN {l}\n"));
            assert_eq!(f.failures[0].kind, k, "{l}");
        }
        let f = analyse("[C25L18:0:24972 - comm.c:374] ERROR Failed to lock SAT tree(ID:0x40 ret:0x4)\n");
        assert_eq!(f.failures[0].kind, Failure::CollNet);
        // libfabric's EFA provider, prov/efa's readers of FI_EFA_USE_DEVICE_RDMA (1.10–1.17
        // rxr_env: "…was set by users, but…"; 1.18+ efa_env/efa_rdm: "…was set by user, but…"),
        // each `fprintf(stderr, "%s\n")` then abort(): on stderr, without any prefix
        for l in [
            "FI_EFA_USE_DEVICE_RDMA=1 was set by users, but EFA device has no rdma-read capability.",
            "FI_EFA_USE_DEVICE_RDMA=1 was set by user, but EFA device has no rdma-read capability.",
            "FI_EFA_USE_DEVICE_RDMA was set to an invalid value by the user. FI_EFA_USE_DEVICE_RDMA is boolean and can be set to only 0/false/no/off or 1/true/yes/on.",
        ] {
            let f = analyse(&format!("{l}\n"));
            assert_eq!((f.nccl_lines, f.failures[0].kind), (1, Failure::EfaDeviceRdma), "{l}");
        }
        // the variable named by aws-ofi-nccl's own settings is no failure
        assert!(analyse("h:1:2 [0] NCCL INFO NET/OFI Setting FI_EFA_USE_DEVICE_RDMA to 1\n").failures.is_empty());
    }

    #[test]
    fn return_code_traces_that_reach_set_up_are_failures() {
        let f = analyse("h:1:2 [2] NCCL INFO misc/socket.cc:567 -> 2\nh:1:2 [2] NCCL INFO bootstrap.cc:270 -> 2\nh:1:2 [2] NCCL INFO init.cc:670 -> 2\n");
        assert_eq!(f.failures[0].kind, Failure::SocketConnect);
        assert_eq!(f.failures[0].line, "bootstrap.cc:270 -> 2");
        let f = analyse("h:1:2 [0] NCCL INFO transport.cc:291 -> 2\n");
        assert_eq!(f.failures[0].kind, Failure::NcclError);
        // a plugin's property query failing for one device, then the next: not a failure
        assert!(analyse(
            "h:1:2 [1] NCCL INFO NET/OFI No NIC info for dev 0\nh:1:2 [1] NCCL INFO include/net.h:24 -> 2\n"
        )
        .failures
        .is_empty());
        assert!(analyse("h:1:2 [1] NCCL INFO init.cc:670 -> 0\n").failures.is_empty());
    }

    /// init.cc (2.18–2.29): `%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId
    /// 0x%llx - Init START`. Two ranks of one communicator on one machine's one GPU end in NCCL's
    /// `Duplicate GPU detected` (ncclInvalidUsage), which an excerpt may have cut (held-out set
    /// 77: accelerate#2246, the launcher run twice on a node). One machine only where both
    /// processes bootstrapped on one address; never where the log shows the check passed or
    /// cannot apply (review 19).
    #[test]
    fn two_ranks_starting_on_one_gpu_are_a_duplicate_gpu() {
        let start = |h: &str, pid: u32, r: u32, bus: &str, comm: &str| {
            format!("{h}:{pid}:{pid} [0] NCCL INFO ncclCommInitRank comm 0x5{pid} rank {r} nranks 4 cudaDev 0 nvmlDev 0 busId {bus} commId 0x{comm} - Init START\n")
        };
        let oob = |h: &str, pid: u32, ip: &str| {
            format!(
                "{h}:{pid}:{pid} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE [RO]; OOB ib0:{ip}<0>\n"
            )
        };
        let boot =
            |h: &str, pid: u32, ip: &str| format!("{h}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:{ip}<0>\n");
        let starts = format!(
            "{}{}",
            start("n1", 10, 0, "31000", "26b3ece72ee71028"),
            start("n1", 11, 2, "31000", "26b3ece72ee71028")
        );
        let two = format!("{}{}{starts}", oob("n1", 10, "172.41.212.8"), oob("n1", 11, "172.41.212.8"));
        let f = analyse(&two);
        assert_eq!(f.failures.len(), 1, "{:?}", f.failures);
        assert_eq!(f.failures[0].kind, Failure::DuplicateGpu);
        assert!(f.failures[0].line.starts_with("ranks 0 and 2 of one communicator (commId 0x26b3ece72ee71028) started on n1's GPU busId 31000 from one address (172.41.212.8)"), "{}", f.failures[0].line);
        // the same by the bootstrap's address
        let by_boot = format!("{}{}{starts}", boot("n1", 10, "10.0.0.1"), boot("n1", 11, "10.0.0.1"));
        assert_eq!(analyse(&by_boot).failures.len(), 1);
        let after = |l: &str| format!("{two}{l}");
        for quiet in [
            // no address, or two: a host name is not a machine (`localhost`, `ubuntu`, `10`)
            starts.clone(),
            format!("{}{}{starts}", boot("n1", 10, "10.0.0.1"), boot("n1", 11, "10.0.0.2")),
            // one address every machine may have (review 20): loopback, docker's default bridge
            format!("{}{}{starts}", boot("n1", 10, "127.0.0.1"), boot("n1", 11, "127.0.0.1")),
            format!("{}{}{starts}", boot("n1", 10, "172.17.0.2"), boot("n1", 11, "172.17.0.2")),
            // NCCL went past its check: the communicator completed, its shape, a channel, a ring
            after("n1:10:10 [0] NCCL INFO comm 0x510 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 31000 commId 0x26b3ece72ee71028 localSize 1 used 1 bytes - Init COMPLETE\n"),
            after("n1:10:10 [0] NCCL INFO comm 0x510 rank 0 nRanks 4 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"),
            after("n1:10:10 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"),
            // one machine as several hosts; NCCL 2.30 (by UUID; several ranks a GPU allowed)
            format!("n1:10:10 [0] NCCL INFO NCCL_HOSTID set by environment to a\n{two}"),
            format!("n1:10:10 [0] NCCL INFO NCCL_MULTI_RANK_GPU_ENABLE set by environment to 1.\n{two}"),
            format!("NCCL version 2.30.7+cuda13.0\n{two}"),
            // two CUDA devices of one busId: partitions of one GPU (MIG, MLOPart; review 20)
            two.replacen("cudaDev 0 nvmlDev 0 busId 31000 commId 0x26b3ece72ee71028 - Init START\n", "cudaDev 1 nvmlDev 0 busId 31000 commId 0x26b3ece72ee71028 - Init START\n", 1),
            // other GPUs, hosts or communicators; one rank's line twice
            format!("{}{}", start("n1", 10, 0, "31000", "7"), start("n1", 11, 2, "4b000", "7")),
            format!("{}{}", start("n1", 10, 0, "31000", "7"), start("n2", 11, 2, "31000", "7")),
            format!("{}{}", start("n1", 10, 0, "31000", "7"), start("n1", 11, 2, "31000", "8")),
            format!("{}{}", start("n1", 10, 0, "31000", "7"), start("n1", 10, 0, "31000", "7")),
        ] {
            assert!(analyse(&quiet).failures.is_empty(), "{quiet}");
        }
        // NCCL's own warning is the evidence where the log has it
        let f = analyse(&format!("{two}n1:11:11 [0] init.cc:737 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 31000\n"));
        assert_eq!(
            (f.failures.len(), f.failures[0].line.as_str()),
            (1, "Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 31000")
        );
    }

    /// graph/xml.cc (2.18–2.26: WARN; 2.27+: INFO): `Could not open XML topology file %s : %s`
    /// and `Unable to open %s, not dumping topology.` both `return ncclSuccess`: NCCL goes on
    /// without the file (it detects the topology itself), at every communicator's start. A fact
    /// the verdict notes, never a failure (held-out set 103: a healthy 6-node run with
    /// NCCL_TOPO_FILE set empty was NOT OK; review 25: a second communicator's copy after the
    /// first init, and a hang after it, were blamed on it); the graph file's open failure
    /// returns an error.
    #[test]
    fn a_topology_file_nccl_could_not_open_is_skipped_not_a_failure() {
        let done = "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 commId 0x7 - Init COMPLETE\n";
        for w in [
            "h:1:2 [0] graph/xml.cc:375 NCCL WARN Could not open XML topology file  : No such file or directory\n",
            "h:1:2 [0] graph/xml.cc:285 NCCL WARN Unable to open /x/topo.xml, not dumping topology.\n",
        ] {
            for t in [format!("{w}{done}"), format!("{done}{w}{done}"), w.to_string()] {
                let f = analyse(&t);
                assert!(f.failures.is_empty(), "{t}: {:?}", f.failures);
                assert!(f.topo_file_skipped.as_deref().is_some_and(|x| x.contains("open")), "{t}");
            }
        }
        let g = "h:1:2 [0] graph/xml.cc:1041 NCCL WARN Could not open XML graph file /x/g.xml : No such file or directory\n";
        assert!(analyse(&format!("{g}{done}")).failed(Failure::TopologyFile).is_some());
    }

    /// A warning cut short never takes a class this file refines by the message's words: the
    /// words may be what was cut (review 20).
    #[test]
    fn refined_classes_are_never_taken_from_a_cut_warning() {
        use super::super::warns::{lookup_cut, rows};
        let mut seen = 0;
        // the classes whose words decide: REFINED's, an async event's, a provider search's
        let refined = |c: &str| REFINED.iter().any(|r| r.0 == c) || c == "ib-async-event" || c == "ofi-no-device";
        for r in rows().iter().filter(|r| refined(r.class)) {
            // a cut of the format's leading words that begins this class's formats only
            let Some(lead) = r.format.split('%').next().filter(|p| p.len() > 20) else { continue };
            let cut = lead[..lead.len() - 3].trim_end();
            if !cut.is_char_boundary(cut.len()) || lookup_cut(cut).map(|x| x.class) != Some(r.class) {
                continue;
            }
            seen += 1;
            // (an exact format of another class may still read it: `Call to %s failed`)
            let f = analyse(&format!("h:1:2 [0] x.c:1 NCCL WARN {cut}\n"));
            assert!(
                f.failures.iter().all(|x| x.class.as_deref() != Some(r.class)),
                "{cut:?} ({}): {:?}",
                r.class,
                f.failures
            );
        }
        assert!(seen > 10, "{seen}");
        // review 20's own: an async event without its name, a provider search without `fi_getinfo`
        for cut in ["NET/IB : Got async event", "NET/OFI OFI fi_getinf"] {
            assert_eq!(
                analyse(&format!("h:1:2 [0] x.c:1 NCCL WARN {cut}\n")).failures[0].kind,
                Failure::UnknownWarning
            );
        }
        // and one a cut may take: `Call to ibv_reg_mr` of `Call to ibv_reg_mr failed with error %s`
        assert_eq!(analyse("h:1:2 [0] x.c:1 NCCL WARN Call to ibv_reg_mr\n").failures[0].kind, Failure::IbvResource);
    }

    /// NCCL starts its socket transport only after the ones before it had no device or failed to
    /// start; ibvwrap's `Failed to open libibverbs.so[.1]` is IB's failure (2.4's init.cc initNet,
    /// 2.19+ net.cc): `NET/Socket : Using` after it is the network NCCL took (held-out set 77,
    /// fairseq#2329 on NCCL 2.4.8).
    #[test]
    fn sockets_after_libibverbs_missing_are_the_network() {
        let log = "h:1:1 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\nh:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n";
        assert_eq!(analyse(log).network.as_deref(), Some("Socket"));
        // a transport the job named is not inferred over
        let named = format!("h:1:1 [0] NCCL INFO NCCL_NET set by environment to IB\n{log}");
        assert_eq!(analyse(&named).network, None);
        // another host listed IB devices: it took IB (review 19: a mixed job, not all sockets)
        let mixed = format!("{log}b:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.2<0>\n");
        assert_eq!(analyse(&mixed).network, None);
        // or selected an OFI provider (review 20: aws-ofi-nccl on the other host)
        let ofi = format!("{log}b:2:2 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n");
        assert_eq!(analyse(&ofi).network, None);
    }

    #[test]
    fn nccl_2_30_wordings() {
        // the function name in traces, `Count not open` for each name tried, async event forms
        let f = analyse("h:1:2 [0] NCCL INFO transport.cc:197 (ncclTransportP2pSetup) -> 6\n");
        assert_eq!(f.failures[0].kind, Failure::NcclError);
        assert!(!analyse("h:1:2 [0] NCCL INFO Count not open libibverbs.so\n").ibverbs_missing);
        assert!(analyse("h:1:2 [0] NCCL INFO Count not open libibverbs.so\nh:1:2 [0] NCCL INFO Count not open libibverbs.so.1\n").ibverbs_missing);
        for l in [
            "NET/IB : mlx5_0:1 Got async error event: port error",
            "NET/IB : mlx5_0:1 Got non-fatal async event: port error(10)",
            "NET/IB : Got async event : port error",
        ] {
            assert_eq!(
                analyse(&format!("h:1:2 [0] x.cc:1 NCCL WARN {l}\n")).failures[0].kind,
                Failure::PortError,
                "{l}"
            );
        }
        let f = analyse("[2026-12-02 06:30:00] h:1:2 [0] transport/net_ib.cc:1 (ncclIbConnect) NCCL WARN NET/IB : Got async event : port error\n");
        assert_eq!((f.failures[0].kind, f.hosts.as_slice()), (Failure::PortError, ["h".to_string()].as_slice()));
    }

    #[test]
    fn held_out_set_6_readers_from_their_producers_formats() {
        // misc/ibvwrap.cc CHECK_NOT_NULL (2.18–2.31): WARN("lib wrapper not initialized.") when
        // libibverbs did not open; a fact, not a failure of its own. GDRCOPY's is not it.
        let f = analyse("h:1:2 [0] misc/ibvwrap.cc:173 NCCL WARN lib wrapper not initialized.\n");
        assert!(f.ibverbs_missing && f.failures.is_empty(), "{:?}", f.failures);
        let f = analyse("h:1:2 [0] misc/gdrwrap.cc:1 NCCL WARN GDRCOPY lib wrapper not initialized.\n");
        assert!(!f.ibverbs_missing);
        // NCCL 2.0–2.2's include/debug.h: no `NCCL` tag.
        let f = analyse(
            "h1:12:13 [0] INFO NET : Using interface eth0:10.0.0.1<0>\nh1:12:13 [0] INFO Using internal Network Socket\nh1:12:13 [0] transport/net_ib.cu:204 WARN No module present for GPU Direct RDMA.\n",
        );
        assert_eq!((f.nccl_lines, f.network.as_deref(), f.warns.len()), (3, Some("Socket"), 1), "{f:?}");
        // 2.0–2.3's `No module present for GPU Direct RDMA.` (nv_peer_mem not loaded): no
        // GPUDirect, not a failure of its own (held-out set 7's review of horovod#385)
        assert!(f.failures.is_empty() && f.gdr == Some(false), "{f:?}");
        // …but another program's `[0] INFO` without the host:pid:tid prefix is not NCCL's, nor
        // a clock's `hh:mm:ss [0] INFO` (review of held-out set 6).
        for l in [
            "worker [0] INFO loading",
            "12:34:56 [0] INFO epoch 1",
            "2024-05-01T12:34:56 [1] INFO x",
            "[2024-05-01 12:34:56 [1] INFO x",
        ] {
            assert_eq!(analyse(&format!("{l}\n")).nccl_lines, 0, "{l}");
        }
        // NCCLCHECK traces: `transport/net_ib/init.cc` (2.29+, the IB plugin's init failing,
        // the fallback to sockets) is not the top-level init.cc; `init.cc` (or a kept path
        // `…/src/init.cc`) is.
        let f = analyse("h:1:2 [5] NCCL INFO transport/net_ib/init.cc:396 -> 3\n");
        assert!(f.failures.is_empty(), "{:?}", f.failures);
        for t in ["init.cc:1853 -> 3", "./init.cc:1853 -> 3", "/dvs/p4/build/nccl/src/init.cc:1853 -> 3"] {
            let f = analyse(&format!("h:1:2 [5] NCCL INFO {t}\n"));
            assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::NcclError), "{t}");
        }
        // libfabric's FI_WARN prefix `libfabric:%d:%lu:%s:%s:%s():%d<%s> ` and the EFA RDM
        // provider's completion error `err: %d, message: %s …`
        let f = analyse("libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address My EFA addr: fi_addr_efa://[fe80::1]:0:1 Peer EFA addr: fi_addr_efa://[fe80::2]:0:2 (7)\n");
        assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::OfiPeer));
        // another provider's (verbs, tcp) warnings are not EFA's
        let f = analyse("libfabric:1:2::verbs:cq:vrb_handle_error():1<warn> err: 5, message: x\n");
        assert!(f.failures.is_empty(), "{:?}", f.failures);
        // nccl-tests' CUDACHECK: `%s: Test CUDA failure %s:%d '%s'`, first releases `Cuda
        // failure %s:%d '%s'`; another program's "Cuda failure" prose is not it.
        for l in [
            "node1: Test CUDA failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'",
            "Cuda failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'",
        ] {
            assert_eq!(analyse(&format!("{l}\n")).failures.first().map(|x| x.kind), Some(Failure::CudaFailure), "{l}");
        }
        assert!(analyse("a Cuda failure happened somewhere\n").failures.is_empty());
        // `Init COMPLETE` is counted apart from `Connected all rings`.
        let f = analyse("h:1:2 [0] NCCL INFO Connected all rings\n");
        assert_eq!((f.init_complete, f.init_done), (1, 0));
        let f = analyse("h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n");
        assert_eq!(f.init_done, 1);
        // init.cc's `Init timings - %s: rank %d nranks %d total %.2f (kernels %.2f, …)`: only on
        // the success path, after Init COMPLETE
        let f = analyse("h:1:2 [0] NCCL INFO Init timings - ncclCommInitRank: rank 0 nranks 16 total 1.07 (kernels 0.31, alloc 0.03, bootstrap 0.01, allgathers 0.01, topo 0.40, graphs 0.02, connections 0.27, rest 0.02)\n");
        assert_eq!(f.init_done, 1);
    }

    #[test]
    fn held_out_set_7_readers_from_their_producers_formats() {
        let first = |t: &str| analyse(t).failures.first().map(|x| (x.kind, x.code));
        // torch/distributed/elastic/multiprocessing/api.py: `failed (exitcode: %s) local_rank: %s
        // (pid: %s) of binary: %s` (and `of fn: %s (start_method: %s)`); errors/__init__.py:
        // `Signal {-exitcode} ({name}) received by PID {pid}`.
        let api = "E1203 12:04:32.421000 624 torch/distributed/elastic/multiprocessing/api.py:986]";
        assert_eq!(
            first(&format!("{api} failed (exitcode: 4) local_rank: 1 (pid: 646) of binary: /usr/bin/python\n")),
            Some((Failure::WorkerExit, Some(4)))
        );
        assert_eq!(
            first(&format!("{api} failed (exitcode: -8) local_rank: 0 (pid: 562) of fn: main (start_method: spawn)\n")),
            Some((Failure::Crash, Some(8)))
        );
        assert_eq!(first("  traceback : Signal 7 (SIGBUS) received by PID 563\n"), Some((Failure::Crash, Some(7))));
        // torchrun stopping the others (SIGTERM), scancel (SIGINT/SIGHUP): not a crash
        assert_eq!(first("  traceback : Signal 15 (SIGTERM) received by PID 645\n"), None);
        assert_eq!(
            first(&format!("{api} failed (exitcode: -15) local_rank: 0 (pid: 5) of binary: x\n")),
            Some((Failure::WorkerExit, Some(-15)))
        );
        assert_eq!(first("the test failed (exitcode: 3) somewhere\n"), None);
        assert_eq!(first("Signal 11 was mentioned in prose\n"), None);
        // misc/socket.cc `Call to bind failed: %s`: its own class
        let f =
            analyse("h:1:1 [0] misc/socket.cc:413 NCCL WARN Call to bind failed: Cannot assign requested address\n");
        assert_eq!(f.failures[0].class.as_deref(), Some("socket-bind-failed"));
        // aws-ofi-nccl's tests (tests/functional logger): `WARN: Function: %s Line: %d: `, with
        // a launcher's `host: ` before it
        for l in [
            "WARN: Function: create_nccl_ofi_component Line: 459: NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument",
            "10.3.35.83: WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any optimal provider",
            "h:1:1 [7] ofi_init:700 NCCL WARN NET/OFI Only EFA provider is supported",
        ] {
            assert_eq!(first(&format!("{l}\n")).map(|x| x.0), Some(Failure::OfiNoDevice), "{l}");
        }
        let f = analyse("INFO: Function: main Line: 53: NET/OFI Received 1 network devices\n");
        assert!(f.nccl_lines == 1 && f.failures.is_empty(), "{f:?}");
        assert!(analyse("INFO: Function: main Line: x: nope\n").nccl_lines == 0);
        // init.cc initNet (2.4–2.18): the socket transport starts only after IB found nothing
        let f = analyse("h:1:1 [0] NCCL INFO NET/IB : No device found.\nh:1:1 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.112<0>\n");
        assert_eq!(f.network.as_deref(), Some("Socket"));
        let f = analyse("h:1:1 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.112<0>\n");
        assert_eq!(f.network, None, "without IB's failure the socket line alone is not the network");
        // net_ib's `NET/IB: Dev %d Port %d qpn %d mtu %d …` (a queue pair set up): IB, where
        // no line names the network
        let f = analyse("h:1:2 [0] INFO NET/IB: Dev 0 Port 1 qpn 3928 mtu 3 GID 3 (0/F1084809FFFF0000)\n");
        assert_eq!(f.network.as_deref(), Some("IB"));
        // an external plugin is its own fabric
        let f = analyse("h:1:1 [0] NCCL INFO Using network Mesh\n");
        assert!(f.on_rdma());
        assert!(!analyse("h:1:1 [0] NCCL INFO Using network Socket\n").on_rdma());
        // 2.12–2.18 misc/socket.cc `Net : Call to recv from %s failed : %s`
        assert_eq!(
            first("node2: Net : Call to recv from 10.0.0.2<56843> failed : Connection refused\n").map(|x| x.0),
            Some(Failure::SocketConnect)
        );
        // XLA: `%s: %s. Last NCCL warning(error) log entry (may be unrelated) '%s'.` and
        // ncclGetErrorString's words without the result's name
        let f = analyse("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: internal error - please report this issue to the NCCL developers. Last NCCL warning(error) log entry (may be unrelated) 'Attribute busid of node nic not found'.; current tracing scope\n");
        assert!(f.warns.iter().any(|w| w == "Attribute busid of node nic not found"), "{:?}", f.warns);
        assert!(!f.errors.is_empty());
        assert!(!analyse("RuntimeError: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n")
            .errors
            .is_empty());
        // graph/search.cc 2.18–2.26: NCCL goes on with one channel in rank order (a degradation
        // a measured bandwidth shows, not a failure; a WARN-level log has no Init COMPLETE to
        // excuse it); a cut copy of it is it
        let f = analyse("h:1:1 [0] NCCL WARN Could not find a path for pattern 4, falling back to simple order\nh:1:1 [1] NCCL WARN Could not find a pat\n");
        assert!(f.failures.is_empty(), "{:?}", f.failures);
        assert_eq!(f.warns.len(), 2, "{:?}", f.warns);
        // review of set 7: another program's `WARN: Function:` is not the plugin's
        assert_eq!(analyse("WARN: Function: main Line: 3: disk almost full\n").nccl_lines, 0);
        // TCP plugins are not RDMA; an unknown plugin is its own fabric
        for n in ["Socket", "FastSocket", "Socket`"] {
            assert!(!analyse(&format!("h:1:1 [0] NCCL INFO Using network {n}\n")).on_rdma(), "{n}");
        }
        // Google's GPUDirect-TCPX/TCPXO move data to GPU memory: judged by their channels
        for n in ["GPUDirectTCPX_v7", "GPUDirectTCPX", "FasTrak"] {
            assert!(analyse(&format!("h:1:1 [0] NCCL INFO Using network {n}\n")).on_rdma(), "{n}");
        }
        // the OFI plugin failed and NCCL went on with its IB transport: not the job's failure
        let f = analyse(
            "h:1:1 [0] NCCL WARN NET/OFI Only EFA provider is supported\nh:1:1 [0] NCCL INFO Using network IB\n",
        );
        assert!(f.failures.is_empty(), "{:?}", f.failures);
        // errors/__init__.py's table row; a restart of the group after a failure (agent/server
        // api.py) leaves the job to the lines after it
        assert_eq!(first("  exitcode  : 1 (pid: 646)\n"), Some((Failure::WorkerExit, Some(1))));
        assert_eq!(first("  exitcode  : -15 (pid: 646)\n"), None);
        // (the restarted attempt's init completed after it: the retry ran)
        let restart = "[default] Worker group FAILED. 2/3 attempts left; will restart worker group\nh:9:9 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE";
        assert_eq!(
            first(&format!("{api} failed (exitcode: 1) local_rank: 0 (pid: 5) of binary: x\n{restart}\n")),
            None
        );
        // review: a restart whose attempt never completes its init forgives nothing
        let bare = "[default] Worker group FAILED. 2/3 attempts left; will restart worker group";
        assert!(first(&format!("{api} failed (exitcode: 1) local_rank: 0 (pid: 5) of binary: x\n{bare}\n")).is_some());
        assert!(
            first(&format!("{restart}\n{api} failed (exitcode: 1) local_rank: 0 (pid: 5) of binary: x\n")).is_some()
        );
        // review of set 8: the attempt's own CUDA error is retried with it; a failure seen
        // again after the restart is the retry's
        let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
        let fail = format!("{api} failed (exitcode: 1) local_rank: 0 (pid: 5) of binary: x");
        assert_eq!(first(&format!("{oom}\n{fail}\n{restart}\n")), None);
        assert!(first(&format!("{oom}\n{fail}\n{restart}\n{fail}\n")).is_some());
        // a logger's prefix is taken off the line after `Last error:` only where that line
        // has the same logger's first word
        assert_eq!(
            strip_like("ERROR 04-07 00:57:47 ray_utils.py:45] x", "ERROR 04-07 00:57:46 ray_utils.py:45] "),
            "x"
        );
        assert_eq!(
            strip_like("gpu-node-0017:1234:5678 [3] NCCL WARN y", "ERROR 04-07 00:57:46 ray_utils.py:45] "),
            "gpu-node-0017:1234:5678 [3] NCCL WARN y"
        );
        // XLA's quote ends at `'.`, before its tracing scope; ncclInvalidUsage's words
        let f = analyse("x: failed: invalid usage (run with NCCL_DEBUG=WARN for details). Last NCCL warning(error) log entry (may be unrelated) 'Bootstrap : no socket interface found'.; current tracing scope: 'all-reduce.1'\n");
        assert_eq!(f.warns, vec!["Bootstrap : no socket interface found".to_string()]);
        assert!(!f.errors.is_empty());
    }

    #[test]
    fn nodes_on_different_net_plugins_are_named() {
        // plugin/net.cc and plugin_open.cc by release, and the HPC-X plugin's own line
        let ext = [
            "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v10 (v10)",
            "Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
        ];
        let int = [
            "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
            "NET/Plugin: Using internal network plugin.",
            "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.",
        ];
        for e in ext {
            for i in int {
                let f = analyse(&format!("a:1:1 [0] NCCL INFO {e}\nb:2:2 [0] NCCL INFO {i}\n"));
                assert_eq!(
                    f.net_plugin_split.as_deref(),
                    Some("a loads a net plugin; b uses NCCL's internal one"),
                    "{e} / {i}"
                );
                let same = analyse(&format!("a:1:1 [0] NCCL INFO {i}\nb:2:2 [0] NCCL INFO {i}\n"));
                assert_eq!(same.net_plugin_split, None);
            }
        }
        // The tuner's fallback is not the network's.
        let f = analyse("a:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin x (v8)\nb:2:2 [0] NCCL INFO TUNER/Plugin: Using internal tuner plugin.\n");
        assert_eq!(f.net_plugin_split, None);
        let f = analyse("a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA (DMABUF) enabled for HCA 0 'rocep1s0f1\n");
        assert!(f.gdr_hca_capable && f.gdr_disabled_hcas.is_empty());
        let f = analyse("a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n");
        assert!(f.gdr_hca_capable);
    }

    #[test]
    fn benign_verbs_events_are_not_failures() {
        // net_ib's async thread, by release: `Got async event : %s` (≤ 2.19), `%s:%d Got async
        // event : %s` (2.20–2.22), `%s:%d Got async error event: %s` (2.23–2.27), `%s:%d Got
        // non-fatal async event: %s(%d)` (2.28+); %s is ibv_event_type_str's.
        let kind = |l: &str| {
            analyse(&format!("h:1:2 [0] transport/net_ib.cc:93 NCCL WARN {l}\n")).failures.first().map(|x| x.kind)
        };
        let benign = [
            "client reregistration",
            "port active",
            "LID change",
            "SM change",
            "P_Key change",
            "path migrated",
            "GID table change",
        ];
        // a queue pair's, a completion queue's or the device's event is no port going down
        // (held-out nccl#1524, nccl#1710: `local access violation work queue error`); 2.23+
        // print those as fatal events of their own, so the two older forms only
        let fatal = [
            "local access violation work queue error",
            "invalid request local work queue error",
            "local work queue catastrophic error",
            "CQ error",
            "local catastrophic error",
        ];
        for fmt in [
            "NET/IB : Got async event : {e}",
            "NET/IB : mlx5_0:1 Got async event : {e}",
            "NET/IB : mlx5_0:1 Got async error event: {e}",
            "NET/IB : mlx5_0:1 Got non-fatal async event: {e}(17)",
        ] {
            let older = !(fmt.contains("error event") || fmt.contains("non-fatal"));
            let cases =
                benign.iter().map(|e| (*e, None)).chain(std::iter::once(("port error", Some(Failure::PortError))));
            let cases = cases.chain(fatal.iter().filter(|_| older).map(|e| (*e, Some(Failure::IbvFatalEvent))));
            for (e, want) in cases {
                let l = fmt.replace("{e}", e);
                assert_eq!(kind(&l), want, "{l}");
            }
        }
    }

    #[test]
    fn gpudirect_tcpx_warnings_behind_its_own_prefix() {
        // the plugin logs through NCCL's logger with __PRETTY_FUNCTION__ where NCCL puts its
        // file (net_tcpx.cc's `WARN("%p:%p, nic %d, %s, %s %s ctrl timeout cnt %lu, nanos %lu", …)`)
        let fmt = "%p:%p, nic %d, %s, %s %s ctrl timeout cnt %lu, nanos %lu";
        let msg = fmt
            .replacen("%p:%p", "0x1:0x2", 1)
            .replacen("%d", "0", 1)
            .replacen("%s", "enp12s0", 1)
            .replacen("%s", "10.0.0.1<1><-10.0.0.2<2>", 1)
            .replacen("%s", "rx", 1)
            .replacen("%lu", "3", 1)
            .replacen("%lu", "10000000585", 1);
        let l = format!("host:1:2 [0] tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN {msg}\n");
        let f = analyse(&l);
        let w = f.failed(Failure::NcclWarning).expect("a finding");
        assert_eq!(w.class.as_deref(), Some("tcpx-stall"), "{:?}", f.failures);
        // the receive-datapath-manager's client (gpu/rx_pool.cu)
        let l = "h:1:2 [0] gpumem_import(...):71 NCCL WARN unix client 3, gpumem fd client connect failed No such file or directory\n";
        assert_eq!(analyse(l).failed(Failure::NcclWarning).and_then(|w| w.class.clone()).as_deref(), Some("tcpx-rxdm"));
    }

    #[test]
    fn the_heartbeat_monitor_from_pytorchs_formats() {
        // ProcessGroupNCCL.cpp's HeartbeatMonitor (2.3–2.7: errorMsg; 2.8+: handleStall's
        // LOG(ERROR)), behind glog's prefix and c10d's `[PG ID %d PG GUID %s Rank %d] `, and 2.2's
        // errorMsg; the monitor aborts the process after it
        let stuck = |secs: u32| {
            format!(
                "ProcessGroupNCCL's watchdog got stuck for {secs} seconds without making progress in monitoring \
                 enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang \
                 blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api \
                 (for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is \
                 not actually stuck and a longer timeout would help, you can either increase the timeout \
                 (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor \
                 (TORCH_NCCL_ENABLE_MONITORING=0)."
            )
        };
        for l in [
            format!("[rank3]:[E1224 16:22:36.695363169 ProcessGroupNCCL.cpp:1484] [PG ID 0 PG GUID 0(default_pg) Rank 3] {}", stuck(480)),
            format!("[E ProcessGroupNCCL.cpp:1287] [PG 0 Rank 1] {}", stuck(600)),
            "[E ProcessGroupNCCL.cpp:1172] [Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1".to_string(),
        ] {
            let f = analyse(&format!("{l}\n"));
            assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::WatchdogStuck), "{l}");
        }
        // glued onto NCCL's own lines by another process's write (review 23): after a channel's
        // transport, after a comm line's Init COMPLETE
        for nccl in [
            "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/1/GDRDMA",
            "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x66d0 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0xabc - Init COMPLETE",
        ] {
            for torch in [
                format!("[rank1]:[E1224 16:22:36.695363169 ProcessGroupNCCL.cpp:1484] [PG ID 0 PG GUID 0(default_pg) Rank 1] {}", stuck(480)),
                "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2".to_string(),
            ] {
                let f = analyse(&format!("{nccl}{torch}\n"));
                assert!(f.failed(Failure::WatchdogStuck).is_some(), "{nccl}{torch}");
            }
            // the NCCL line alone stays what it was
            assert!(analyse(&format!("{nccl}\n")).failures.is_empty(), "{nccl}");
        }
        // its settings banner, other backends' copies of the monitor, and a comment about it are not
        for l in [
            "[I1206 11:26:38.715986447 ProcessGroupNCCL.cpp:1725] [PG ID 0 PG GUID 0 Rank 0] HeartbeatMonitor environments: TORCH_NCCL_ENABLE_MONITORING (Whether to kill program when no watchdog heartbeat detected): 1, TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC: 480",
            "[E ProcessGroupHCCL.cpp:1502] [Rank 0] ProcessGroupHCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
            "# NCCL's watchdog aborted at its 480s default (\"watchdog got stuck for 480 seconds without making progress\")",
        ] {
            assert!(analyse(&format!("{l}\n")).failed(Failure::WatchdogStuck).is_none(), "{l}");
        }
    }

    #[test]
    fn a_cuda_failure_of_the_nvls_transport_is_told_by_its_location() {
        // NCCL's CUCHECK (`Cuda failure %d '%s'`) in transport/nvls.cc's multicast calls, with
        // and without 2.26's timestamp; the same failure elsewhere is not NVLS's
        for l in [
            "[2025-07-21 19:05:29] node004:27907:27907 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'",
            "gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error'",
        ] {
            let f = analyse(&format!("{l}\n"));
            assert!(f.nvls_cuda_failure && f.failed(Failure::CudaFailure).is_some(), "{l}");
        }
        let p2p = "h:1:2 [0] transport/p2p.cc:272 NCCL WARN Cuda failure 1 'invalid argument'\n";
        let f = analyse(p2p);
        assert!(!f.nvls_cuda_failure && f.failed(Failure::CudaFailure).is_some());
        // the finding quotes the first CUDA failure: an NVLS one after another is not its line
        let nvls = "h:1:2 [0] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'\n";
        assert!(!analyse(&format!("{p2p}{nvls}")).nvls_cuda_failure);
        assert!(analyse(&format!("{nvls}{p2p}")).nvls_cuda_failure);
    }

    #[test]
    fn the_watchdogs_own_cuda_error_is_a_cuda_failure() {
        // ProcessGroupNCCL's watchdog ends on c10's C10_CUDA_CHECK (`CUDA error: %s`,
        // cudaGetErrorString's words) in its own event queries: `[PG ID %d PG GUID %s Rank %d]
        // Process group watchdog thread terminated with exception: CUDA error: …` (2.2+), `[Rank
        // %d] NCCL watchdog thread terminated with exception: …` before; and its `what():` relay
        for l in [
            "[rank1]:[E409 05:10:01.930967482 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
            "[E ProcessGroupNCCL.cpp:915] [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: unknown error",
            "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
        ] {
            let f = analyse(&format!("{l}\n"));
            assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::CudaFailure), "{l}");
        }
    }

    #[test]
    fn framework_and_verbs_failures_from_their_producers_formats() {
        // ProcessGroupNCCL's watchdog that ended on a timeout (held-out pytorch#105287)
        for l in [
            "[I ProcessGroupNCCL.cpp:854] [Rank 0] NCCL watchdog thread terminated with exception: traceMap[thisSeq][myRank].second == kEventStart INTERNAL ASSERT FAILED at \"TraceUtils.h\":237. Timeout rank [0] last trace item must be kEventStart",
            "[rank3]:[E ProcessGroupNCCL.cpp:1182] [PG 0 Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9) ran for 600000 milliseconds before timing out.",
        ] {
            assert_eq!(analyse(&format!("{l}\n")).failures.first().map(|x| x.kind), Some(Failure::CollectiveTimeout), "{l}");
        }
        // two processes' writes glued on one line (held-out RADDet, set 10): `cudaDev 0ljm:…`
        // makes no host `0ljm`; a paste flattened onto one line keeps each of its hosts
        let pad = "x".repeat(200);
        let glued = format!("ljm:1:1 [1] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0ljm:2:2 [0] NCCL INFO Setting affinity {pad} ljm:1:1 [1] NCCL INFO Connected all rings\nljm:2:2 [0] NCCL INFO Connected all rings\n");
        assert_eq!(analyse(&glued).hosts, vec!["ljm".to_string()]);
        // review: a real host that ends with another's name (gpunode1, node1) is no glue: its
        // process never wrote a whole line under the shorter name; nor is one whose first
        // line was a segment and whose later lines are whole
        let two = format!("node1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0> {pad} gpunode1:7:7 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n");
        assert_eq!(analyse(&two).hosts, vec!["gpunode1".to_string(), "node1".to_string()]);
        let later = format!(
            "{two}gpunode1:7:7 [0] NCCL INFO Connected all rings\ngpunode1:7:7 [0] NCCL INFO Connected all trees\n"
        );
        assert_eq!(analyse(&later).hosts, vec!["gpunode1".to_string(), "node1".to_string()]);
        // whole lines that begin with two writes run together (held-out set 29): `ston` + `stone`
        let run = "stone:11:11 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n\
                   stone:12:12 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n\
                   stone:11:11 [0] NCCL INFO threadThreshstonstone:12:12 [1] NCCL INFO x\n\
                   stonstone:12:13 [1] NCCL INFO MMAP allocated shareable host buffer\n\
                   stone:12stone:11:14 [0] NCCL INFO [Proxy Service] Device 0 CPU core 10\n";
        assert_eq!(analyse(run).hosts, vec!["stone".to_string()]);
        // review 8: real hosts whose names end with another's, with the same pids (containers)
        // keep their names: `gpu` is no head of `node1:<pid>`
        let same_pids = "node1:7:7 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n\
                         gpunode1:7:7 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n\
                         gpunode2:7:7 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>\n";
        assert_eq!(analyse(same_pids).hosts, ["gpunode1", "gpunode2", "node1"].map(String::from));
        let pasted = format!("a:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0> {pad} b:2:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n");
        assert_eq!(analyse(&pasted).hosts, vec!["a".to_string(), "b".to_string()]);
        // the proxy's teardown (proxy.cc 2.18-2.31): no failure of the job; a Connect that
        // failed is one
        let teardown = "h:1:9 [0] proxy.cc:1458 NCCL WARN [Service thread] Accept failed Operation now in progress\nh:1:9 [0] proxy.cc:1497 NCCL WARN [Service thread] Could not receive type from localRank 0, res=3, closed=0\nh:1:9 [0] proxy.cc:1521 NCCL WARN [Proxy Service 0] Failed to execute operation Close from rank 0, retcode 3\n";
        assert!(analyse(teardown).failures.is_empty(), "{:?}", analyse(teardown).failures);
        let connect = teardown.replace("operation Close", "operation Connect");
        assert!(!analyse(&connect).failures.is_empty());
        // PyTorch's process group alone is a job on NCCL (a thin log, not "not a log")
        let f = analyse("[rank0]:[W1206 05:38:21.785533094 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy_process_group() was not called before program exit\n");
        assert!(f.nccl_lines == 1 && f.failures.is_empty(), "{f:?}");
        // PyTorch's CUDA exceptions (held-out device case fillmem)
        for l in [
            "[rank1]: torch.AcceleratorError: CUDA error: out of memory",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.19 GiB",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
        ] {
            assert_eq!(analyse(&format!("{l}\n")).failures.first().map(|x| x.kind), Some(Failure::CudaFailure), "{l}");
        }
        assert!(analyse("see the CUDA error: docs\n").failures.is_empty());
        // libmlx5's own line (a Ray relay around it)
        let f = analyse("(Actor pid=1, ip=10.0.0.1) mlx5: host_unknown: got completion with error:\n00000000 00000000 00000000 00000000\n");
        assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::CompletionError));
    }

    #[test]
    fn bootstrap_address_and_plugin_channel_names() {
        let f = analyse("gh1:1:1 [0] NCCL INFO Bootstrap : Using ib0:fe80::a288:c203:d2:aaf2%ib0<0>\n");
        assert_eq!(
            (f.bootstrap_ifs[0].as_str(), f.bootstrap_addrs[0].as_str()),
            ("ib0", "fe80::a288:c203:d2:aaf2%ib0")
        );
        let f =
            analyse("h:1:1 [0] NCCL INFO Channel 01 : 9[101d0] -> 0[101c0] [send] via NET/AWS Libfabric/0/GDRDMA\n");
        assert_eq!((f.observed().as_deref(), f.gdr), (Some("AWS Libfabric"), Some(true)));
    }

    #[test]
    fn the_gate_fits_its_mask() {
        assert!(GATE.len() <= 64, "{} literals: gate_mask's u64 holds 64", GATE.len());
        for a in GATE {
            for b in GATE.iter().filter(|b| *b != a) {
                assert!(!a.contains(b), "{a:?} contains {b:?}: gate_mask could miss {b:?}");
            }
        }
        // overlapping occurrences are each seen
        assert_eq!(gate_mask("a Cuda failureset by peer"), gbit!(" failure") | gbit!("reset by peer"));
        assert_eq!(gate_mask("Cuda failure reset by peer"), gbit!(" failure") | gbit!("reset by peer"));
        assert_eq!(gate_mask("Duplicate GPU Direct"), gbit!("Duplicate GPU") | gbit!("GPU Direct"));
        assert_eq!(gate_mask("x Using network IB via NET/IB/0"), gbit!("Using network") | gbit!(" via "));
    }

    #[test]
    fn a_store_whose_server_closed_is_a_fact_not_a_failure() {
        // set 65, nccl#1762: c10d TCPStore.cpp's warning (pytorch#153586's wording)
        let l = "[rank101]:[W703 01:01:05.364835151 TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(fd=90, addr=[a]:43518, remote=[b]:56789): Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?\n";
        let f = analyse(l);
        assert_eq!(f.store_closed.as_deref(), Some("b:56789"), "{f:?}");
        assert!(f.failures.is_empty(), "{:?}", f.failures);
    }

    #[test]
    fn results_without_rror_in_their_name_and_traces_behind_a_plugin_are_read_on_nccl_lines() {
        // the gate's `nccl` no longer sends every line naming a library path to the warning
        // readers: the three result names without `rror`, and NCCL's traces after a plugin's
        // words, are looked for on their own
        for l in [
            "h:1:2 [0] NCCL INFO x failed: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
            "h:1:2 [0] NCCL INFO x ncclInvalidArgument: Invalid value for an argument.",
            "h:1:2 [0] NCCL INFO ncclSocketInit: connecting to address with family 0",
            // review 14: ncclGetErrorString's words without a result name
            "nodeA:100:100 [0] NCCL INFO ncclAllReduce failed: invalid argument (run with NCCL_DEBUG=INFO for details)",
            "W0101 12:00:00.123 nccl_utils.cc:297] NCCL operation ncclAllReduce(...) failed: invalid argument (run with NCCL_DEBUG=WARN for details)",
            "h:1:2 [0] NCCL INFO x failed: invalid usage (run with NCCL_DEBUG=WARN for details)",
            // TensorFlow/XLA's `%s:%d: NCCL operation %s failed: %s` over NCCL before 2.18,
            // whose ncclGetErrorString had nothing after `invalid usage` (set 107, tf#62757)
            "  (0) INTERNAL:  custom call 'xla.gpu.all_reduce' failed: external/local_xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: invalid usage; current tracing scope: all-reduce-start.4",
            "Internal: third_party/nccl/nccl.cc:12: NCCL operation ncclGroupEnd() failed: internal error",
        ] {
            assert!(!analyse(&format!("{l}\n")).errors.is_empty(), "{l}");
        }
        // not a relay: no result after it, or ncclInProgress's own words
        for l in [
            "NCCL operation ncclAllReduce(x) failed: see above",
            "W0101 nccl.cc:1] waiting: NCCL operation in progress",
            "the NCCL operation ncclSend failed: invalid usage of the words",
        ] {
            assert!(analyse(&format!("{l}\n")).errors.is_empty(), "{l}");
        }
        // set 43's TCPXO shim: its warning, then NCCL's error on its way up behind the shim's words
        let f = analyse(
            "h:1:2 [0] g.cc:101 NCCL WARN NCCL/NET (shim) mismatch enforced: NCCL_MIN_NCHANNELS=8 (expected 4)\n\
             h:1:2 [0] NCCL INFO NCCL/NET (shim) /build/nccl-shim/src/guest_config_checker.cc:132 -> 4\n",
        );
        assert!(f.error_after_unknown_warning, "{f:?}");
        assert_eq!(analyse("h:1:2 [0] NCCL INFO libnccl-net.so: No plugin found\n").errors, Vec::<String>::new());
        assert!(has_arrow("a.cc:1 -> 3") && !has_arrow("a->b") && !has_arrow("x > y"));
    }

    #[test]
    fn nccl_error_takes_the_first_result_in_its_order_from_its_first_occurrence() {
        // PyTorch: "NCCL error in: …, unhandled system error … ncclSystemError: …"
        let l = "RuntimeError: NCCL error in: pg.cpp:1269, unhandled system error (run with NCCL_DEBUG=INFO), NCCL version 2.21.5\nncclSystemError: System call failed";
        assert!(nccl_error(l).unwrap().starts_with("ncclSystemError: System call"));
        assert!(nccl_error("x NCCL error in: a.cpp, unhandled system error")
            .unwrap()
            .starts_with("unhandled system error"));
        assert_eq!(nccl_error("NCCL error y NCCL error z"), Some("NCCL error y NCCL error z"));
        assert_eq!(nccl_error("all fine"), None);
    }

    #[test]
    fn ibwires_own_lines_in_a_job_output_are_not_nccls() {
        // launch's stop message quotes NCCL's lines as its evidence (found by the Slurm system
        // test: "ranks disagree on the network (Socket vs Socket\")")
        let mut a = Analyser::new();
        a.line("node1:1006:1006 [0] NCCL INFO Using network Socket");
        a.line("ibwire launch: error: node1: NCCL chose Socket where InfiniBand/RoCE was expected (evidence: \"NET/IB : No device found\", \"Using network Socket\")");
        a.line("ibwire-hook: warning: the image has no libibverbs.so.1");
        // the watch's report: a headline, then indented lines that quote NCCL
        a.line("ibwire launch: error: node1: NCCL chose Socket where InfiniBand/RoCE was expected");
        a.line("  NCCL: \"NET/IB : No device found\", \"Using network Socket\"");
        a.line("  likely: NCCL moves data between nodes over TCP sockets");
        let f = a.finish();
        assert_eq!(f.networks_seen, vec!["Socket".to_string()], "{:?}", f.networks_seen);
        assert!(f.failures.is_empty(), "{:?}", f.failures);
    }

    #[test]
    fn a_relayed_failure_without_nccls_tag_is_classified_through_the_gate() {
        // classify's searches are skipped where the gate's mask lacks their GATE entries
        // (`hasm!`): a line the classifier knows still gets through, relayed without the tag
        let mut a = Analyser::new();
        a.line("[rank3]: Call to ibv_create_qp failed with 12 Cannot allocate memory");
        assert!(!a.finish().failures.is_empty());
    }

    #[test]
    fn a_duplicate_gpu_the_process_went_on_past_is_no_failure() {
        // set 129's Gadi rank: two communicators fail on device 0 (init.cc's duplicate check,
        // its traces), then the process's own on device 3 completes
        let probe =
            "g:7:7 [0] init.cc:871 NCCL WARN Duplicate GPU detected : rank 3 and rank 0 both on CUDA device 3d000\n\
                     g:7:7 [0] NCCL INFO init.cc:1501 -> 5\ng:7:7 [0] NCCL INFO init.cc:1746 -> 5\n";
        let done =
            "g:7:9 [3] NCCL INFO comm 0x1 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId b2000 commId 0x9 - Init COMPLETE\n";
        let f = analyse(&format!("{probe}{probe}{done}"));
        assert!(f.failures.iter().all(|x| x.init_completed_after), "{:?}", f.failures);
        // without the completion, or with it before the duplicate, both stay failures
        let f = analyse(probe);
        assert!(f.failures.iter().any(|x| x.kind == Failure::DuplicateGpu && !x.init_completed_after));
        let f = analyse(&format!("{done}{probe}"));
        assert!(f.failures.iter().any(|x| x.kind == Failure::DuplicateGpu && !x.init_completed_after));
        // a completion on the GPU the warning named, or naming none, excuses nothing
        let f = analyse(&format!("{probe}{}", done.replace("busId b2000", "busId 3d000")));
        assert!(f.failures.iter().any(|x| !x.init_completed_after), "{:?}", f.failures);
        let f = analyse(&format!("{probe}{}", done.replace("busId b2000 ", "")));
        assert!(f.failures.iter().any(|x| !x.init_completed_after), "{:?}", f.failures);
        // another process's completion excuses nothing
        let f = analyse(&format!("{probe}{}", done.replace("g:7:9", "h:8:9")));
        assert!(f.failures.iter().any(|x| !x.init_completed_after), "{:?}", f.failures);
    }

    #[test]
    fn one_plugins_names_are_one_network() {
        // set 126's TCPX page: rank 0's `Using network GPUDirectTCPX_v7` beside the author's
        // count of the lines (`8 Using network GPUDirectTCPX`): one network, not mixed
        let f = analyse("      8 Using network GPUDirectTCPX\n[0] NCCL INFO Using network GPUDirectTCPX_v7\n");
        assert_eq!(f.networks_seen, ["GPUDirectTCPX_v7"]);
        assert_eq!(f.network.as_deref(), Some("GPUDirectTCPX_v7"));
        // two versions: nodes on two builds (review 28), not one network
        let f = analyse("a:1:1 [0] NCCL INFO Using network IBext_v7\nb:1:1 [0] NCCL INFO Using network IBext_v8\n");
        assert_eq!(f.network.as_deref(), Some("mixed"), "{:?}", f.networks_seen);
        // different networks stay different
        let f = analyse("a:1:1 [0] NCCL INFO Using network IB\nb:1:1 [0] NCCL INFO Using network Socket\n");
        assert_eq!(f.network.as_deref(), Some("mixed"));
        let f = analyse("a:1:1 [0] NCCL INFO Using network IBext_v8\nb:1:1 [0] NCCL INFO Using network IB\n");
        assert_eq!(f.network.as_deref(), Some("mixed"));
        // a host's own line with the short name beside another's versioned one: two builds
        let f = analyse("a:1:1 [0] NCCL INFO Using network IBext\nb:1:1 [0] NCCL INFO Using network IBext_v8\n");
        assert_eq!(f.network.as_deref(), Some("mixed"));
    }

    #[test]
    fn a_provider_selected_ends_only_the_provider_search_misses() {
        // aws-ofi-nccl: providers tried and not found, then one selected: not a failure ...
        let f = analyse("NET/OFI No eligible providers were found\nNET/OFI Selected provider is cxi, fabric is cxi (found 4 nics)\nUsing network Libfabric\n");
        assert!(!f.failures.iter().any(|x| x.kind == Failure::OfiNoDevice), "{:?}", f.failures);
        // ... but what fails after the selection still is
        let f = analyse("NET/OFI No eligible providers were found\nNET/OFI Selected provider is efa, fabric is efa (found 4 nics)\nNET/OFI Unable to find a protocol that worked\n");
        assert!(f.failures.iter().any(|x| x.kind == Failure::OfiNoDevice), "{:?}", f.failures);
        // and without a selection the search's miss is the failure
        let f = analyse("NET/OFI No eligible providers were found\n");
        assert!(f.failures.iter().any(|x| x.kind == Failure::OfiNoDevice), "{:?}", f.failures);
    }

    #[test]
    fn the_gate_covers_every_literal_the_readers_use() {
        // A reader acts on a line only when it holds one of the literals it searches for; the
        // gate passes a line that holds any part listed in GATE. So every literal searched for
        // after the gate must contain a GATE entry. Literals of the short paths before the gate
        // (the tag, the prefix, channel lines) are the exceptions, by name.
        let src = include_str!("log.rs");
        let code = &src[..src.find("#[cfg(test)]\nmod tests").unwrap()];
        // (and nccl-tests' table header, read on every '#' line by shell_report)
        let before_gate = [
            "NCCL ",
            " via ",
            "[receive]",
            "/GDRDMA",
            "ncc",
            "NCCL e",
            "unhandled system",
            "Test NCCL",
            "algbw",
            "busbw",
            " size ",
        ];
        // Searched for only once a gated literal matched in the same condition: a channel's
        // kind after " via ", codes after "Got completion"/"ibv_", "exceeded"/"returned" with
        // "onnect to", "family" with "ncclSocketInit", plugin words after "NET/", "fail" with
        // "NCCL_TOPO_FILE", "NCCL" with "Cuda failure", glibc's "free(): "/"malloc(): " with
        // "corrupted"; the NCCL tag on NCCL's own lines; and
        // the network names of `is_rdma_name`, which reads no line.
        let secondary = [
            // after `ailed` (`recvValueWithTimeout failed`) and that line's own words
            "Connection was likely closed. Did the remote server shutdown or crash?",
            "remote=[",
            // on WARN lines only (read whole, every reader on), beside `Cuda failure`
            "nvls.cc:",
            // after `ProcessGroupNCCL` (the line's logger prefix, required beside it)
            "Heartbeat monitor timed out! Process will be terminated",
            " MNNVL ",
            "use ring PXN ",
            " GDR ",
            "Channel",
            "Ring",
            "Tree",
            "errno ",
            "status=",
            "with status ",
            "vendor err ",
            "vendor_err=",
            "from peer",
            "exceeded",
            "returned",
            "family",
            "Could not find:",
            "Plugin load",
            "fi_cq_readerr",
            "free(): ",
            "malloc(): ",
            "fail",
            "NCCL",
            " NCCL INFO",
            "NCCL INFO ",
            "Libfabric",
            "OFI",
            "ran for",
            // with `nccl` and `ailed` (XLA's relay of a result)
            "NCCL operation nccl",
            // with "waitForInput: socket " (c10d's store timeout)
            " timed out after ",
            // 2.3's WARN text only (a WARN line passes the gate by its tag)
            "Call to connect timeout",
            // with "ocket" (socketPollConnect's retries)
            "onnect returned ",
            ", retrying (",
            " returned ",
            " -> ",
            "NET/OFI",
            "NET/IB: ",
            "NET/IB : ",
            // after ` provider` (net_ib.cc's device line with its port speed)
            "NET/IB: [",
            " speed=",
            "is unsupported",
            "NET/IB : Using",
            // with " nranks " (`anks `), with "failed : Connection refused" (`ailed`)
            "Init timings - ",
            "Call to recv from ",
            // (searched with `str::contains` until 2026-12-07, where this test did not see them)
            // slurmstepd's `error: …` lines and the framework's exceptions, after `rror`
            "oom-kill event",
            "oom_kill event",
            "Detected ",
            "exceeded memory limit",
            "being killed",
            " FAILED (non-zero exit code",
            "DUE TO TIME LIMIT",
            "DUE TO NODE FAILURE",
            "waiting for clients",
            "keys:",
            "Detected mismatch between collectives on ranks",
            // after `Cuda failure`/`CUDA error: `, `_handle_error():`, `ProcessGroupNCCL`
            "no CUDA-capable device is detected",
            "libfabric:",
            ":efa:",
            // a WARN's text (the tag or `rror` of a relay gates it): topology files
            "Attribute arch of node cpu not found",
            // after `FI_EFA_USE_DEVICE_RDMA` (libfabric's EFA provider's abort at its start)
            "rdma-read capability",
            "set to an invalid value",
            "<warn> err: ",
            "we are taking the entire process down",
            // after `NET/Plugin` (the loader's error in 2.19–2.22's wording)
            "load returned ",
            // with ` via signal SIGTERM`, ` terminated with the following error:`, ` terminated
            // with signal `, ` terminated with exit code ` (torch.multiprocessing.spawn's words:
            // `ignal`, `rror`, `xit` gate them)
            "Terminating process ",
            "Process ",
            "process ",
            // with `Init COMPLETE` (`COMPLETE` first, the rarer word), with " nranks "
            "COMPLETE",
            // after `NET/IB : Using ` (its OOB interface's address)
            "; OOB ",
            // with " nranks ": init.cc's `… busId %lx commId 0x%llx - Init START`
            "Init START",
            " commId 0x",
            " busId ",
            " cudaDev ",
            " - Destroy COMPLETE",
            // a check that keeps a line out (c10d's own logger), a WARN line's source (read
            // whole), the short path's NVLS channel count (before the gate), and a network's
            // name (`is_tcp_name` reads no line)
            "] [c10d] ",
            " ras/client_support.cc:",
            " nvls channels",
            "TCP",
        ];
        let mut missing = Vec::new();
        for mac in ["has!(", "after!(", "find!(", "hasm!(", "afterm!("] {
            for (i, _) in code.match_indices(mac) {
                let rest = &code[i..];
                let Some(q) = rest.find('"') else { continue };
                if rest[..q].contains(')') {
                    continue; // the macro's own definition
                }
                let lit = &rest[q + 1..q + 1 + rest[q + 1..].find('"').unwrap()];
                if before_gate.contains(&lit) || secondary.contains(&lit) || lit.len() < 3 {
                    continue;
                }
                if !GATE.iter().any(|g| lit.contains(g)) {
                    missing.push(lit.to_string());
                }
            }
        }
        assert!(missing.is_empty(), "literals no GATE entry covers: {missing:?}");
    }

    /// Device set 5: the readers' rules built from their producers' format strings —
    /// c10's `No CUDA GPUs are available`, cudaErrorNoDevice's words, ProcessGroupWrapper's
    /// `Detected mismatch between collectives on ranks. Rank %d is running collective: …`, and
    /// ProcessGroupNCCL's abort after an error (a SIGABRT it announced is no crash of its own).
    /// abseil's and glog's crash banners (held-out set 18, nccl#2213: `*** SIGSEGV received at
    /// time=1775734074 on cpu 19 ***`); a SIGTERM banner is no crash.
    #[test]
    fn crash_banners_of_abseil_and_glog() {
        let kind = |t: &str| analyse(t).failures.first().map(|x| (x.kind, x.code));
        assert_eq!(kind("*** SIGSEGV received at time=1775734074 on cpu 19 ***\n"), Some((Failure::Crash, Some(11))));
        assert_eq!(
            kind("*** SIGBUS (@0x7f00) received by PID 1234 (TID 0x7f1) from PID 0; stack trace: ***\n"),
            Some((Failure::Crash, Some(7)))
        );
        assert_eq!(kind("*** SIGTERM received at time=1775734074 on cpu 3 ***\n"), None);
        // and an exception behind `kubectl logs --timestamps`' time
        assert_eq!(
            kind("2025-01-01T00:00:00.123456789Z RuntimeError: No CUDA GPUs are available\n"),
            Some((Failure::NoGpu, None))
        );
        assert_eq!(kind("see *** SIGSEGV handling *** in the docs\n"), None);
    }

    #[test]
    fn no_gpu_mismatch_and_the_watchdogs_abort() {
        let kind = |t: &str| analyse(t).failures.first().map(|x| x.kind);
        for l in [
            "[rank0]: RuntimeError: No CUDA GPUs are available",
            "RuntimeError: CUDA error: no CUDA-capable device is detected",
            "h:1:1 [0] init.cc:1 NCCL WARN Cuda failure 'no CUDA-capable device is detected'",
            "ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
        ] {
            assert_eq!(kind(&format!("{l}\n")), Some(Failure::NoGpu), "{l}");
        }
        let m = "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1, OpType=ALLGATHER), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=1, OpType=ALLREDUCE).\n";
        assert_eq!(kind(m), Some(Failure::CollectiveMismatch));
        // NCCL's own (warns.tsv, net_socket.cc 2.23+): its class is the same finding
        let t = "h:1:9 [0] transport/net_socket.cc:567 NCCL WARN NET/Socket : peer 10.0.0.2<4> message truncated : receiving 524288 bytes instead of 65536. If you believe your socket network is in a healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks\n";
        assert_eq!(kind(t), Some(Failure::CollectiveMismatch));
        let exit = "E1206 07:48:59.854000 935 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: -6) local_rank: 1 (pid: 957) of binary: /usr/bin/python\n";
        assert_eq!(kind(exit), Some(Failure::Crash));
        let announced = format!("[rank1]:[E1206 07:48:59.829828404 ProcessGroupNCCL.cpp:764] [Rank 1] To avoid data inconsistency, we are taking the entire process down.\n{exit}");
        let f = analyse(&announced);
        assert_eq!((f.failures[0].kind, f.failures[0].code), (Failure::WorkerExit, Some(-6)));
        // a SIGSEGV after the same line is still a crash
        assert_eq!(kind(&announced.replace("exitcode: -6", "exitcode: -11")), Some(Failure::Crash));
    }

    #[test]
    fn warns_are_bounded() {
        let mut a = Analyser::new();
        for i in 0..5000 {
            a.line(&format!("h:1:2 [0] x.cc:1 NCCL WARN something odd {i}"));
        }
        let f = a.finish();
        assert_eq!(f.warns.len(), MAX_WARNS);
        assert_eq!(f.warns_dropped, 5000 - MAX_WARNS);
    }

    #[test]
    fn rendezvous_failures_by_pytorchs_formats() {
        // c10d/socket.cpp and TCPStore's server, each release's wording; torchrun's handlers by type
        let cases = [
            ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29911, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use", 1),
            ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).", 1),
            ("torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of (node-0, 29500). The client socket has failed to connect to node-0:29500 (errno: 111 - Connection refused).", 2),
            ("[rank3]: torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (10.0.0.1, 29500).", 2),
            ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.", 3),
            ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", 4),
            ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.", 4),
            // ProcessGroupNCCL's broadcastUniqueNCCLID, 2.1+ (DistBackendError) and before (RuntimeError)
            ("torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout. This may indicate a possible application crash on rank 0 or a network set up issue.", 5),
            ("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer", 5),
            // c10d's store client and socket.cpp's warning before it
            ("torch.distributed.DistNetworkError: Socket Timeout", 6),
            // the store-wait warning, then the exception naming what was waited for (device set
            // 12's real pair): the exception's code
            ("[W1206 17:16:02.388480449 socket.cpp:494] [c10d] waitForInput: socket SocketImpl(fd=45, addr=[localhost]:36204, remote=[localhost]:30495) timed out after 15000ms\n[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 15000ms, keys: ", 5),
            ("[W326 22:36:28.884350096 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=60, addr=[::ffff:10.0.0.2]:52894, remote=[10.0.0.1]:2490) timed out after 300000ms", 6),
        ];
        for (l, code) in cases {
            let f = analyse(&format!("{l}\n"));
            let x = f.failures.iter().find(|x| x.kind == Failure::Rendezvous);
            assert_eq!(x.map(|x| x.code), Some(Some(code)), "{l}");
            assert!(f.nccl_lines > 0, "{l}");
        }
        // c10d's warning that it could not look up the client's hostname is no failure
        let f = analyse("[W1206 10:16:49.709806710 socket.cpp:207] [c10d] The hostname of the client socket cannot be retrieved. err=-3\n");
        assert!(f.failures.is_empty(), "{:?}", f.failures);
        assert_eq!(f.nccl_lines, 0);
        assert!(f.launcher.is_some());
    }

    #[test]
    fn an_error_returned_after_an_unknown_warning_is_marked() {
        // a plugin's WARN no table holds, then its NCCLCHECK trace with ncclInvalidArgument
        let w = "h:1:1 [0] /build/nccl-shim/src/checker.cc:101 NCCL WARN shim mismatch enforced: X=8 (expected 4)\n";
        let f = analyse(&format!("{w}h:1:1 [0] NCCL INFO NCCL/NET (shim) /build/nccl-shim/src/checker.cc:132 -> 4\n"));
        assert!(f.error_after_unknown_warning);
        // without the trace, or with ncclInProgress, it is not
        assert!(!analyse(w).error_after_unknown_warning);
        assert!(!analyse(&format!("{w}h:1:1 [0] NCCL INFO init.cc:1 -> 7\n")).error_after_unknown_warning);
        // another process's trace says nothing of this warning (review 10)
        assert!(!analyse(&format!("{w}g:2:2 [1] NCCL INFO misc/nvmlwrap.cc:120 -> 2\n")).error_after_unknown_warning);
    }

    #[test]
    fn an_hca_skipped_before_the_device_list_is_not_the_failure() {
        // net_ib.cc: `NET/IB : Unable to open device %s` then `continue`; the process's
        // `NET/IB : Using [0]…` after it lists the HCAs it kept
        let skip = "h:7:7 [1] transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_58\n";
        let kept = "h:7:7 [1] NCCL INFO NET/IB : Using [0]mlx5_1:1/RoCE [1]mlx5_18:1/RoCE ; OOB eth0:10.0.0.1<0>\n";
        let f = analyse(&format!("{skip}{kept}"));
        assert!(f.failures.iter().all(|x| x.init_completed_after), "{:?}", f.failures);
        // another process's list says nothing of this one
        let f = analyse(&format!("{skip}{}", kept.replace("h:7:7", "h:8:8")));
        assert!(f.failures.iter().any(|x| !x.init_completed_after), "{:?}", f.failures);
    }

    #[test]
    fn a_warning_before_nccl_tests_table_header_did_not_stop_the_init() {
        // nvmlwrap.cc's WARN, then the header nccl-tests prints after its communicators' init
        let w = "[2026-02-24 10:44:30] jetson:27998:27998 [0] misc/nvmlwrap.cc:164 NCCL WARN nvmlDeviceGetP2PStatus(0,0,NVML_P2P_CAPS_INDEX_READ) failed: Not Supported\n";
        let head = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
        let run = "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0\n#  Rank  0 Group  0 Pid  27998 on     jetson device  0 [0000:00:00] Orin\n";
        assert!(analyse(&format!("{run}{w}{head}")).failures.iter().all(|x| x.init_completed_after));
        assert!(analyse(w).failures.iter().any(|x| !x.init_completed_after));
        // review 11: a header with no rank lines (quoted), another process's run, or a later
        // run excuses nothing
        assert!(analyse(&format!("{w}{head}")).failures.iter().any(|x| !x.init_completed_after));
        let other = run.replace("27998", "31000");
        assert!(analyse(&format!("{w}{other}{head}")).failures.iter().any(|x| !x.init_completed_after));
    }

    #[test]
    fn nccl_2_3s_socket_wording() {
        // net_socket.cu's `NET : Using interface %s`, socket.h's `Call to connect timeout : %s`
        let f = analyse("h:1:1 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>\nh:1:2 [1] include/socket.h:361 NCCL WARN Call to connect timeout : Connection refused\n");
        assert_eq!(f.socket_ifs, ["lo"]);
        assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::SocketConnect));
        // CuPy's NcclError, as Ray relays it
        let f = analyse("jax._src.traceback_util.UnfilteredStackTrace: ray.exceptions.RayTaskError(NcclError): ray::W.init() (pid=1, ip=10.0.0.1)\n");
        assert!(!f.errors.is_empty() && f.nccl_lines > 0);
    }

    #[test]
    fn nvls_set_up_is_read_on_both_paths() {
        // init.cc's and the channel summary's INFO lines (2.17+)
        for l in [
            "h:1:1 [0] NCCL INFO NVLS multicast support is available on dev 0\n",
            "h:1:1 [0] NCCL INFO Connected NVLS tree\n",
            "h:1:1 [0] NCCL INFO 16 coll channels, 16 collnet channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer\n",
        ] {
            assert!(analyse(l).nvls_used, "{l}");
        }
        let none = "h:1:1 [0] NCCL INFO 16 coll channels, 0 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer\n";
        assert!(!analyse(none).nvls_used);
    }

    #[test]
    fn a_retry_or_store_wait_that_init_completed_after_is_not_the_failure() {
        // socket.cc prints `(N/N)` before its last attempt, which may connect; PyTorch's
        // store-based barrier retries after each `waitForInput … timed out` slice
        let retry = "h:1:2 [0] NCCL INFO socketPollConnect: connect to 10.0.0.2<43117> returned Connection refused, retrying (34/34) after sleep for 3400 msec\n";
        let wait = "[rank9]:[W326 22:36:28.884350096 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=60, addr=[::ffff:10.0.0.2]:52894, remote=[10.0.0.1]:29500) timed out after 10000ms\n";
        let done = "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 commId 0x7 - Init COMPLETE\n";
        for first in [retry, wait] {
            let f = analyse(&format!("{first}{done}"));
            assert!(f.failures.iter().all(|x| x.init_completed_after), "{:?}", f.failures);
            let f = analyse(first);
            assert!(f.failures.iter().any(|x| !x.init_completed_after), "{:?}", f.failures);
        }
    }

    #[test]
    fn a_connect_at_its_last_retry_is_a_failure() {
        // socket.cc: INFO "socketPollConnect: connect returned %s, retrying (%d/%ld) after sleep
        // for %u msec"; the last allowed retry is a failure, an earlier one not yet
        let at = |i: u32| {
            format!("h:1:2 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying ({i}/34) after sleep for 3400 msec\n")
        };
        assert_eq!(analyse(&at(34)).failures.first().map(|x| x.kind), Some(Failure::SocketConnect));
        assert!(analyse(&at(21)).failures.is_empty());
        // the later wording names the address
        let to = "h:1:2 [0] NCCL INFO socketPollConnect: connect to 10.0.0.2<43117> returned Connection refused, retrying (5/5) after sleep for 500 msec\n";
        assert_eq!(analyse(to).failures.first().map(|x| x.kind), Some(Failure::SocketConnect));
    }

    /// Review 17: NCCL_HOSTID differs on every node by design; 300 nodes' values must not crowd
    /// out the variables reported after them, and the values a variable had stay bounded.
    #[test]
    fn the_environment_read_stays_bounded_and_keeps_what_matters() {
        let mut t = String::new();
        for i in 0..300 {
            t += &format!("n{i}:{i}:1 [0] NCCL INFO NCCL_HOSTID set by environment to node{i}\n");
            t += &format!("n{i}:{i}:1 [0] NCCL INFO NCCL_PROTO set by environment to v{i}\n");
        }
        t += "n7:7:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n";
        let f = analyse(&t);
        assert_eq!(f.env("NCCL_IB_DISABLE"), Some("1"));
        assert_eq!(f.env("NCCL_HOSTID"), Some("node0"));
        assert!(!f.env_more.iter().any(|(n, _)| n == "NCCL_HOSTID"));
        assert_eq!(f.env_more.iter().filter(|(n, _)| n == "NCCL_PROTO").count(), 3);
    }

    #[test]
    fn a_proxy_call_that_failed_to_connect_is_a_connection_not_a_death() {
        // proxy.cc: WARN("Proxy Call to rank %d failed (%s)", …, ncclProxyMsgTypeStr[type]);
        // `Connect` is the proxy connecting a channel to its peer
        let f = analyse("h:1:2 [0] proxy.cc:1 NCCL WARN Proxy Call to rank 7 failed (Connect)\n");
        assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::SocketConnect));
        let f = analyse("h:1:2 [0] proxy.cc:1 NCCL WARN Proxy Call to rank 3 failed (Setup)\n");
        assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::RemoteExit));
    }

    #[test]
    fn a_debuggers_frame_in_the_watchdog_is_no_timeout() {
        // gdb's backtrace of a live watchdog thread (a hang being looked at) is no c10::Error
        let gdb = "#3  0x00007f in c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) () from /x/libtorch_cuda.so\n";
        assert!(analyse(gdb).failures.is_empty());
    }

    #[test]
    fn process_group_watchdog_failures_by_pytorchs_formats() {
        // ProcessGroupNCCL.cpp (2.3+): `%s failure detected by watchdog at work sequence id: %d
        // PG status: last enqueued work: %d, last completed work: %d` (logPrefix first), and the
        // dump signal other ranks get after one rank's timeout
        for l in [
            "[rank1]:[E909 08:45:30.126335825 ProcessGroupNCCL.cpp:2252] [PG ID 2 PG GUID 3 Rank 1]  failure detected by watchdog at work sequence id: 40231 PG status: last enqueued work: 40267, last completed work: 40230",
            "[rank6]:[E909 08:45:31.970959174 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0 Rank 6] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info.",
            "[rank0]:[E709 17:05:38.482119928 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from rank 3 and we will try our best to dump the debug info.",
            "[rank5]:[E901 05:20:03.110823792 ProcessGroupNCCL.cpp:1685] [PG ID 0 PG GUID 0(default_pg) Rank 5] Observed flight recorder dump signal from another rank via TCPStore.",
            "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f in /x/libtorch_cuda.so)",
        ] {
            let f = analyse(&format!("{l}\n"));
            assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::CollectiveTimeout), "{l}");
        }
        // its hint about the flight recorder is no failure
        let f = analyse("[rank1]:[E909 08:45:30.126354868 ProcessGroupNCCL.cpp:732] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled.\n");
        assert!(f.failures.is_empty(), "{:?}", f.failures);
    }

    #[test]
    fn the_launchers_own_lines_make_a_thin_log_not_nccls() {
        let f = analyse("W1206 10:16:49.271000 643 torch/distributed/run.py:851] Setting OMP_NUM_THREADS environment variable for each process to be 1\n");
        assert_eq!(f.launcher.as_deref().map(|l| l.contains("run.py:851]")), Some(true));
        // a path in prose or a script is not the launcher's logger
        assert!(analyse("see torch/distributed/ for the code\n").launcher.is_none());
        // after NCCL's first line it is not kept
        let f = analyse("h:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\nW1206 10:16:49.271000 643 torch/distributed/run.py:851] x\n");
        assert!(f.launcher.is_none());
    }

    #[test]
    fn expert_parallel_kernels_that_timed_out_waiting_on_a_peer() {
        // NCCL EP's and DeepEP's device-side printf before trap()
        for l in [
            "Warning: NCCL EP timeout for dispatch receive, rank 2, local_expert_idx 37, src_rank 0",
            "Warning: NCCL EP timeout for combine receive, rank 0, src_rank 1",
            "DeepEP timeout for dispatch senders, rank 3, responsible_channel = 5",
            "Warning: DeepEP timeout for barrier, rank 1, dst_rank 0",
        ] {
            let f = analyse(&format!("{l}\n"));
            assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::CollectiveTimeout), "{l}");
        }
    }

    #[test]
    fn tvm_ffis_segfault_banner_is_a_crash() {
        let f = analyse(
            "!!!!!!! Segfault encountered !!!!!!!\n  File \"misc/cudawrap.cc\", line 92, in ncclCuMemHostEnable()\n",
        );
        assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::Crash), "{:?}", f.failures);
        // a quoted copy (`> ` of Markdown) too
        let f = analyse("> !!!!!!! Segfault encountered !!!!!!!\n");
        assert_eq!(f.failures.first().map(|x| x.kind), Some(Failure::Crash), "{:?}", f.failures);
    }

    #[test]
    fn the_shells_report_of_a_signal() {
        // bash's `%s: line %d: %5d %s` for a command of the script that a signal ended
        let cases = [
            ("/var/spool/slurmd/job1/slurm_script: line 12:   957 Aborted                 (core dumped) ./all_reduce_perf", Some(6)),
            ("run.sh: line 3: 12 Killed                  python train.py", Some(9)),
            ("run.sh: line 3: 12 Bus error               (core dumped) python train.py", Some(7)),
            ("run.sh: line 3: foo: command not found", None),
            ("run.sh: line 3: 12 Done                    python train.py", None),
            ("see line 3: 12 Aborted", None),
        ];
        for (l, want) in cases {
            assert_eq!(shell_signal(l), want, "{l}");
        }
    }

    #[test]
    fn an_interactive_shells_report_of_a_signal() {
        // bash's `%s%s` for its foreground command (strsignal, ` (core dumped)`), and its
        // job-control notice `[%d]%c  %-*s %s` (status, then the command)
        let cases = [
            ("Aborted (core dumped)", Some(6)),
            ("Aborted", Some(6)),
            ("Killed", Some(9)),
            ("Bus error (core dumped)", Some(7)),
            ("Floating point exception (core dumped)", Some(8)),
            ("[1]+  Aborted                 (core dumped) python train.py", Some(6)),
            ("[2]-  Killed                  torchrun --nproc-per-node 8 train.py", Some(9)),
            // a helper the script killed, a stop from outside, prose that begins with the words
            ("[1]+  Killed                  nvidia-smi dmon", None),
            // review 8: an MPI rank's prefix is no notice; helpers killed by the script
            ("[0] Quitting training loop", None),
            ("[1] Aborted attempt 3, retrying", None),
            ("[0] Illegal instructions: 0", None),
            ("[1]+  Killed                  python gpu_monitor.py", None),
            ("[1]+  Killed                  python3 -m http.server 8000", None),
            ("[1]+  Killed                  srun --overlap --jobid 7 nvidia-smi dmon", None),
            ("Quit", None),
            ("Quit (core dumped)", None),
            ("Terminated", None),
            ("Killed 3 stale workers", None),
            ("Aborted by user: see above", None),
            ("[rank0]: Aborted", None),
        ];
        for (l, want) in cases {
            assert_eq!(bare_signal(l), want, "{l}");
        }
        // after a healthy init and teardown, the shell's report is a crash (exit 0 was false)
        let log = "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 60 - Init COMPLETE\n\
                   h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 60 - Destroy COMPLETE\n\
                   Aborted (core dumped)\n";
        let ungated = |t: &str| {
            let mut a = Analyser::ungated();
            t.lines().for_each(|l| a.line(l));
            a.finish()
        };
        for f in [analyse(log), ungated(log)] {
            assert!(f.failures.iter().any(|x| x.kind == Failure::Crash), "{:?}", f.failures);
        }
        // before NCCL's first line it is another command of a pasted session (review 8: pip's
        // build killed by the OOM killer, then a healthy job)
        let before = format!("Killed\n{log}").replace("Aborted (core dumped)\n", "");
        assert!(analyse(&before).failures.is_empty());
        // Slurm's SIGKILL after its stop (time limit, scancel) is the stop's, not a crash
        let stop = log.replace(
            "Aborted (core dumped)\n",
            "slurmstepd: error: *** STEP 4242.0 ON n013 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***\nKilled\n",
        );
        let kinds: Vec<Failure> = analyse(&stop).failures.iter().map(|x| x.kind).collect();
        assert_eq!(kinds, [Failure::SlurmStopped]);
    }

    #[test]
    fn a_killed_command_is_the_jobs_by_its_program() {
        // review 9: wrappers, the job's own CLIs, arguments that hold a helper's word
        for c in [
            "nohup python train.py --lr 1e-4",
            "python train.py --report_to tensorboard",
            "torchrun --nproc-per-node 8 train.py --config configs/detail.yaml",
            "numactl --cpunodebind=0 python train.py",
            "apptainer exec img.sif torchrun train.py",
            "llamafactory-cli train examples/sft.yaml",
            "srun -n 8 ./build/all_reduce_perf -b 8 -e 8G",
            "$CMD",
        ] {
            assert!(job_command(c), "{c}");
        }
        // a helper the script killed (reviews 7 and 8)
        for c in [
            "nvidia-smi dmon",
            "python gpu_monitor.py",
            "python3 -m http.server 8000",
            "srun --overlap --jobid 7 nvidia-smi dmon",
            "tail -f train.log",
        ] {
            assert!(!job_command(c), "{c}");
        }
        // a status as wide as the notice's column has no padding (bash in a pty)
        assert_eq!(bare_signal("[1]+  Floating point exception(core dumped) python train.py"), Some(8));
        assert_eq!(bare_signal("[1]+  CPU time limit exceededpython train.py"), Some(24));
        // nccl-tests' header begins the job as NCCL's first line does (NCCL_DEBUG unset)
        let t = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\nBus error (core dumped)\n";
        assert_eq!(analyse(t).failures.iter().map(|x| x.kind).collect::<Vec<_>>(), [Failure::Crash]);
    }

    /// torchrun's ChildFailedError (launcher/api.py raises it for a worker that failed) is a
    /// worker's exit where its table of failures was cut; where the table is there, its rows say
    /// (a -15 is a stop from outside, not the failure).
    #[test]
    fn torchruns_child_failed_error_without_its_table() {
        let exc =
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n======\ntrain.py FAILED\n------\n";
        let kinds = |t: &str| analyse(t).failures.iter().map(|x| (x.kind, x.code)).collect::<Vec<_>>();
        assert_eq!(kinds(exc), [(Failure::WorkerExit, None)]);
        let table = format!("{exc}Root Cause (first observed failure):\n[0]:\n  exitcode  : 1 (pid: 646)\n");
        assert_eq!(kinds(&table), [(Failure::WorkerExit, Some(1))]);
        let stopped = format!("{exc}Root Cause (first observed failure):\n[0]:\n  exitcode  : -15 (pid: 646)\n");
        assert_eq!(kinds(&stopped), []);
        // a quote of the name in prose, not the exception's line
        assert_eq!(
            kinds("we saw a ChildFailedError: torch.distributed.elastic.multiprocessing.errors.ChildFailedError: x\n"),
            []
        );
    }

    /// The node count the launcher was told, from its producers' own words: torchrun's flags
    /// (run.py's `--nnodes`, `<minimum_nodes>:<maximum_nodes>`) and report (launcher/api.py's
    /// `  min_nodes        : %(min_nodes)s`), Slurm's `-N`/`--nodes`, DeepSpeed's and
    /// accelerate's flags; two lines that disagree state nothing.
    #[test]
    fn the_launchers_node_count() {
        let n = |l: &str| launcher_nodes(l).map(|(n, ..)| n);
        assert_eq!(n("(ddp) wbl@ubuntu02:~$ torchrun --nproc_per_node 1 --nnodes 2 --node_rank 1 --master_addr \"172.17.141.98\" train.py"), Some(2));
        assert_eq!(n("python -m torch.distributed.run --nnodes=4 --nproc-per-node=8 train.py"), Some(4));
        assert_eq!(n("python3 -m torch.distributed.launch --nnodes=2:2 x.py"), Some(2));
        assert_eq!(n("torchrun --standalone --nproc-per-node 8 x.py"), Some(1));
        assert_eq!(n("torchrun --nnodes=1:4 --rdzv-backend=c10d x.py"), None);
        assert_eq!(n("torchrun --nnodes $NNODES x.py"), None);
        // the program's own flags are not the launcher's
        assert_eq!(n("torchrun --standalone train.py --nnodes 2"), Some(1));
        assert_eq!(
            n("[2024-03-12 08:22:45,549] torch.distributed.launcher.api: [INFO]   min_nodes        : 2"),
            Some(2)
        );
        assert_eq!(n("  min_nodes        : 1"), Some(1));
        assert_eq!(n("    autoscaling: {min_nodes: 2, max_nodes: 8}"), None);
        assert_eq!(n("srun -N2 --ntasks-per-node=1 bash run.sh"), Some(2));
        assert_eq!(n("srun --nodes=2-4 --exclusive python x.py"), Some(2));
        assert_eq!(n("srun -p gpu --nodes 2 python x.py"), Some(2));
        assert_eq!(n("deepspeed --num_nodes 2 --num_gpus 8 train.py"), Some(2));
        assert_eq!(n("accelerate launch --multi_gpu --num_machines 2 --machine_rank 0 x.py"), Some(2));
        // review 27: another program's -N after srun's options, a comment, an allocation
        assert_eq!(n("srun --mpi=pmix numactl -N 2 --membind=2 python x.py"), None);
        assert_eq!(n("srun --exclusive numactl -N 2 python x.py"), None);
        assert_eq!(n("# srun -N 2 python x.py"), None);
        assert_eq!(n("# For multi-node: torchrun --nnodes 2 --node-rank $R x.py"), None);
        // an allocation's count is the most a step can use
        let k = |l: &str| launcher_nodes(l).map(|(n, _, k)| (n, k));
        assert_eq!(k("#SBATCH --nodes=2"), Some((2, Stated::AtMost)));
        assert_eq!(k("#SBATCH -N 2-4"), Some((4, Stated::AtMost)));
        assert_eq!(k("SLURM_JOB_NUM_NODES=2"), Some((2, Stated::AtMost)));
        assert_eq!(k("salloc -N 2 --gres=gpu:8"), Some((2, Stated::AtMost)));
        assert_eq!(k("## SBATCH -N 2"), None);
        // no launcher's words: prose, another program's flag, a value that is no count
        assert_eq!(n("we ran with 2 nodes and --nnodes 2 in the docs"), None);
        assert_eq!(n("mpirun -N 8 ./all_reduce_perf"), None);
        assert_eq!(n("srun --nodes=all x"), None);
        let f = analyse("torchrun --nnodes 2 x.py\nh:1:2 [0] NCCL INFO Using network Socket\n");
        assert_eq!(f.launcher_nodes.map(|(n, _)| n), Some(2));
        let f = analyse("srun -N 2 x\nsrun -N 1 x\nh:1:2 [0] NCCL INFO Using network Socket\n");
        assert_eq!(f.launcher_nodes, None);
        // a step's count within its allocation's, and one over it (review 27: an allocation of
        // one beside a command for two; a step on one node of an allocation of two)
        let nodes =
            |t: &str| analyse(&format!("{t}\nh:1:2 [0] NCCL INFO Using network Socket\n")).launcher_nodes.map(|x| x.0);
        assert_eq!(nodes("#SBATCH -N 2\ntorchrun --nnodes 2 x.py"), Some(2));
        assert_eq!(nodes("SLURM_NNODES=1\ntorchrun --nnodes 2 x.py"), None);
        assert_eq!(nodes("SLURM_JOB_NUM_NODES=2\ntorchrun --standalone x.py"), Some(1));
        assert_eq!(nodes("SLURM_JOB_NUM_NODES=2"), None);
        assert_eq!(nodes("SLURM_NNODES=1\n  min_nodes        : 2"), None);
        // torchrun's report of at least one beside a command's two: they disagree (review 27)
        let f = analyse("torchrun --nnodes 2 x.py\n  min_nodes        : 1\nh:1:2 [0] NCCL INFO Using network Socket\n");
        assert_eq!(f.launcher_nodes, None);
        // its report alone: at least one is no count; at least two is
        let f = analyse("  min_nodes        : 1\nh:1:2 [0] NCCL INFO Using network Socket\n");
        assert_eq!(f.launcher_nodes, None);
        let f = analyse("  min_nodes        : 2\ntorchrun --nnodes 2 x.py\nh:1:2 [0] NCCL INFO x\n");
        assert_eq!(f.launcher_nodes.map(|(n, h)| (n, h.contains("--nnodes"))), Some((2, true)));
    }

    #[test]
    fn warnings_that_quote_cuda_or_shm_failures() {
        // NCCL 2.7's p2p.cc (a release the table does not hold) quoting cudaGetErrorString
        let f = analyse("h:1:2 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices\n");
        assert_eq!(f.failures.iter().map(|x| x.kind).collect::<Vec<_>>(), [Failure::CudaFailure]);
        // include/shm.h before 2.12: the syscall's row, refined to /dev/shm
        let f =
            analyse("h:1:2 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n");
        assert_eq!(f.failures.iter().map(|x| x.class.as_deref()).collect::<Vec<_>>(), [Some("shm-space")]);
        // any call that failed with EMFILE is the descriptor limit (device set 11, `ulimit -n 160`)
        for w in [
            "misc/socket.cc:552 NCCL WARN Call to socket failed: Too many open files",
            "misc/socket.cc:458 NCCL WARN socketTryAccept: Accept failed: Too many open files",
        ] {
            let f = analyse(&format!("h:1:2 [0] {w}\n"));
            assert_eq!(f.failures.iter().map(|x| x.class.as_deref()).collect::<Vec<_>>(), [Some("fd-limit")], "{w}");
        }
        // an unknown warning without CUDA's words stays unknown
        let f = analyse("h:1:2 [0] foo.cc:1 NCCL WARN frobnication failed\n");
        assert_eq!(f.failures.iter().map(|x| x.kind).collect::<Vec<_>>(), [Failure::UnknownWarning]);
    }

    /// torch.multiprocessing.spawn's words after a process failed (spawn.py, ProcessContext.join).
    #[test]
    fn a_spawned_process_that_failed() {
        for (l, k) in [
            ("W0918 10:57:42.299000 1617 torch/multiprocessing/spawn.py:169] Terminating process 1683 via signal SIGTERM", Failure::WorkerExit),
            ("-- Process 3 terminated with the following error:", Failure::WorkerExit),
            ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGSEGV", Failure::Crash),
            ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with exit code 3", Failure::WorkerExit),
        ] {
            let f = analyse(&format!("{l}\n"));
            assert_eq!(f.failures.iter().map(|x| x.kind).collect::<Vec<_>>(), [k], "{l}");
        }
        // the words in a sentence of another program are not spawn's; a stop from outside
        // (SIGTERM: a time limit, a preemption) is no worker's failure
        for l in [
            // the exception's name line alone: its message (a line of its own) says which
            "torch.multiprocessing.spawn.ProcessRaisedException: ",
            "App <tech> exited with code 1 via signal SIGTERM",
            "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGTERM",
            "process 0 terminated with exit code 0",
        ] {
            let f = analyse(&format!("{l}\n"));
            assert!(f.failures.is_empty(), "{l}: {:?}", f.failures);
        }
    }

    #[test]
    fn nccl_that_did_not_load() {
        // XLA's relay of TensorFlow/XLA's NCCL stub; the loader's words through Python
        for l in [
            "INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:134: NCCL operation ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not work.. Last NCCL warning(error) log entry (may be unrelated) 'Unable to load NCCL library. Multi-GPU collectives will not work.'.",
            "ImportError: libnccl.so.2: cannot open shared object file: No such file or directory",
            "OSError: libnccl.so.2: cannot open shared object file: No such file or directory",
        ] {
            let f = analyse(&format!("{l}\n"));
            assert!(f.failures.iter().any(|x| x.kind == Failure::NcclNotLoaded), "{l}: {:?}", f.failures);
        }
        // another library's missing file is not NCCL's
        let f = analyse("ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n");
        assert!(!f.failures.iter().any(|x| x.kind == Failure::NcclNotLoaded));
        // the pynccl wrappers' logger.error before `raise e` (vLLM, SGLang: pynccl_wrapper.py),
        // which most callers catch to disable the wrapper: a fact, not a failure (review 21)
        for (l, path) in [
            ("(VllmWorker rank=3 pid=44710) ERROR 08-20 09:48:31 [pynccl_wrapper.py:229] Failed to load NCCL library from /opt/nccl/lib/libnccl.so.2. It is expected if you are not running on NVIDIA/AMD GPUs.Otherwise, the nccl library might not exist", "/opt/nccl/lib/libnccl.so.2"),
            ("[2025-01-01 00:00:00] Failed to load NCCL library from libnccl.so.2 .It is expected if you are not running on NVIDIA/AMD/MTHREADS GPUs.", "libnccl.so.2"),
        ] {
            let f = analyse(&format!("{l}\n"));
            assert!(f.failures.is_empty(), "{l}: {:?}", f.failures);
            assert_eq!(f.pynccl_unloaded.as_deref(), Some(path), "{l}");
        }
    }

    /// A net plugin that is there but does not load, in every wording NCCL's loaders print
    /// (src/net.cc 2.19–2.22, src/plugin/plugin_open.cc 2.23+), against the absent plugin that
    /// is NCCL's normal case.
    #[test]
    fn a_net_plugin_that_does_not_load_is_a_failure_an_absent_one_is_not() {
        let v = "/opt/amazon/efa/lib/libfabric.so.1: version `FABRIC_1.7' not found (required by /x/libnccl-net.so)";
        let dep = "libfabric.so.1: cannot open shared object file: No such file or directory";
        let broken = [
            // 2.19–2.20: "NET/Plugin : dlerror=%s No plugin found (%s), using internal implementation"
            format!("NET/Plugin : dlerror={v} No plugin found (libnccl-net.so), using internal implementation"),
            // 2.19–2.20: "NET/Plugin : Plugin load returned %d : %s."
            format!("NET/Plugin : Plugin load returned 2 : {v}."),
            // 2.21–2.22: "… returned %d : %s when loading %s", "… : %s : when loading %s", "Most recent …"
            format!("NET/Plugin: Plugin load returned 2 : {v} when loading libnccl-net.so"),
            format!("NET/Plugin: Plugin load returned 2 : {v} : when loading libnccl-net-gIB.so"),
            format!("NET/Plugin: Most recent plugin load returned 2 : {v}. All attempts to load 'a b' also failed."),
            // 2.23–2.25: "NET/Plugin: %s" (the loader's error); 2.26+: "NET/Plugin: %s: %s"
            format!("NET/Plugin: {v}"),
            format!("NET/Plugin: libnccl-net.so: {v}"),
            format!("NET/Plugin: libnccl-net.so: {dep}"),
            "NET/Plugin: libnccl-net.so: /tmp/p/libnccl-net.so: file too short".into(),
            "NET/Plugin: libnccl-net.so: /x/libnccl-net.so: undefined symbol: fi_getinfo".into(),
            "NET/Plugin: libnccl-net.so: /x/libnccl-net.so: wrong ELF class: ELFCLASS32".into(),
        ];
        for l in &broken {
            let f = analyse(&format!("h:1:1 [0] NCCL INFO {l}\n"));
            assert_eq!(f.failures.iter().map(|x| x.kind).collect::<Vec<_>>(), vec![Failure::NetPluginBroken], "{l}");
            assert!(f.failures[0].line.starts_with("NET/Plugin"), "{l}");
        }
        let absent = [
            "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation",
            "NET/Plugin : No plugin found, using internal implementation",
            "NET/Plugin: No plugin found (libnccl-net.so)",
            "NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so",
            "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
            "NET/Plugin: Could not find: libnccl-net.so",
            "NET/Plugin: Using internal net plugin.",
            "NET/Plugin: Plugin load returned 0 : (null).",
            "NET/Plugin : dlerror=librccl-net.so: cannot open shared object file: No such file or directory No plugin found (librccl-net.so), using internal implementation",
            // other plugin kinds: a tuner or profiler that does not load costs no network
            "TUNER/Plugin: libnccl-tuner.so: /x/libnccl-tuner.so: undefined symbol: foo",
            // 2.21 tries NCCL_NET_PLUGIN's bare value first (errno other than ENOENT)
            "NET/Plugin: Plugin load returned 17 : ofi: cannot open shared object file: No such file or directory when loading ofi",
            // a long path's error cut by NCCL's 255-character copy
            "NET/Plugin: /opt/very/long/path/to/plugins/libnccl-net-x.so: /opt/very/long/path/to/plugins/libnccl-net-x.so: cannot open shared object file: No such f",
            "NET/Plugin: /opt/p/libmine.so: /opt/p/libmine.so: cannot open shared object file: No such file or directory",
        ];
        for l in absent {
            let f = analyse(&format!("h:1:1 [0] NCCL INFO {l}\n"));
            assert!(f.failures.is_empty(), "{l}: {:?}", f.failures);
        }
    }
}
