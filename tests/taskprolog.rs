//! `ibwire taskprolog`, as slurmstepd runs it: the task's environment in, `export` lines out,
//! never a failed task.

mod common;
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
    ibwire::fixture::story(t.path());
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
    ibwire::fixture::story(t.path());
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
