//! Properties (proptest) over the parsers and renderers: random nodes through the real probe and
//! rules, arbitrary text into every parser, arbitrary values through every quoting. Case counts
//! are kept small enough for CI; PROPTEST_CASES raises them for a longer run by hand.

use crate::common;
use common::tree_dir;
use ibwire::nccl::filter;
use ibwire::plan::{self, Intent};
use ibwire::probe::{self, ProbeOptions};
use ibwire_fixture::{under_root_port, NetDev, Port, Tree};
use proptest::prelude::*;

fn cases(n: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(n);
    ProptestConfig { cases: n, failure_persistence: None, ..ProptestConfig::default() }
}

#[derive(Debug, Clone)]
struct Hca {
    name: String,
    ib: bool,
    active: bool,
    lid: u32,
    dual: bool,
}

fn hca() -> impl Strategy<Value = Hca> {
    (
        prop_oneof![
            (0u32..24).prop_map(|i| format!("mlx5_{i}")),
            (0u32..3).prop_map(|i| format!("mlx5_bond_{i}")),
            (0u32..4).prop_map(|i| format!("irdma{i}")),
            Just("ibp195s0".to_string()),
        ],
        any::<bool>(),
        prop::bool::weighted(0.8),
        prop_oneof![Just(0u32), Just(0xffff), 1u32..0xbfff],
        prop::bool::weighted(0.2),
    )
        .prop_map(|(name, ib, active, lid, dual)| Hca { name, ib, active, lid, dual })
}

fn build(root: &std::path::Path, hcas: &[Hca]) {
    let mut t = Tree::new(root);
    let mut seen = std::collections::BTreeSet::new();
    for (i, h) in hcas.iter().enumerate() {
        if !seen.insert(h.name.clone()) {
            continue;
        }
        let rc = (0x10 + i * 4) as u8;
        let chain = under_root_port(rc, &[format!("0000:{:02x}:00.0", rc + 1)]);
        let nd = format!("en{i}");
        let mut port = if h.ib { Port::ib(1, h.lid) } else { Port::roce(1, &nd, Some(&format!("10.{i}.0.1"))) };
        if !h.active {
            port = port.down();
        }
        let mut ports = vec![port];
        if h.dual {
            ports.push(Port::ib(2, h.lid.wrapping_add(1) & 0xffff).down());
        }
        let pci = t.hca(&h.name, &chain, 0, &ports, i as u32);
        t.netdev(&NetDev::eth(&nd), Some(&pci));
        if !h.ib {
            t.addr(&nd, &format!("10.{i}.0.1/24"));
        }
    }
    t.netdev(&NetDev::eth("eno1"), None);
    t.addr("eno1", "192.168.0.2/24");
    t.route("eno1", "0.0.0.0/0", Some("192.168.0.1"), 0);
    t.finish();
}

proptest! {
    #![proptest_config(cases(48))]

    /// Whatever NCCL_IB_HCA value ibwire emits selects, under NCCL's own matching rules,
    /// exactly the ports ibwire chose — no prefix pulls in mlx5_1x or a bond.
    #[test]
    fn emitted_ib_hca_selects_exactly_the_chosen_ports(hcas in prop::collection::vec(hca(), 0..12)) {
        let t = tree_dir();
        build(t.path(), &hcas);
        let node = probe::probe(&ProbeOptions::at(t.path()));
        let p = plan::decide(&node, &Intent::default());
        // The hook reads far less of the node; it must decide the same.
        let mut fast = ProbeOptions::at(t.path());
        fast.detail = probe::Detail::Hook;
        let q = plan::decide(&probe::probe(&fast), &Intent::default());
        prop_assert_eq!(&q.hcas, &p.hcas);
        prop_assert_eq!(q.get("NCCL_IB_HCA").map(|s| &s.value), p.get("NCCL_IB_HCA").map(|s| &s.value));
        prop_assert_eq!(q.get("NCCL_SOCKET_IFNAME").map(|s| &s.value), p.get("NCCL_SOCKET_IFNAME").map(|s| &s.value));
        match p.get("NCCL_IB_HCA") {
            None => prop_assert!(p.hcas.is_empty()),
            Some(s) => {
                prop_assert!(s.value.starts_with('=') && !s.value.contains(' ') && s.value.len() > 1);
                let (f, problems) = filter::parse(&s.value);
                prop_assert!(problems.is_empty(), "{:?}", problems);
                for d in &node.rdma {
                    for port in &d.ports {
                        let chosen = p.hcas.contains(&(d.name.clone(), port.port));
                        prop_assert_eq!(f.selects(&d.name, port.port), chosen, "{} port {}", d.name, port.port);
                    }
                }
                // never an InfiniBand port with LID 0 or 0xffff, never a port that is down
                for (d, port) in &p.hcas {
                    let pt = node.rdma_device(d).unwrap().ports.iter().find(|x| x.port == *port).unwrap();
                    prop_assert_eq!(pt.state, Some(4));
                    if pt.link_layer == Some(ibwire::probe::LinkLayer::InfiniBand) {
                        prop_assert!(pt.lid.unwrap() != 0 && pt.lid.unwrap() < 0xc000);
                    }
                }
                // one link layer only
                let layers: std::collections::BTreeSet<_> = p.hcas.iter()
                    .map(|(d, port)| node.rdma_device(d).unwrap().ports.iter().find(|x| x.port == *port).unwrap().link_layer)
                    .collect();
                prop_assert_eq!(layers.len(), 1);
            }
        }
    }

    /// probe → save → replay is lossless, in both formats.
    #[test]
    fn snapshot_round_trip(hcas in prop::collection::vec(hca(), 0..8)) {
        let t = tree_dir();
        build(&t.path().join("n"), &hcas);
        let node = probe::probe(&ProbeOptions::at(&t.path().join("n")));
        for fmt in [ibwire::snapshot::Format::Json, ibwire::snapshot::Format::Yaml] {
            let text = ibwire::snapshot::to_string(&node, fmt).unwrap();
            prop_assert_eq!(&ibwire::snapshot::parse(&text).unwrap(), &node);
        }
    }
}

fn hostname() -> impl Strategy<Value = (String, u32, usize)> {
    ("[a-z]{1,6}-?", 0u32..200, 1usize..4)
}

proptest! {
    #![proptest_config(cases(256))]

    /// A node list written in hostlist syntax expands back to the same hosts, in order.
    #[test]
    fn hostlist_round_trip(groups in prop::collection::vec((hostname(), 1u32..6), 1..4)) {
        let mut expected = Vec::new();
        let mut parts = Vec::new();
        let mut prefixes = std::collections::BTreeSet::new();
        for ((prefix, start, width), n) in groups {
            if !prefixes.insert(prefix.clone()) {
                continue;
            }
            let hosts: Vec<String> = (start..start + n).map(|i| format!("{prefix}{i:0width$}")).collect();
            expected.extend(hosts.iter().cloned());
            parts.push(format!("{prefix}[{:0width$}-{:0width$}]", start, start + n - 1));
        }
        let got = ibwire::slurm::expand_hostlist(&parts.join(",")).unwrap();
        prop_assert_eq!(got, expected);
    }

    /// Every fstab field survives escaping for enroot-mount (getmntent's octal escapes).
    #[test]
    fn fstab_escape_round_trip(s in "\\PC*") {
        let e = ibwire::enroot::fstab::escape(&s);
        prop_assert!(!e.contains([' ', '\t', '\n']));
        prop_assert_eq!(ibwire::enroot::fstab::unescape(&e), s);
    }

    /// An environ line either reproduces the value exactly after enroot's normalisation, or is
    /// refused (line breaks, NUL): never a second variable injected.
    #[test]
    fn environ_value_round_trip_or_refusal(v in any::<String>()) {
        match ibwire::render::environ_line("NCCL_IB_HCA", &v) {
            Ok(line) => {
                let parsed = ibwire::enroot::environ::parse(&line);
                prop_assert_eq!(parsed.len(), 1);
                prop_assert_eq!(parsed.get("NCCL_IB_HCA"), Some(v.as_str()));
            }
            Err(_) => prop_assert!(v.contains(['\n', '\r', '\0'])),
        }
    }

    /// Dry-run words read back by a POSIX shell word splitter exactly (control characters use
    /// bash's $'…', checked separately below).
    #[test]
    fn shell_quoting_round_trip(words in prop::collection::vec("[^\\x00-\\x1f\\x7f]*", 1..6)) {
        let line: Vec<String> = words.iter().map(|w| ibwire::plan::launch::quote_word(w)).collect();
        prop_assert_eq!(shell_words::split(&line.join(" ")).unwrap(), words);
    }

    /// Compressing a node list, then expanding it, gives the list back (in canonical order,
    /// without repeats): fleet's groups name exactly the nodes they hold.
    #[test]
    fn hostlist_compress_then_expand_is_the_identity(
        names in prop::collection::vec(("[a-c]{1,2}-?", 0u32..40, 0usize..4), 1..40)
    ) {
        let mut v: Vec<String> = names.iter().map(|(p, n, w)| if *w == 3 { p.clone() } else { format!("{p}{n:0w$}", w = *w + 1) }).collect();
        v.sort_by(|a, b| ibwire::slurm::host_order(a, b));
        v.dedup();
        let c = ibwire::slurm::compress_hostlist(&v);
        prop_assert_eq!(ibwire::slurm::expand_hostlist(&c).unwrap(), v, "{}", c);
    }

    /// The parsers take any text without panicking.
    #[test]
    fn parsers_take_any_text(s in any::<String>()) {
        let _ = ibwire::nccl::log::analyse(&s);
        let _ = ibwire::nccl::tests_output::parse(&s);
        let _ = ibwire::nccl::filter::parse(&s);
        let _ = ibwire::nvsmi::parse_topo(&s);
        let _ = ibwire::config::parse(&s, "x");
        let _ = ibwire::snapshot::parse(&s);
        let _ = ibwire::slurm::expand_hostlist(&s);
        let _ = ibwire::enroot::environ::parse(&s);
        let _ = ibwire::probe::net::parse_route_v4(&s, &mut |_| {});
        let _ = ibwire::probe::net::parse_route_v6(&s);
        let _ = ibwire::probe::net::parse_fib_trie_locals(&s);
        let _ = ibwire::probe::rdma::parse_state(&s);
        let _ = ibwire::probe::rdma::parse_rate(&s);
        let _ = ibwire::text::parse_hex(&s);
        let _ = ibwire::text::parse_num(&s);
    }

    /// Lines shaped like NCCL's, cut and mixed at random, never panic and never invent devices
    /// that no `NET/IB : Using` line named.
    #[test]
    fn nccl_log_fragments(lines in prop::collection::vec(prop_oneof![
        Just("h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/RoCE [RO]; OOB eth0:10.0.0.1<0>".to_string()),
        Just("h:1:2 [0] NCCL INFO Using network IB".to_string()),
        Just("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA".to_string()),
        Just("[2026-01-01 00:00:00] h:1:2 [0] misc/ibvwrap.cc:1 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev x:1".to_string()),
        Just("0:   1073741824     268435456     float     sum      -1   4607.6  233.04  436.95      0   4565.6  235.18  440.96      0".to_string()),
        Just("#  Rank  0 Group  0 Pid 1 on n1 device  0 [0x1b] NVIDIA H100 80GB HBM3".to_string()),
        "\\PC{0,80}",
    ], 0..30), cut in 0usize..200) {
        let text = lines.join("\n");
        let cut_at = text.char_indices().map(|(i, _)| i).nth(cut).unwrap_or(text.len());
        let f = ibwire::nccl::log::analyse(&text[..cut_at]);
        for d in &f.ib_devices {
            prop_assert!(["mlx5_0", "mlx5_3"].contains(&d.name.as_str()) || text.contains(&d.name));
        }
        let t = ibwire::nccl::tests_output::parse(&text[..cut_at]);
        prop_assert!(t.peak_busbw().map(|b| b.is_finite()).unwrap_or(true));
    }
}

#[test]
fn control_characters_quote_for_bash() {
    for w in ["a\nb", "tab\there", "bell\x07", "quote'\n\"", "\x1b[4mansi", "c1\u{80}\u{9f}\n"] {
        let q = ibwire::plan::launch::quote_word(w);
        assert!(!q.contains('\n'));
        let o = std::process::Command::new("bash").arg("-c").arg(format!("printf %s {q}")).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), w, "{q}");
    }
}
