//! System tests: root, mount and network namespaces, real torchrun and Slurm. A plain
//! `cargo test` lists them as ignored with the reason; `.ci/run` runs them as root with
//! `cargo test --test system -- --ignored`. Each is a script in tests/system/ under a time limit.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn script(name: &str, limit: Duration) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(nix::unistd::Uid::effective().is_root(), "system tests need root (run them from .ci/run)");
    let gen = build_gen_tree(dir);
    let mut c = Command::new("timeout");
    c.arg("--kill-after=10").arg(limit.as_secs().to_string()).arg(dir.join("tests/system").join(name));
    c.env("IBWIRE", env!("CARGO_BIN_EXE_ibwire")).env("GEN_TREE", gen).current_dir(dir);
    let o = c.output().unwrap();
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{name} failed ({:?}):\n{out}", o.status.code());
    println!("{out}");
}

fn build_gen_tree(dir: &Path) -> PathBuf {
    let st =
        Command::new(env!("CARGO")).args(["build", "-q", "--example", "gen_tree"]).current_dir(dir).status().unwrap();
    assert!(st.success());
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| dir.join("target"));
    target.join("debug/examples/gen_tree")
}

#[test]
#[ignore = "system test: needs root (mount namespace, bind mounts, mknod); run by .ci/run"]
fn hook_binds_devices_into_a_restricted_dev() {
    script("hook.sh", Duration::from_secs(120));
}

#[test]
#[ignore = "system test: needs root (mount and network namespaces, fixture trees bound over /sys and /proc); run by .ci/run"]
fn live_probe_sees_what_the_tree_probe_sees() {
    script("live-equals-tree.sh", Duration::from_secs(300));
}

#[test]
#[ignore = "system test: builds a release binary and installs into a staging DESTDIR; run by .ci/run"]
fn install_script_is_idempotent_and_uninstalls() {
    script("install.sh", Duration::from_secs(900));
}

#[test]
#[ignore = "system test: needs root (network namespaces) and torch from PyPI; run by .ci/run"]
fn launch_two_nodes_in_network_namespaces_with_real_torchrun() {
    script("launch-netns.sh", Duration::from_secs(1500));
}

#[test]
#[ignore = "system test: needs root, Debian's slurmctld/slurmd/munge and torch from PyPI; run by .ci/run"]
fn slurm_cluster_runs_the_baremetal_example_on_two_nodes() {
    script("slurm.sh", Duration::from_secs(1500));
}

#[test]
#[ignore = "system test: needs root (setpriv to a plain uid, a user namespace that maps only it, /etc of a private mount namespace); run by .ci/run"]
fn admin_config_applies_in_a_user_namespace() {
    script("userns-config.sh", Duration::from_secs(120));
}

#[test]
#[ignore = "system test: needs root (a size-limited tmpfs in a mount namespace); run by .ci/run"]
fn capture_into_a_full_disk_is_one_line() {
    script("capture-full-disk.sh", Duration::from_secs(120));
}

#[test]
#[ignore = "system test: needs root (dpkg -i on this machine, chroot), Debian's rpm and qemu-user-static, rustup's musl targets, cargo-deb and cargo-generate-rpm from crates.io; run by .ci/run"]
fn static_binaries_and_packages_install_and_remove_cleanly() {
    script("packages.sh", Duration::from_secs(1500));
}

#[test]
#[ignore = "system test: valgrind and strace, trees of 1 024 SR-IOV functions (1 GB in /dev/shm); run by .ci/run"]
fn hook_and_probe_grow_linearly_with_sriov_functions() {
    script("growth.sh", Duration::from_secs(1200));
}

#[test]
#[ignore = "system test: needs root and Debian's podman + runc (a CDI spec from a fixture tree, containers started); run by .ci/run"]
fn podman_reads_the_cdi_spec_and_launch_reads_pet_variables_inside() {
    script("cdi-podman.sh", Duration::from_secs(600));
}
