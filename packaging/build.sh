#!/usr/bin/env bash
# Build ibwire's .deb and .rpm: packaging/build.sh  →  target/debian/*.deb, target/generate-rpm/*.rpm
# Installs cargo-deb and cargo-generate-rpm from crates.io when they are missing.
# Each package holds: /usr/bin/ibwire (+ the ibwire-taskprolog link, made by its scripts), the
# enroot hook /etc/enroot/hooks.d/90-ibwire.sh and a commented /etc/ibwire.yaml (both config
# files: upgrades keep local edits), and README, SECURITY.md and the examples under
# /usr/share/doc/ibwire/. Nothing else; no runtime dependency beyond libc.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in cargo-deb cargo-generate-rpm; do
  command -v "$tool" >/dev/null || { echo "packaging: installing $tool from crates.io" >&2; cargo install --locked "$tool"; }
done
cargo build --release --locked
P=target/package; rm -rf "$P"; mkdir -p "$P"
# The hook names the binary by absolute path (enroot runs hooks with the job's PATH).
sed 's#@IBWIRE@#/usr/bin/ibwire#' hooks/90-ibwire.sh > "$P/90-ibwire.sh"
# The shipped config: the example with every setting commented out, so that a fresh install
# changes nothing (the admin's file wins for hook keys: setting them is a decision).
{ echo "# /etc/ibwire.yaml: ibwire's site configuration (every key optional; see ibwire(1) README)."
  sed -e 's/^\([^#].*\)$/# \1/' examples/ibwire.yaml; } > "$P/ibwire.yaml"
cargo deb --no-build --no-strip
cargo generate-rpm
ls -l target/debian/*.deb target/generate-rpm/*.rpm
