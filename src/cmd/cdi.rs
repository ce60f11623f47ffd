//! `ibwire cdi`: print or write a CDI spec of the node's healthy HCAs (plan::cdi decides it).
//!
//! `--output FILE` writes atomically: a temporary file in FILE's directory, written, synced,
//! mode 0644, then renamed over FILE, so a runtime reading /etc/cdi or /var/run/cdi never sees
//! half a spec. With nothing to offer, an existing FILE is removed (a runtime must not go on
//! offering devices the node no longer has) and the exit code is 1. A FILE that already holds
//! the same spec is left alone (no rename, so a runtime's watch sees no change).

use crate::plan::cdi::{self, Spec};
use crate::plan::{self, Intent};
use crate::probe::Node;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SpecFormat {
    Yaml,
    Json,
}

pub fn render(spec: &Spec, f: SpecFormat) -> Result<String> {
    Ok(match f {
        SpecFormat::Yaml => serde_yaml::to_string(spec)?,
        SpecFormat::Json => serde_json::to_string_pretty(spec)? + "\n",
    })
}

/// The spec this node offers now, with the notes on what was left out.
pub fn build(node: &Node, config: &crate::config::Config, kind: &str) -> cdi::Built {
    // Node facts only: the job's environment (its own NCCL_IB_HCA…) does not enter a spec.
    let intent = Intent { config: config.clone(), ..Default::default() };
    let plan = plan::decide(node, &intent);
    cdi::build(node, &plan, kind, config.hook.mad.unwrap_or(false))
}

pub fn run(
    node: &Node,
    config: Option<&Path>,
    kind: &str,
    format: SpecFormat,
    output: Option<&Path>,
) -> Result<ExitCode> {
    if !cdi::valid_kind(kind) {
        bail!(
            "--kind {}: not a CDI kind (vendor.tld/class, e.g. {})",
            crate::text::printable(kind, 80),
            cdi::DEFAULT_KIND
        );
    }
    let cfg = crate::config::load(config)?;
    let built = build(node, &cfg, kind);
    for n in &built.notes {
        eprintln!("ibwire cdi: {}", crate::text::one_line(n));
    }
    let Some(spec) = built.spec else {
        if let Some(out) = output {
            match std::fs::remove_file(out) {
                Ok(()) => {
                    eprintln!("ibwire cdi: removed {} (it offered devices this node no longer has)", out.display())
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => bail!("cannot remove the stale spec {}: {e}", out.display()),
            }
        }
        eprintln!("ibwire cdi: no spec written: nothing to offer");
        return Ok(ExitCode::from(1));
    };
    let text = render(&spec, format)?;
    match output {
        None => print!("{text}"),
        // A refresh (packaging/ibwire-cdi.timer) that finds the same spec leaves the file alone.
        Some(out) if crate::input::read_text_nofollow(out, 4 << 20).is_ok_and(|t| t == text) => {
            eprintln!("ibwire cdi: {} is up to date", out.display());
        }
        Some(out) => {
            write_atomically(out, text.as_bytes())?;
            eprintln!(
                "ibwire cdi: wrote {} ({} devices, cdiVersion {})",
                out.display(),
                spec.devices.len(),
                spec.cdi_version
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Temp file beside `path`, synced, 0644, renamed over `path`; the temp file is removed on error.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().with_context(|| format!("{}: not a file name", path.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", tmp.path().display()))?;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644))
        .with_context(|| format!("cannot set the mode of {}", tmp.path().display()))?;
    tmp.persist(path).map_err(|e| anyhow::anyhow!("cannot rename into {}: {}", path.display(), e.error))?;
    Ok(())
}
