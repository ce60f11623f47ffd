//! The README's "Try it" block, run as written: each command line through `sh -c`, with the
//! built binary first on PATH, from the repository's top directory; what it shows is checked
//! against the story (issue 41).

use crate::common;
use common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn the_readme_try_it_block_runs_as_written_and_shows_the_story() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let block = &readme[readme.find("<!-- try-it:begin").expect("the Try it block")..];
    let block = &block[..block.find("<!-- try-it:end -->").unwrap()];
    let lines: Vec<&str> = block.lines().filter(|l| l.starts_with("ibwire ") || l.starts_with("NCCL_")).collect();
    assert_eq!(lines.len(), 3, "{block}");
    let bin_dir = bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let run = |l: &str| {
        let o = Command::new("sh")
            .arg("-c")
            .arg(l)
            .current_dir(dir)
            .env("PATH", &path)
            .env_remove("IBWIRE_ROOT")
            .output()
            .unwrap();
        (o.status.code(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    };
    let (rc, out) = run(lines[0]);
    assert_eq!(rc, Some(0), "{}: {out}", lines[0]);
    assert!(
        out.contains("NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1"),
        "{out}"
    );
    assert!(out.contains("mlx5_bond_0 port 1 excluded: InfiniBand link layer with LID 0x0"), "{out}");
    assert!(out.contains("NCCL_SOCKET_IFNAME==eno8303"), "{out}");
    let (rc, out) = run(lines[1]);
    assert_eq!(rc, Some(1), "doctor finds the error: {out}");
    assert!(out.contains("NCCL_IB_HCA=mlx5 selects mlx5_bond_0 port 1"), "{out}");
    assert!(out.contains("NCCL_SOCKET_IFNAME=bond0.2102"), "{out}");
    let (rc, out) = run(lines[2]);
    assert_eq!(rc, Some(1), "{out}");
    assert!(out.starts_with("NOT OK: NOT ON RDMA: NCCL used Socket between nodes"), "{out}");
    assert!(out.contains("NET/IB : No device found."), "{out}");
}

/// The README reads in a 100-column terminal: prose lines are at most 100 columns (tables, code
/// blocks and a line that is one link excepted), and set-up starts from a clone (issue 41).
#[test]
fn the_readme_fits_100_columns_and_sets_up_from_a_clone() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut code = false;
    for (i, l) in readme.lines().enumerate() {
        if l.starts_with("```") {
            code = !code;
            continue;
        }
        let one_link = l.starts_with('[') && l.trim_end_matches('.').ends_with(')') && !l.contains(' ');
        if !code && !l.starts_with('|') && !one_link {
            assert!(l.chars().count() <= 100, "README.md:{}: {} columns: {l}", i + 1, l.chars().count());
        }
    }
    let setup = &readme[readme.find("## Set-up").unwrap()..];
    let first_block = &setup[setup.find("```sh").unwrap()..];
    let first_block = &first_block[..first_block[5..].find("```").unwrap()];
    assert!(first_block.contains("./install.sh"), "the first set-up block installs from the clone: {first_block}");
}
