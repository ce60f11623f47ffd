#!/usr/bin/env bash
# A Python venv with torch (CPU use only: gloo) for the torchrun system tests, cached outside
# the checkout so repeated CI runs on one machine do not download it again (~3 GB).
# Prints the venv path. IBWIRE_TORCH_VENV overrides the location.
set -euo pipefail
V=${IBWIRE_TORCH_VENV:-/var/cache/ibwire-ci/torch-venv}
if [ -x "$V/bin/torchrun" ] && "$V/bin/python" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
  echo "$V"; exit 0
fi
rm -rf "$V.partial"; mkdir -p "$(dirname "$V")"
python3 -m venv "$V.partial" >&2
"$V.partial/bin/pip" install -q --disable-pip-version-check "torch==${IBWIRE_TORCH_VERSION:-2.15.0}" numpy >&2
"$V.partial/bin/python" -c 'import torch.distributed as d; assert d.is_gloo_available()' >&2
# venvs hard-code their path in scripts: move it into place only when complete, then fix paths.
mv "$V.partial" "$V"
grep -rl "$V.partial" "$V/bin" 2>/dev/null | xargs -r sed -i "s#$V.partial#$V#g"
echo "$V"
