#!/usr/bin/env bash
# System test (root): packaging/build.sh builds the .deb and .rpm; the .deb is installed on this
# machine (file list, the binary, the hook from its installed place, the TaskProlog link), an
# edited config survives `dpkg -r`, `dpkg --purge` leaves nothing; the .rpm is inspected with
# rpm -qlp / -qp --scripts and installed into a scratch root with the same file list.
set -euo pipefail
cd "$(dirname "$0")/../.."
for c in dpkg rpm; do command -v $c >/dev/null || { echo "FAIL: $c missing (apt-get install rpm)"; exit 1; }; done
dpkg -s ibwire >/dev/null 2>&1 && { echo "FAIL: an ibwire package is already installed here; not touching it"; exit 1; }
R=$(mktemp -d /tmp/ibwire-rpmroot-XXXX); L=$(mktemp -d /tmp/ibwire-pkglog-XXXX)
cleanup() { dpkg --purge ibwire >/dev/null 2>&1 || true; rm -rf "$R" "$L"; }
trap cleanup EXIT
packaging/build.sh > "$L/build.log" 2>&1 || { tail -30 "$L/build.log"; echo "FAIL: packaging/build.sh"; exit 1; }
deb=$(ls target/debian/ibwire_*.deb); rpmf=$(ls target/generate-rpm/ibwire-*.rpm)
want="/etc/enroot/hooks.d/90-ibwire.sh
/etc/ibwire.yaml
/usr/bin/ibwire
/usr/share/doc/ibwire/README.md
/usr/share/doc/ibwire/SECURITY.md
/usr/share/doc/ibwire/examples/allreduce.py
/usr/share/doc/ibwire/examples/ibwire.yaml
/usr/share/doc/ibwire/examples/slurm/existing-taskprolog.sh
/usr/share/doc/ibwire/examples/slurm/slurm.conf.snippet
/usr/share/doc/ibwire/examples/train-baremetal.sbatch
/usr/share/doc/ibwire/examples/train-pyxis.sbatch
/usr/share/doc/ibwire/examples/train.sbatch"
files() { grep -v '/$' | grep -v '/usr/share/doc/ibwire/copyright$' | sort; }
# .deb
dpkg -i "$deb" > /dev/null
got=$(dpkg -L ibwire | while read -r f; do [ -d "$f" ] || echo "$f"; done | files)
[ "$got" = "$want" ] || { echo "FAIL: .deb file list"; diff <(echo "$want") <(echo "$got"); exit 1; }
grep -qx '/etc/ibwire.yaml' /var/lib/dpkg/info/ibwire.conffiles && grep -qx '/etc/enroot/hooks.d/90-ibwire.sh' /var/lib/dpkg/info/ibwire.conffiles \
  || { echo "FAIL: config files not marked"; exit 1; }
/usr/bin/ibwire --version | grep -q '^ibwire ' || { echo "FAIL: ibwire --version"; exit 1; }
[ "$(readlink /usr/bin/ibwire-taskprolog)" = ibwire ] || { echo "FAIL: no ibwire-taskprolog link"; exit 1; }
grep -q '^IBWIRE="/usr/bin/ibwire"$' /etc/enroot/hooks.d/90-ibwire.sh || { echo "FAIL: hook path"; exit 1; }
# The hook from its installed place, as enroot runs it (this machine has no RDMA: no output).
env -i PATH=/usr/bin:/bin ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=/dev/null /etc/enroot/hooks.d/90-ibwire.sh \
  || { echo "FAIL: the installed hook failed"; exit 1; }
env -i PATH=/usr/bin:/bin /usr/bin/ibwire-taskprolog > /dev/null || { echo "FAIL: the TaskProlog link"; exit 1; }
# The shipped config changes nothing: every setting commented out.
[ -z "$(grep -v '^#' /etc/ibwire.yaml | grep -v '^[[:space:]]*$' || true)" ] || { echo "FAIL: /etc/ibwire.yaml sets something"; exit 1; }
echo "hca: {exclude: [mlx5_9]}" >> /etc/ibwire.yaml
dpkg -r ibwire > /dev/null
[ ! -e /usr/bin/ibwire ] && [ ! -L /usr/bin/ibwire-taskprolog ] && [ ! -e /usr/share/doc/ibwire/README.md ] || { echo "FAIL: dpkg -r left files"; exit 1; }
grep -q 'mlx5_9' /etc/ibwire.yaml || { echo "FAIL: the edited config did not survive dpkg -r"; exit 1; }
dpkg --purge ibwire > /dev/null
for f in $want /usr/bin/ibwire-taskprolog; do [ ! -e "$f" ] && [ ! -L "$f" ] || { echo "FAIL: $f left after purge"; exit 1; }; done
# .rpm
got=$(rpm -qlp "$rpmf" 2>/dev/null | files)
[ "$got" = "$want" ] || { echo "FAIL: .rpm file list"; diff <(echo "$want") <(echo "$got"); exit 1; }
rpm -qp --scripts "$rpmf" 2>/dev/null | grep -q 'ln -sf ibwire /usr/bin/ibwire-taskprolog' || { echo "FAIL: rpm scripts"; exit 1; }
rpm -qp --configfiles "$rpmf" 2>/dev/null | sort | tr '\n' ' ' | grep -q '/etc/enroot/hooks.d/90-ibwire.sh /etc/ibwire.yaml' \
  || { echo "FAIL: rpm config files"; rpm -qp --configfiles "$rpmf"; exit 1; }
rpm -qp --requires "$rpmf" 2>/dev/null | grep -v '^rpmlib(' | grep -q . || true
rpm --root "$R" --dbpath /rpmdb --initdb
rpm --root "$R" --dbpath /rpmdb -i --nodeps --noscripts "$rpmf"
got=$(cd "$R" && find . -type f | sed 's#^\.##' | grep -v '^/rpmdb/' | files)
[ "$got" = "$want" ] || { echo "FAIL: files installed by the .rpm"; diff <(echo "$want") <(echo "$got"); exit 1; }
"$R/usr/bin/ibwire" --version | grep -q '^ibwire ' || { echo "FAIL: ibwire from the .rpm"; exit 1; }
echo "ok: .deb installed, hook and TaskProlog link work, edited config kept by -r, purge clean; .rpm file list, scripts and config files checked, installed into a scratch root"
