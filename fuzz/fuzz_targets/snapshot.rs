#![no_main]
// Snapshots: any text loads or fails; what loads saves and loads back equal.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(n) = ibwire::snapshot::parse(s) {
            let j = ibwire::snapshot::to_string(&n, ibwire::snapshot::Format::Json).unwrap();
            assert_eq!(ibwire::snapshot::parse(&j).unwrap(), n);
        }
    }
});
