#![no_main]
// NCCL_DEBUG=INFO logs: any bytes, never a panic; devices only from `NET/IB : Using` lines.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let f = ibwire::nccl::log::analyse(&s);
    for d in &f.ib_devices {
        assert!(s.contains(&d.name));
    }
});
