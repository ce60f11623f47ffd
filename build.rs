//! The static (musl) binary links the hook's code first, on adjacent pages (packaging/hook.ld,
//! which says why and how it is made). Nothing else is built here.

fn main() {
    println!("cargo:rerun-if-changed=packaging/hook.ld");
    println!("cargo:rerun-if-env-changed=IBWIRE_NO_HOOK_ORDER");
    let musl = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "musl");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|o| o == "linux");
    // IBWIRE_NO_HOOK_ORDER=1: the default layout (bench/hook-order.sh --compare measures the two;
    // a linker that takes no SECTIONS/INSERT script, such as mold, needs it).
    let script = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("packaging/hook.ld");
    if !musl || !linux || std::env::var_os("IBWIRE_NO_HOOK_ORDER").is_some() || !script.is_file() {
        return;
    }
    // Linked by a C compiler driver (the x86_64 default, cc) the option goes through -Wl;
    // linked by lld itself (the aarch64 build: CARGO_TARGET_..._LINKER=rust-lld) it is passed as is.
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_default();
    let lld = std::path::Path::new(&linker).file_name().is_some_and(|n| n.to_string_lossy().ends_with("lld"));
    let arg = if lld { format!("-T{}", script.display()) } else { format!("-Wl,-T,{}", script.display()) };
    println!("cargo:rustc-link-arg-bins={arg}");
}
