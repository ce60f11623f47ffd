# Sourced by bench/run.sh, live.sh and enroot.sh: the binary they measure. IBWIRE=path measures
# that file; otherwise the static build the packages ship (packaging/build.sh builds it the same
# way: cargo build --release --locked --target <arch>-unknown-linux-musl) when rustup has that
# target, else the glibc build, with a label saying it is not what ships. Sets B and BUILD.
# The two builds differ in allocator, memcpy and threads (ARCHITECTURE.md): measuring the one
# a node does not run would be measuring something else. Sourcing it also unsets RUST_BACKTRACE:
# with it, anyhow captures a backtrace per error (1.2 M instructions each in the static build),
# which is not what a node pays (the hook itself turns it off since f471f69).
unset RUST_BACKTRACE RUST_LIB_BACKTRACE
bench_binary() {
  local t
  t=$(uname -m)-unknown-linux-musl
  if [[ -n ${IBWIRE:-} ]]; then
    B=$IBWIRE
    if file -L "$B" 2>/dev/null | grep -q 'statically linked\|static-pie linked'; then BUILD="static build ($B)"; else BUILD="dynamic build ($B)"; fi
  elif rustup target list --installed 2>/dev/null | grep -qx "$t"; then
    cargo build --release --locked -q --target "$t"
    B=$PWD/target/$t/release/ibwire
    BUILD="static build ($t, as the packages ship it)"
  else
    cargo build --release -q
    B=$PWD/target/release/ibwire
    BUILD="glibc build (target/release; rustup has no $t target, so not the static build the packages ship)"
  fi
}
