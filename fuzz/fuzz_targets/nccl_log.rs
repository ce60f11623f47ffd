#![no_main]
// NCCL_DEBUG=INFO logs: any bytes, never a panic; devices only from `NET/IB : Using` lines, as
// the reader sees them: terminal escapes and control bytes removed (`nccl::clean`), so a device
// name is text of one cleaned line and never holds a control character. all_reduce_bench's
// reader (nccl::bench) on the same lines: a result is a finite rate of a real link.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let f = ibwire::nccl::log::analyse(&s);
    for d in &f.ib_devices {
        assert!(!d.name.chars().any(char::is_control), "control character in {:?}", d.name);
        assert!(s.lines().any(|l| ibwire::nccl::clean(l).contains(&d.name)), "{:?} not in the log", d.name);
    }
    let mut b = ibwire::nccl::bench::Bench::default();
    s.lines().for_each(|l| b.line(l));
    if let Some(r) = b.finish() {
        assert!(r.busbw.is_finite() && (0.0..1e5).contains(&r.busbw) && r.ranks > 0, "{r:?}");
    }
});
