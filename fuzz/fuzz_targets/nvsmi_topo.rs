#![no_main]
// nvidia-smi topo -m text (a hostile or garbled nvidia-smi): never a panic.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let t = ibwire::nvsmi::parse_topo(&String::from_utf8_lossy(data));
    let _ = t.nvlinks();
});
