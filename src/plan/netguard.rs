//! The socket-fallback guard: what network a job should run on, whether to pin `NCCL_NET` so
//! NCCL refuses to start instead of falling back, and the verdict on what NCCL logged at init.
//!
//! NCCL tries the external plugin (`libnccl-net.so` or `NCCL_NET_PLUGIN`), then its internal
//! `IB`, then `Socket`, and takes the first that initialises with a device — silently (spec
//! nccl-rules.md §2, `plugin/net.cc`). `NCCL_NET=IB` names the one it must use: if IB cannot
//! start, init fails with "Failed to initialize any NET plugin" (`init.cc:2117`). That is only
//! right when no external plugin is meant to carry the traffic (HPC-X `IBext`, AWS libfabric,
//! Google `gIB`): pinning `IB` would skip it. So the pin is set only when no plugin is in play,
//! and the log watch (`cmd::watch`) covers every case, plugins included.

use super::verify::{self, CeilingInputs};
use super::Plan;
use crate::nccl::log::{Failure, LogFacts};
use crate::probe::Node;

/// What the user declared with `--expect-net`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ExpectNet {
    /// InfiniBand/RoCE when this node has healthy HCAs and the job spans nodes.
    #[default]
    Auto,
    /// InfiniBand/RoCE whatever the node shows; sockets stop the job.
    Ib,
    /// Sockets are intended: nothing is watched or pinned.
    Socket,
}

/// Does this job have to run its inter-node traffic over InfiniBand/RoCE?
pub fn expects_rdma(plan: &Plan, nnodes: usize, expect: ExpectNet) -> bool {
    match expect {
        ExpectNet::Ib => true,
        ExpectNet::Socket => false,
        ExpectNet::Auto => nnodes > 1 && !plan.hcas.is_empty(),
    }
}

/// Whether to set `NCCL_NET=IB`, and why (or why not), given the job's variables and where a
/// plugin library was found (`plugin`: its path, from a look in the library directories).
pub fn pin(
    expect_rdma: bool,
    allow_fallback: bool,
    var: impl Fn(&str) -> Option<String>,
    plugin: Option<&str>,
) -> Result<String, String> {
    if !expect_rdma {
        return Err("the job is not expected to use InfiniBand/RoCE".into());
    }
    if allow_fallback {
        return Err("socket fallback allowed".into());
    }
    if let Some(v) = var("NCCL_NET") {
        return Err(format!("NCCL_NET={v} set by the user"));
    }
    match var("NCCL_NET_PLUGIN").as_deref().map(str::trim) {
        Some("none") => {}
        Some(p) if !p.is_empty() => return Err(format!("NCCL_NET_PLUGIN={p}: an external plugin carries the traffic")),
        _ => {}
    }
    if let Some(p) = plugin {
        return Err(format!("net plugin {p} present: NCCL would prefer it, and NCCL_NET=IB would skip it"));
    }
    Ok("InfiniBand/RoCE expected and no net plugin in play: NCCL fails at init instead of falling back to sockets"
        .into())
}

/// The pin for a job seen from inside Slurm (the enroot hook, the TaskProlog), where `var`
/// looks up the job's variables: several nodes (`SLURM_JOB_NUM_NODES`), healthy ports the job
/// can use (`ports_usable`), `IBWIRE_EXPECT_NET`, and neither `IBWIRE_ALLOW_SOCKET_FALLBACK`
/// nor the config's `launch.allow_socket_fallback`. `plugin` is where a net plugin was found.
/// What a job's device selection leaves NCCL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// Healthy ports are exposed.
    Usable,
    /// The node has healthy ports but the selection exposes none by mistake (a typo, unknown
    /// entries): a multi-node job would crawl on sockets without a word, so it is pinned too and
    /// fails NCCL's init instead.
    Emptied,
    /// Nothing to use: none on purpose (`none`/`void`), or no healthy port on the node.
    Nothing,
}

pub fn pin_for_job(
    plan: &Plan,
    exposure: Exposure,
    config: &crate::config::Config,
    var: impl Fn(&str) -> Option<String>,
    plugin: Option<&str>,
) -> Result<String, String> {
    let expect = match var("IBWIRE_EXPECT_NET").as_deref().map(str::trim) {
        Some("ib") => ExpectNet::Ib,
        Some("socket") => ExpectNet::Socket,
        _ => ExpectNet::Auto,
    };
    let expect_rdma = exposure != Exposure::Nothing && expects_rdma(plan, crate::slurm::num_nodes(&var), expect);
    let allow = crate::config::truthy(var("IBWIRE_ALLOW_SOCKET_FALLBACK").as_deref())
        || config.launch.allow_socket_fallback.unwrap_or(false);
    pin(expect_rdma, allow, var, plugin)
}

/// The watch's reading of NCCL's log so far.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Nothing decisive yet (NCCL has not initialised, or no network channel yet).
    Pending,
    /// On the expected network; `final` once GPUDirect RDMA is known too.
    Fine {
        what: String,
        done: bool,
    },
    Warn(Said),
    Stop(Said),
}

/// What a warning or stop says, in parts, for launch to lay out: the headline, NCCL's own
/// lines that show it, then each likely cause with its fix (verify's ranked findings).
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub headline: String,
    pub nccl: Vec<String>,
    /// `(cause, fix)`; a cause ibwire adds of its own has no fix.
    pub causes: Vec<(String, Option<String>)>,
}

/// What verify is told of the job when launch judges this node's own lines.
fn node_inputs(nnodes: usize) -> CeilingInputs {
    CeilingInputs {
        nodes: Some(nnodes.max(2)),
        node_known: true,
        socket_flag: Some("--expect-net socket"),
        one_node: true,
        ..Default::default()
    }
}

/// Judge what NCCL logged (`facts`, this node's ranks so far). `causes` come from verify's
/// ranked explanations, so the watch and `verify` say the same thing.
pub fn judge(
    node: &Node,
    plan: &Plan,
    facts: &LogFacts,
    nnodes: usize,
    expect_rdma: bool,
    require_gdr: bool,
) -> Verdict {
    let failed_init = facts.failures.iter().find(|f| f.kind == Failure::NoNetPlugin).map(|f| &f.line);
    let observed = facts.observed();
    let report = verify::judge(node, plan, facts, None, &node_inputs(nnodes));
    let causes = causes_of(node, plan, &report);
    let said = |headline: String, nccl: Vec<String>| Said { headline, nccl, causes: causes.clone() };
    if let Some(w) = failed_init.filter(|_| expect_rdma) {
        return Verdict::Stop(said(
            "NCCL could not start its InfiniBand transport (NCCL_NET=IB forbids the socket fallback)".into(),
            vec![w.clone()],
        ));
    }
    let Some(net) = observed else { return Verdict::Pending };
    if facts.network.as_deref() == Some("mixed") || (expect_rdma && !facts.on_rdma()) {
        if !expect_rdma {
            return Verdict::Fine { what: format!("NCCL uses {net}"), done: true };
        }
        let evidence: Vec<String> =
            [facts.ib_no_device.then(|| "NET/IB : No device found".to_string()), Some(format!("Using network {net}"))]
                .into_iter()
                .flatten()
                .collect();
        return Verdict::Stop(said(format!("NCCL chose {net} where InfiniBand/RoCE was expected"), evidence));
    }
    if !facts.on_rdma() {
        return Verdict::Fine { what: format!("NCCL uses {net}, as declared"), done: true };
    }
    // On RDMA: GPUDirect RDMA shows on the first inter-node channels.
    let c = &facts.channels;
    if c.net_ib + c.net_other == 0 && facts.gdr.is_none() {
        return Verdict::Fine { what: format!("NCCL uses {net}"), done: false };
    }
    if facts.gdr == Some(false) && (report.gdr_expected || require_gdr) {
        let msg = said(
            format!("NCCL uses {net} without GPUDirect RDMA (inter-node channels lack /GDRDMA): data is staged through host memory"),
            Vec::new(),
        );
        return if require_gdr { Verdict::Stop(msg) } else { Verdict::Warn(msg) };
    }
    let gdr = if facts.gdr == Some(true) { " with GPUDirect RDMA" } else { "" };
    Verdict::Fine { what: format!("NCCL uses {net}{gdr}"), done: true }
}

/// verify's causes (its fixes name launch's --expect-net), a node without a usable port first.
fn causes_of(node: &Node, plan: &Plan, report: &verify::Report) -> Vec<(String, Option<String>)> {
    let mut causes: Vec<(String, Option<String>)> =
        report.findings.iter().map(|f| (f.cause.clone(), Some(f.fix.clone()))).collect();
    if plan.hcas.is_empty() {
        // --expect-net ib on a node that shows no usable port: that is the first thing to say.
        let why = if node.rdma.is_empty() {
            "this node has no InfiniBand/RoCE device at all (ibwire probe lists none)"
        } else {
            "no HCA port on this node is healthy (ibwire env --explain gives each reason)"
        };
        causes.insert(0, (why.to_string(), None));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(v: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| v.iter().find(|(n, _)| *n == k).map(|(_, x)| x.to_string())
    }

    #[test]
    fn pin_only_where_no_plugin_is_in_play() {
        assert!(pin(true, false, vars(&[]), None).is_ok());
        assert!(pin(false, false, vars(&[]), None).unwrap_err().contains("not expected"));
        assert!(pin(true, true, vars(&[]), None).unwrap_err().contains("allowed"));
        assert!(pin(true, false, vars(&[("NCCL_NET", "Socket")]), None).unwrap_err().contains("set by the user"));
        assert!(pin(true, false, vars(&[("NCCL_NET_PLUGIN", "aws-ofi")]), None)
            .unwrap_err()
            .contains("external plugin"));
        assert!(pin(true, false, vars(&[("NCCL_NET_PLUGIN", "none")]), None).is_ok());
        let e = pin(true, false, vars(&[]), Some("/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so")).unwrap_err();
        assert!(e.contains("would skip it"), "{e}");
    }
}
