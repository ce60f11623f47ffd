//! Write a fixture node tree for benchmarks and system tests.
//!
//! Usage: gen_tree story DIR | plain DIR | scaled HCAS NETDEVS DIR | sriov HCAS DIR
//! (`sriov`: every virtual function has its own IPoIB netdev, as on a real SR-IOV node).
use std::path::Path;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    match a.get(1).map(String::as_str) {
        Some("story") if a.len() == 3 => drop(ibwire_fixture::story(Path::new(&a[2]))),
        Some("plain") if a.len() == 3 => drop(ibwire_fixture::plain(Path::new(&a[2]))),
        Some("scaled") if a.len() == 5 => {
            let h: usize = a[2].parse().expect("HCAS");
            let n: usize = a[3].parse().expect("NETDEVS");
            drop(ibwire_fixture::scaled(Path::new(&a[4]), h, n))
        }
        Some("sriov") if a.len() == 4 => {
            let h: usize = a[2].parse().expect("HCAS");
            drop(ibwire_fixture::sriov(Path::new(&a[3]), h))
        }
        _ => {
            eprintln!("usage: gen_tree story DIR | plain DIR | scaled HCAS NETDEVS DIR | sriov HCAS DIR");
            std::process::exit(2);
        }
    }
}
