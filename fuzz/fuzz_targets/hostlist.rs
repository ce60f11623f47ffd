#![no_main]
// Slurm node lists: never a panic, never more than the bound, no empty host names.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(h) = ibwire::slurm::expand_hostlist(s) {
            assert!(h.len() <= 100_000);
            assert!(h.iter().all(|x| !x.is_empty()));
        }
    }
});
