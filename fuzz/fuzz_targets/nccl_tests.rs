#![no_main]
// nccl-tests output: any bytes; every parsed bandwidth is finite.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let t = ibwire::nccl::tests_output::parse(&String::from_utf8_lossy(data));
    if let Some(b) = t.peak_busbw() {
        assert!(b.is_finite());
    }
});
