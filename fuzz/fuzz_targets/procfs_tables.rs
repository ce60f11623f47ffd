#![no_main]
// /proc/net/{route,ipv6_route,fib_trie} and sysfs attribute values from a captured tree.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let _ = ibwire::probe::net::parse_route_v4(&s, &mut |_| {});
    let _ = ibwire::probe::net::parse_route_v6(&s);
    let _ = ibwire::probe::net::parse_fib_trie_locals(&s);
    let _ = ibwire::probe::rdma::parse_state(&s);
    if let Some(r) = ibwire::probe::rdma::parse_rate(&s) {
        assert!(r.is_finite() && r >= 0.0);
    }
    let _ = ibwire::text::parse_hex(&s);
    let _ = ibwire::text::parse_num(&s);
});
