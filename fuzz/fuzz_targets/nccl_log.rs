#![no_main]
// NCCL_DEBUG=INFO logs: any bytes, never a panic; devices only from `NET/IB : Using` lines, as
// the reader sees them: terminal escapes and control bytes removed (`nccl::clean`), so a device
// name is text of one cleaned line and never holds a control character.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let f = ibwire::nccl::log::analyse(&s);
    for d in &f.ib_devices {
        assert!(!d.name.chars().any(char::is_control), "control character in {:?}", d.name);
        assert!(s.lines().any(|l| ibwire::nccl::clean(l).contains(&d.name)), "{:?} not in the log", d.name);
    }
});
