#!/usr/bin/env bash
# Build ibwire's release artefacts into dist/, for x86_64 and aarch64 (GH200/GB200 nodes):
#   ibwire-<version>-<arch>-linux-musl           a static binary (no libc needed: runs on RHEL 8's
#                                                glibc 2.28 as on Debian 12, and in an empty chroot)
#   ibwire-<version>-<arch>-linux-musl.sha256
#   ibwire-<version>-<arch>-linux-musl.tar.gz    binary, install.sh, the enroot hook, example config,
#                                                man pages, bash/zsh/fish completion, README, LICENSE
#   ibwire_<version>-1_<debarch>.deb, ibwire-<version>-1.<arch>.rpm   the static binary, no libc
#                                                dependency
# Usage: packaging/build.sh [x86_64|aarch64 ...]   (default: both)
#
# What it needs, all from a stock Debian 12 machine and the registries: rustup's musl targets
# (rustup target add; the musl C library comes inside them), cargo-deb and cargo-generate-rpm
# from crates.io (installed when missing). The x86_64 target links with the machine's gcc; the
# aarch64 one with rust-lld, the linker rustup ships with every toolchain: ibwire has no C code,
# so no cross C compiler or sysroot is needed (Debian's gcc-aarch64-linux-gnu, or zig through
# cargo-zigbuild, would also work, at the cost of a package or a PyPI wheel of ~50 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
arches=("$@"); [ ${#arches[@]} -gt 0 ] || arches=(x86_64 aarch64)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
for tool in cargo-deb cargo-generate-rpm; do
  command -v "$tool" >/dev/null || { echo "packaging: installing $tool from crates.io" >&2; cargo install --locked "$tool"; }
done
if command -v rustup >/dev/null; then
  for a in "${arches[@]}"; do rustup target add "$a-unknown-linux-musl" >/dev/null; done
fi
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=rust-lld
mkdir -p dist
P=target/package; rm -rf "$P"; mkdir -p "$P"
# The sh form of the hook (the packages' hook is a link to the binary, made by their scripts)
# names the binary by absolute path (enroot runs hooks with the job's PATH).
sed 's#@IBWIRE@#/usr/bin/ibwire#' hooks/90-ibwire.sh > "$P/90-ibwire.sh"
# The shipped config: the example with every setting commented out, so that a fresh install
# changes nothing (the admin's file wins for hook keys: setting them is a decision).
{ echo "# /etc/ibwire.yaml: ibwire's site configuration (every key optional; see ibwire(1) and README)."
  sed -e 's/^\([^#].*\)$/# \1/' examples/ibwire.yaml; } > "$P/ibwire.yaml"
for a in "${arches[@]}"; do
  t=$a-unknown-linux-musl
  cargo build --release --locked --target "$t"
  name=ibwire-$version-$a-linux-musl
  cp "target/$t/release/ibwire" "dist/$name"
  (cd dist && sha256sum "$name" > "$name.sha256")
done
# Man pages and completions, written by a binary that runs here (the native one).
native=dist/ibwire-$version-$(uname -m)-linux-musl
[ -x "$native" ] || { cargo build --release --locked; native=target/release/ibwire; }
mkdir -p "$P/man" "$P/completions"
"$native" man --dir "$P/man" 2>/dev/null
gzip -9n "$P"/man/*.1
"$native" completions bash > "$P/completions/ibwire"
"$native" completions zsh > "$P/completions/_ibwire"
"$native" completions fish > "$P/completions/ibwire.fish"
for a in "${arches[@]}"; do
  t=$a-unknown-linux-musl
  name=ibwire-$version-$a-linux-musl
  # tarball: unpack and run ./install.sh (it finds ./ibwire), or copy the files by hand
  T=$(mktemp -d); d=$T/$name; mkdir -p "$d/hooks" "$d/man" "$d/completions" "$d/systemd"
  cp "dist/$name" "$d/ibwire"; cp install.sh README.md LICENSE SECURITY.md CHANGELOG.md ARCHITECTURE.md "$d/"; cp -r docs "$d/"
  cp hooks/90-ibwire.sh "$d/hooks/"; cp examples/ibwire.yaml "$d/ibwire.yaml.example"
  cp "$P"/man/*.gz "$d/man/"; cp "$P"/completions/* "$d/completions/"; cp packaging/systemd/* "$d/systemd/"
  tar -C "$T" --owner=0 --group=0 --numeric-owner -czf "dist/$name.tar.gz" "$name"; rm -rf "$T"
  (cd dist && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
  # packages: cargo-deb and cargo-generate-rpm read target/<triple>/release for --target
  debarch=$([ "$a" = aarch64 ] && echo arm64 || echo amd64)
  cargo deb --no-build --no-strip --target "$t" --output "dist/ibwire_${version}-1_${debarch}.deb" >/dev/null
  cargo generate-rpm --target "$t" --arch "$a" -o "dist/ibwire-${version}-1.${a}.rpm"
done
ls -l dist/
