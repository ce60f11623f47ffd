#![no_main]
// NCCL_IB_HCA / NCCL_SOCKET_IFNAME syntax: parse and match anything without a panic; an exact
// list that parsed cleanly selects the names it lists.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let (f, problems) = ibwire::nccl::filter::parse(s);
        for e in &f.entries {
            let hit = f.selects(&e.name, e.port.unwrap_or(1));
            if problems.is_empty() && f.exact && !f.exclude {
                assert!(hit);
            }
        }
    }
});
