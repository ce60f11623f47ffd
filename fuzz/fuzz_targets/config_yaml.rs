#![no_main]
// ibwire.yaml: any text is a config or a one-line error naming a position.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Err(e) = ibwire::config::parse(s, "fuzz.yaml") {
            assert!(e.to_string().starts_with("config fuzz.yaml"));
        }
    }
});
