//! `ibwire taskprolog`, as slurmstepd runs it: the task's environment in, `export` lines out,
//! never a failed task.

use crate::common;
use common::*;
use std::process::Command;

fn run(root: &std::path::Path, vars: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut c = Command::new(bin());
    c.arg("taskprolog").arg("--root").arg(root).args(args).env_clear().env("HOME", root);
    for (k, v) in vars {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (o.status.code().unwrap_or(-1), stdout(&o), stderr(&o))
}

#[test]
fn prints_what_the_job_did_not_set() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let (rc, out, err) = run(t.path(), &[("SLURM_JOB_NUM_NODES", "2"), ("NCCL_SOCKET_IFNAME", "=bond0.2102")], &[]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(
        out,
        "export NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1\n\
         export GLOO_SOCKET_IFNAME=eno8303\nexport CUDA_DEVICE_ORDER=PCI_BUS_ID\n\
         export NCCL_NET=IB\n"
    );
    // One node: no pin. Slurm's GPU allocation is never replaced.
    let (_, out, _) = run(t.path(), &[("SLURM_JOB_NUM_NODES", "1")], &[]);
    assert!(!out.contains("NCCL_NET=") && !out.contains("CUDA_VISIBLE_DEVICES"), "{out}");
    assert!(out.contains("export NCCL_SOCKET_IFNAME==eno8303\n"), "{out}");
}

#[test]
fn never_fails_the_task() {
    let t = tree_dir();
    ibwire_fixture::story(t.path());
    let bad = t.path().join("bad.yaml");
    std::fs::write(&bad, "hca: [unclosed\n").unwrap();
    for (vars, args) in [
        (vec![("IBWIRE_CONFIG", bad.to_str().unwrap())], vec![]),
        (vec![("IBWIRE_CONFIG", "/dev/zero")], vec![]),
        (vec![("SLURM_JOB_NODELIST", "gpu-[001-002"), ("SLURM_JOB_NUM_NODES", "2")], vec![]),
        (vec![], vec!["--bogus"]),
    ] {
        let (rc, out, err) = run(t.path(), &vars, &args);
        assert_eq!(rc, 0, "{vars:?} {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("ibwire-taskprolog: "), "{err}");
        if vars.iter().any(|(k, _)| *k == "IBWIRE_CONFIG") || !args.is_empty() {
            assert_eq!(out, "", "nothing exported after an error");
        }
    }
}

/// The words of `--help` that name variables (all capitals with an underscore).
fn help_vars(help: &str) -> std::collections::BTreeSet<String> {
    help.split(|c: char| !(c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()))
        .filter(|w| w.len() > 3 && w.contains('_') && w.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(str::to_string)
        .collect()
}

/// `--help` works for `ibwire taskprolog` and for the `ibwire-taskprolog` link, on stdout, exit
/// 0; every variable the TaskProlog exports is named in it, and CUDA_VISIBLE_DEVICES only as
/// what it never sets; a --root that is no tree is one line.
#[test]
fn help_is_help_and_says_what_it_exports() {
    let t = tree_dir();
    let link = t.path().join("ibwire-taskprolog");
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    let mut helps = Vec::new();
    for c in [
        Command::new(bin()).args(["taskprolog", "--help"]).output().unwrap(),
        Command::new(&link).arg("--help").output().unwrap(),
    ] {
        assert_eq!(c.status.code(), Some(0));
        assert!(stderr(&c).is_empty(), "{}", stderr(&c));
        assert!(stdout(&c).contains("Usage: ibwire taskprolog"), "{}", stdout(&c));
        helps.push(stdout(&c));
    }
    assert_eq!(helps[0], helps[1]);
    let named = help_vars(&helps[0]);
    assert!(helps[0].contains("never CUDA_VISIBLE_DEVICES"), "{}", helps[0]);
    assert!(!helps[0].contains("IBWIRE_ROOT="), "the TaskProlog does not read IBWIRE_ROOT: {}", helps[0]);
    let root = t.path().join("node");
    ibwire_fixture::story(&root);
    let (_, out, _) = run(&root, &[("SLURM_JOB_NUM_NODES", "2")], &[]);
    let (_, out1, _) = run(&root, &[("SLURM_JOB_NUM_NODES", "1")], &[]);
    for l in out.lines().chain(out1.lines()) {
        let name = l.trim_start_matches("export ").split('=').next().unwrap();
        assert!(named.contains(name), "{name} is exported but not in the help: {named:?}");
    }
    let (rc, out, err) = run(&t.path().join("nonexistent"), &[], &[]);
    assert_eq!((rc, out.as_str()), (0, ""));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a directory; nothing exported"), "{err}");
}
