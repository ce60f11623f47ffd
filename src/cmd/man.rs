//! The manual pages: ibwire(1) and one page per command, from the clap definition that `--help`
//! prints, with a synopsis as the command is typed (`ibwire env [OPTIONS]`), and the sections
//! clap_mangen does not write: EXIT STATUS, ENVIRONMENT and FILES (ibwire(1)), SEE ALSO.

use clap::Command;
use clap_mangen::roff::{bold, roman, Roff};
use std::path::Path;

/// Each command's exit statuses, as its code returns them (the top-level help sums them up).
const EXIT: &[(&str, &[(&str, &str)])] = &[
    ("probe", &[("0", "the snapshot was printed, saved or captured"), ("2", USAGE)]),
    ("env", &[("0", "every setting was decided"), ("1", "a setting could not be decided (stderr says which)"), ("2", USAGE)]),
    (
        "hook",
        &[
            ("0", "the container starts: also after an error or a crash, which is one warning line on stderr"),
            ("1", "strict mode only (hook.strict, IBWIRE_STRICT=1): the hook could not do its work; enroot fails the start"),
        ],
    ),
    ("taskprolog", &[("0", "always: an error is one stderr line and nothing is exported")]),
    (
        "launch",
        &[
            ("1", "preflight refused the start, or the watch stopped a job that NCCL put on the wrong transport"),
            ("2", USAGE),
            ("other", "torchrun's own exit status"),
        ],
    ),
    ("verify", &[("0", "ok"), ("1", "not ok: wrong transport, no GPUDirect, a failure, or far below the ceiling"), ("2", USAGE), ("3", "inconclusive: the log does not say enough")]),
    ("doctor", &[("0", "no error found (warnings may be)"), ("1", "an error was found"), ("2", USAGE)]),
    ("fleet", &[("0", "no error-level difference"), ("1", "an error-level difference, or a snapshot that cannot be read"), ("2", USAGE)]),
    (
        "health",
        &[
            ("0", "healthy (silent), or only facts that could not be read (notes on stderr)"),
            ("1", "unhealthy: one line on stdout names the HCA, port or GPU and the fix"),
            ("2", "its own error (configuration, probe, scontrol): nothing is drained"),
        ],
    ),
    ("cdi", &[("0", "a spec was written, or is up to date"), ("1", "nothing can be offered (with --output, a spec left from before is removed)"), ("2", USAGE)]),
    ("topo", &[("0", "the matrix was printed"), ("2", USAGE)]),
    ("completions", &[("0", "the script was printed"), ("2", USAGE)]),
    ("man", &[("0", "the pages were written"), ("2", "bad usage, or a page could not be written")]),
];

const USAGE: &str = "bad usage or input: flags, configuration, a tree, snapshot or log that cannot be read";

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "IBWIRE_ROOT",
        "as --root: read a captured tree instead of the live node (not read by the hook or the TaskProlog)",
    ),
    ("IBWIRE_CONFIG", "a configuration file read after /etc/ibwire.yaml and the user's, as --config"),
    ("XDG_CONFIG_HOME", "the user's configuration is $XDG_CONFIG_HOME/ibwire.yaml (else ~/.config/ibwire.yaml)"),
    ("IBWIRE_STRICT", "1: an error of the hook fails the container start (hook.strict in the configuration)"),
    ("IBWIRE_DEBUG", "1: the hook and launch say what they decided, on stderr"),
    ("IBWIRE_VISIBLE_DEVICES", "the HCAs to put into a container, by name (mlx5_0,mlx5_3), or all or none"),
    (
        "IBWIRE_EXPECT_NET",
        "ib or socket: the transport the job must use, whatever the node has (launch, the hook's pin)",
    ),
    (
        "IBWIRE_ALLOW_SOCKET_FALLBACK",
        "1: a job may run on TCP sockets where InfiniBand/RoCE was expected (no pin, no stop)",
    ),
    (
        "IBWIRE_HOOK_WARNINGS",
        "set by the hook inside a container whose start it warned about; env, doctor and launch repeat it",
    ),
    ("NCCL_*, SLURM_*", "read, never changed: a value the job set is kept and reported (doctor lints them)"),
];

const FILES: &[(&str, &str)] = &[
    ("/etc/ibwire.yaml", "the administrator's configuration; every setting is optional (see the shipped example)"),
    ("~/.config/ibwire.yaml", "the user's configuration, read after the administrator's: it cannot change hook.strict, visible_devices, mad, hide_sysfs or deadline_ms where /etc/ibwire.yaml sets them"),
    ("/etc/enroot/hooks.d/90-ibwire.sh", "the enroot hook: a link to the binary (enroot from source: /usr/local/etc/enroot)"),
    ("/usr/bin/ibwire-taskprolog", "a link to the binary, for slurm.conf's TaskProlog="),
    ("/usr/bin/ibwire-health", "a link to the binary, for slurm.conf's HealthCheckProgram= (ibwire health --drain)"),
    ("/etc/nccl.conf, ~/.nccl.conf", "NCCL's own configuration files (or $NCCL_CONF_FILE), read by doctor"),
];

/// Write ibwire(1) and one page per command into `dir`; the number of pages.
/// `ibwire man`: the top page on stdout, or every page into `dir`.
pub fn run(top: &Command, dir: Option<&Path>) -> anyhow::Result<std::process::ExitCode> {
    match dir {
        None => {
            use std::io::Write;
            std::io::stdout().write_all(&top_page(top))?;
        }
        Some(d) => {
            let n = write_all(top, d)?;
            eprintln!("ibwire man: wrote {n} manual pages into {}", d.display());
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

pub fn write_all(top: &Command, dir: &Path) -> anyhow::Result<usize> {
    let mut n = 0;
    for (name, page) in pages(top) {
        let f = dir.join(format!("{name}.1"));
        std::fs::write(&f, page).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", f.display()))?;
        n += 1;
    }
    Ok(n)
}

/// ibwire(1) alone, for `ibwire man` without --dir.
pub fn top_page(top: &Command) -> Vec<u8> {
    pages(top).into_iter().next().map(|(_, p)| p).unwrap_or_default()
}

fn commands(top: &Command) -> impl Iterator<Item = &Command> {
    top.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

/// (file name without .1, roff) for ibwire(1), then each command's page.
fn pages(top: &Command) -> Vec<(String, Vec<u8>)> {
    let version = env!("CARGO_PKG_VERSION");
    let mut out = Vec::new();
    // The help subcommand has no page: ibwire(1) lists only pages that exist.
    let shown = top.clone().disable_help_subcommand(true);
    out.push(("ibwire".to_string(), render(shown, None)));
    for s in commands(top) {
        let name = format!("ibwire-{}", s.get_name());
        let c = s
            .clone()
            .name(name.clone())
            .display_name(name.clone())
            .bin_name(format!("ibwire {}", s.get_name()))
            .version(version)
            .disable_version_flag(true);
        out.push((name, render(c, Some(s.get_name()))));
    }
    out
}

/// One page: `sub`'s (`ibwire env`), or ibwire(1)'s with `None`.
fn render(mut cmd: Command, sub: Option<&str>) -> Vec<u8> {
    let typed = sub.map_or_else(|| "ibwire".to_string(), |s| format!("ibwire {s}"));
    let typed = typed.as_str();
    cmd.build();
    let usage = cmd.render_usage().to_string();
    let usage = usage.trim_start_matches("Usage:").trim();
    let man = clap_mangen::Man::new(cmd.clone()).source(format!("ibwire {}", env!("CARGO_PKG_VERSION")));
    let mut w = Vec::new();
    let _ = man.render_title(&mut w);
    let _ = man.render_name_section(&mut w);
    let mut r = Roff::default();
    r.control("SH", ["SYNOPSIS"]);
    // clap's usage line, as --help prints it: `ibwire env [OPTIONS]`.
    let rest = usage.strip_prefix(typed).unwrap_or(usage).trim();
    r.text([bold(typed), roman(format!(" {rest}"))]);
    let _ = r.to_writer(&mut w);
    let _ = man.render_description_section(&mut w);
    if cmd.get_arguments().any(|a| !a.is_hide_set() && a.get_id() != "help") {
        let _ = man.render_options_section(&mut w);
    }
    if cmd.has_subcommands() {
        let _ = man.render_subcommands_section(&mut w);
    }
    let mut r = Roff::default();
    r.control("SH", ["EXIT STATUS"]);
    match sub {
        Some(s) => table(&mut r, EXIT.iter().find(|(c, _)| *c == s).map(|(_, t)| *t).unwrap_or(&[])),
        None => {
            table(
                &mut r,
                &[
                    ("0", "success"),
                    ("1", "a check failed: doctor found an error, verify saw the wrong transport, launch refused or stopped the job"),
                    ("2", USAGE),
                    ("3", "verify could not tell (inconclusive)"),
                ],
            );
            r.text([roman("Each command's page lists its own.")]);
            r.control("SH", ["ENVIRONMENT"]);
            table(&mut r, ENVIRONMENT);
            r.control("SH", ["FILES"]);
            table(&mut r, FILES);
        }
    }
    r.control("SH", ["SEE ALSO"]);
    let see: Vec<String> = match sub {
        Some(_) => vec!["ibwire(1)".into()],
        None => commands(&cmd).map(|s| format!("ibwire-{}(1)", s.get_name())).collect(),
    };
    r.text([roman(format!("{}, enroot(1), srun(1), torchrun(1)", see.join(", ")))]);
    r.control("SH", ["VERSION"]);
    r.text([roman(format!("v{}", env!("CARGO_PKG_VERSION")))]);
    let _ = r.to_writer(&mut w);
    one_preamble(w)
}

/// Each clap_mangen section comes with roff's two-line preamble; a page keeps the first.
fn one_preamble(w: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&w);
    let mut out = String::with_capacity(text.len());
    let mut seen = false;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(l) = lines.next() {
        if l.starts_with(".ie \\n(.g .ds Aq") && lines.peek().is_some_and(|n| n.starts_with(".el .ds Aq")) {
            let next = lines.next().unwrap_or_default();
            if !seen {
                out.push_str(l);
                out.push_str(next);
                seen = true;
            }
            continue;
        }
        out.push_str(l);
    }
    out.into_bytes()
}

fn table(r: &mut Roff, rows: &[(&str, &str)]) {
    for (k, v) in rows {
        r.control("TP", []);
        r.text([bold(*k)]);
        r.text([roman(*v)]);
    }
}
