#![no_main]
// What the hook writes: environ lines reproduce the value or are refused; fstab fields escape
// and unescape to themselves; reading an environ file never panics.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    match ibwire::render::environ_line("NCCL_IB_HCA", &s) {
        Ok(l) => assert_eq!(ibwire::enroot::environ::parse(&l).get("NCCL_IB_HCA"), Some(&*s)),
        Err(_) => assert!(s.contains(['\n', '\r', '\0'])),
    }
    let e = ibwire::enroot::fstab::escape(&s);
    assert_eq!(ibwire::enroot::fstab::unescape(&e), s);
    let _ = ibwire::enroot::environ::parse(&s);
});
