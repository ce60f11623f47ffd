#!/usr/bin/env bash
# System test (root): packaging/build.sh builds, for x86_64 and aarch64, the static binaries,
# tarballs, .deb and .rpm. The x86_64 static binary runs in an empty chroot and the aarch64 one
# under qemu-user, both deciding exactly what the native build decides on the fixture trees; the
# packages hold the static binary with no libc dependency. The .deb is installed on this machine
# (file list, the binary, the hook link from its installed place, the TaskProlog link); with the
# sh form in its place the hook survives a binary that cannot run (one warning, exit 0); an
# edited config survives `dpkg -r`, after which a start is silent and exits 0 even in strict
# mode; a reinstall keeps an admin's removal of the hook; `dpkg --purge` leaves nothing.
# The .rpm is inspected with rpm -qlp / -qp --scripts and installed into a scratch root.
# IBWIRE_KEEP_DIST=1 reuses dist/ from an earlier packaging/build.sh (development only).
set -euo pipefail
cd "$(dirname "$0")/../.."
for c in dpkg rpm qemu-aarch64-static; do command -v $c >/dev/null || { echo "FAIL: $c missing (apt-get install rpm qemu-user-static)"; exit 1; }; done
dpkg -s ibwire >/dev/null 2>&1 && { echo "FAIL: an ibwire package is already installed here; not touching it"; exit 1; }
R=$(mktemp -d /tmp/ibwire-rpmroot-XXXX); L=$(mktemp -d /tmp/ibwire-pkglog-XXXX); X=$(mktemp -d /tmp/ibwire-static-XXXX)
# A hook this machine already has (CI once found a link to /usr/local/bin/ibwire there) is set
# aside while the package is tested, and put back after: postinst keeps an existing hook, as it
# should, so the test needs none there.
H=/etc/enroot/hooks.d/90-ibwire.sh; prior=
if [ -e "$H" ] || [ -L "$H" ]; then
  echo "packages: $H already here ($(ls -l "$H" | sed 's/.* \/etc/\/etc/')): set aside, put back after"
  mv "$H" "$L/prior-hook"; prior=1
fi
had_etc_enroot=$([ -e /etc/enroot ] && echo 1 || true)
cleanup() {
  dpkg --purge ibwire >/dev/null 2>&1 || true
  [ -z "$prior" ] || { mkdir -p "${H%/*}"; mv -f "$L/prior-hook" "$H"; }
  rm -rf "$R" "$L" "$X"
}
trap cleanup EXIT
[ -n "${IBWIRE_KEEP_DIST:-}" ] || rm -rf dist
[ -n "${IBWIRE_KEEP_DIST:-}" ] || packaging/build.sh > "$L/build.log" 2>&1 || { tail -30 "$L/build.log"; echo "FAIL: packaging/build.sh"; exit 1; }
v=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
for a in x86_64 aarch64; do
  for f in "ibwire-$v-$a-linux-musl" "ibwire-$v-$a-linux-musl.tar.gz"; do
    [ -f "dist/$f" ] && (cd dist && sha256sum -c --quiet "$f.sha256") || { echo "FAIL: dist/$f or its checksum"; ls dist; exit 1; }
  done
  file "dist/ibwire-$v-$a-linux-musl" | grep -q 'statically linked\|static-pie linked' || { echo "FAIL: $a binary not static: $(file "dist/ibwire-$v-$a-linux-musl")"; exit 1; }
  tar tzf "dist/ibwire-$v-$a-linux-musl.tar.gz" > "$L/tar-$a"
  for f in ibwire install.sh hooks/90-ibwire.sh ibwire.yaml.example man/ibwire.1.gz completions/ibwire; do
    grep -qx "ibwire-$v-$a-linux-musl/$f" "$L/tar-$a" || { echo "FAIL: $a tarball has no $f"; exit 1; }
  done
done
# Both static binaries lay the hook's code out first (packaging/hook.ld, through build.rs); on
# x86_64 the section holds what a hook run executes (valgrind), or packaging/hook.ld is stale.
for a in x86_64 aarch64; do
  readelf -SW "dist/ibwire-$v-$a-linux-musl" | grep -q ' \.text\.hook ' || { echo "FAIL: $a binary has no .text.hook section (packaging/hook.ld not linked)"; exit 1; }
done
IBWIRE="$PWD/dist/ibwire-$v-x86_64-linux-musl" bench/hook-order.sh --check 90 > "$L/order" 2>&1 || { cat "$L/order"; echo "FAIL: bench/hook-order.sh --check"; exit 1; }
echo "packages: $(tail -1 "$L/order")"
# The static binaries decide what the native build decides: the story node, a plain node, and a
# real hwloc capture. x86_64 in an empty chroot (nothing but the binary and the trees), aarch64
# under qemu-user.
cargo build --release --locked -q --example gen_tree --bin ibwire
mkdir -p "$X/root/trees"; cp "dist/ibwire-$v-x86_64-linux-musl" "$X/root/ibwire"
target/release/examples/gen_tree story "$X/root/trees/story"; target/release/examples/gen_tree plain "$X/root/trees/plain"
tar -xjf tests/fixtures/real/hwloc/nvidiagpunumanodes.tar.bz2 -C "$X/root/trees"
native() { target/release/ibwire "$@" 2>&1 | sed "s#$X/root##g"; }
for t in story plain nvidiagpunumanodes; do
  for args in "env --format json" "topo --json --no-nvidia-smi" "probe --json --no-nvidia-smi" "doctor --json"; do
    # shellcheck disable=SC2086
    want_out=$(native $args --root "$X/root/trees/$t" || true)
    # shellcheck disable=SC2086
    chroot_out=$(chroot "$X/root" /ibwire $args --root "/trees/$t" 2>&1 || true)
    # shellcheck disable=SC2086
    qemu_out=$(qemu-aarch64-static "dist/ibwire-$v-aarch64-linux-musl" $args --root "$X/root/trees/$t" 2>&1 | sed "s#$X/root##g" || true)
    [ -n "$want_out" ] || { echo "FAIL: the native build printed nothing: ibwire $args on $t"; exit 1; }
    [ "$chroot_out" = "$want_out" ] || { echo "FAIL: static x86_64 in an empty chroot differs from the native build: ibwire $args on $t"; diff <(echo "$want_out") <(echo "$chroot_out") | head; exit 1; }
    [ "$qemu_out" = "$want_out" ] || { echo "FAIL: aarch64 under qemu differs from the native build: ibwire $args on $t"; diff <(echo "$want_out") <(echo "$qemu_out") | head; exit 1; }
  done
done
# The hook too (the static build allocates from an arena there, static_alloc.rs): the same
# fstab, environ and stderr as the native build, with an image with and without rdma-core.
mkdir -p "$X/root/out" "$X/root/rootfs/dev" "$X/root/verbs/dev" "$X/root/verbs/usr/lib/x86_64-linux-gnu/libibverbs"
touch "$X/root/verbs/usr/lib/x86_64-linux-gnu/libibverbs.so.1" "$X/root/verbs/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so"
hook_in() { # prefix (where / is), command...: the hook's fstab, environ and stderr
  local p=$1; shift
  : > "$X/root/out/fstab"; printf 'PATH=/bin\n' > "$X/root/out/environ"
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin ENROOT_ROOTFS="$p/$img" ENROOT_MOUNTS="$p/out/fstab" ENROOT_ENVIRON="$p/out/environ" ENROOT_RESTRICT_DEV=y \
    SLURM_NNODES=2 SLURM_JOB_ID=7 "$@" hook --root "$p/trees/$t" 2>&1 | sed "s#$X/root##g"
  echo "rc=${PIPESTATUS[0]}"; sed "s#$X/root##g" "$X/root/out/fstab" "$X/root/out/environ"
}
for t in story plain nvidiagpunumanodes; do
  for img in rootfs verbs; do
    want_out=$(hook_in "$X/root" target/release/ibwire)
    chroot_out=$(hook_in "" chroot "$X/root" /ibwire)
    echo "$want_out" | grep -q '^rc=0$' || { echo "FAIL: the native hook on $t/$img: $want_out"; exit 1; }
    [ "$chroot_out" = "$want_out" ] || { echo "FAIL: the static hook in an empty chroot differs from the native build on $t/$img"; diff <(echo "$want_out") <(echo "$chroot_out") | head; exit 1; }
  done
done
dpkg-deb -f "dist/ibwire_${v}-1_arm64.deb" Architecture | grep -qx arm64 || { echo "FAIL: arm64 .deb architecture"; exit 1; }
[ -z "$(dpkg-deb -f "dist/ibwire_${v}-1_amd64.deb" Depends)" ] || { echo "FAIL: the .deb depends on something: $(dpkg-deb -f "dist/ibwire_${v}-1_amd64.deb" Depends)"; exit 1; }
for a in x86_64 aarch64; do
  ! rpm -qp --requires "dist/ibwire-${v}-1.$a.rpm" 2>/dev/null | grep -qi 'libc\|glibc\|\.so' || { echo "FAIL: the $a .rpm requires a libc"; exit 1; }
  [ "$(rpm -qp --qf '%{ARCH}' "dist/ibwire-${v}-1.$a.rpm" 2>/dev/null)" = "$a" ] || { echo "FAIL: $a .rpm architecture"; exit 1; }
done
deb=dist/ibwire_${v}-1_amd64.deb; rpmf=dist/ibwire-${v}-1.x86_64.rpm
want="/etc/ibwire.yaml
UNITDIR/ibwire-cdi.service
UNITDIR/ibwire-cdi.timer
/usr/bin/ibwire
/usr/share/bash-completion/completions/ibwire
/usr/share/doc/ibwire/README.md
/usr/share/doc/ibwire/ARCHITECTURE.md
/usr/share/doc/ibwire/SECURITY.md
/usr/share/doc/ibwire/docs/admin.md
/usr/share/doc/ibwire/docs/commands.md
/usr/share/doc/ibwire/docs/json.md
/usr/share/doc/ibwire/docs/performance.md
/usr/share/doc/ibwire/docs/troubleshooting.md
/usr/share/doc/ibwire/examples/allreduce.py
/usr/share/doc/ibwire/examples/ibwire.yaml
/usr/share/doc/ibwire/examples/k8s/pytorchjob.yaml
/usr/share/doc/ibwire/examples/nhc/ibwire.nhc
/usr/share/doc/ibwire/examples/podman.sh
/usr/share/doc/ibwire/examples/slurm/existing-taskprolog.sh
/usr/share/doc/ibwire/examples/slurm/slurm.conf.snippet
/usr/share/doc/ibwire/examples/train-baremetal.sbatch
/usr/share/doc/ibwire/examples/train-pyxis.sbatch
/usr/share/doc/ibwire/examples/train.sbatch
/usr/share/fish/vendor_completions.d/ibwire.fish
/usr/share/ibwire/90-ibwire.sh
$(target/release/ibwire man --dir "$L" 2>/dev/null; cd "$L" && ls ./*.1 | sed 's#^\./#/usr/share/man/man1/#; s#$#.gz#')
/usr/share/zsh/ZSHDIR/_ibwire"
files() { grep -v '/$' | grep -v '/usr/share/doc/ibwire/copyright$' | sort; }
want=$(echo "$want" | sort)
# .deb (zsh: Debian's vendor-completions; the .rpm: Fedora's site-functions)
dpkg -i "$deb" > /dev/null
got=$(dpkg -L ibwire | while read -r f; do [ -d "$f" ] || echo "$f"; done | files)
deb_want=$(echo "$want" | sed 's#ZSHDIR#vendor-completions#; s#^UNITDIR#/lib/systemd/system#' | sort)
[ "$got" = "$deb_want" ] || { echo "FAIL: .deb file list"; diff <(echo "$deb_want") <(echo "$got"); exit 1; }
file /usr/bin/ibwire | grep -q 'static' || { echo "FAIL: the .deb's binary is not the static one"; exit 1; }
[ "$(cat /var/lib/dpkg/info/ibwire.conffiles)" = /etc/ibwire.yaml ] || { echo "FAIL: config files: $(cat /var/lib/dpkg/info/ibwire.conffiles)"; exit 1; }
/usr/bin/ibwire --version | grep -q '^ibwire ' || { echo "FAIL: ibwire --version"; exit 1; }
[ "$(readlink /usr/bin/ibwire-taskprolog)" = ibwire ] || { echo "FAIL: no ibwire-taskprolog link"; exit 1; }
[ "$(readlink /usr/bin/ibwire-health)" = ibwire ] || { echo "FAIL: no ibwire-health link"; exit 1; }
H=/etc/enroot/hooks.d/90-ibwire.sh
[ "$(readlink "$H")" = /usr/bin/ibwire ] || { echo "FAIL: the hook is not a link to /usr/bin/ibwire: $(ls -l "$H" 2>&1)"; exit 1; }
grep -q '^IBWIRE="/usr/bin/ibwire"$' /usr/share/ibwire/90-ibwire.sh || { echo "FAIL: the sh form's binary path"; exit 1; }
# A hook as enroot runs it (common::runparts: `if [ -x "$file" ]; then "$file" || <fail the
# start>`): skipped when `[ -x ]` fails, its status otherwise. This machine has no RDMA: no output.
start() { [ -x "$H" ] || return 0; env -i PATH=/usr/bin:/bin ENROOT_MOUNTS=/dev/null ENROOT_ENVIRON=/dev/null "$@" "$H"; }
start || { echo "FAIL: the installed hook failed"; exit 1; }
env -i PATH=/usr/bin:/bin /usr/bin/ibwire-taskprolog > /dev/null || { echo "FAIL: the TaskProlog link"; exit 1; }
# A binary that cannot run (a machine this kernel does not run): the link form fails the start
# (enroot names the hook and its status), the sh form is one warning and the start goes on;
# strict fails it.
cp /usr/bin/ibwire "$L/ibwire.real"
{ printf '\177ELF\002\001\001\000'; head -c 10 /dev/zero; printf '\167\167'; head -c 44 /dev/zero; } > /usr/bin/ibwire
if start 2>/dev/null; then echo "FAIL: the link form ran a binary that cannot run"; exit 1; fi
# As docs/admin.md says to (install(1) replaces the link; cp would write through it).
install -m 755 /usr/share/ibwire/90-ibwire.sh /etc/enroot/hooks.d/
out=$(start 2>&1) || { echo "FAIL: a binary that cannot run failed the start under the sh form: $out"; exit 1; }
[ "$(echo "$out" | grep -c '^ibwire-hook: warning: /usr/bin/ibwire cannot be run here')" = 1 ] || { echo "FAIL: no warning: $out"; exit 1; }
if start IBWIRE_STRICT=1 2>/dev/null; then echo "FAIL: strict mode started anyway"; exit 1; fi
cp "$L/ibwire.real" /usr/bin/ibwire
ln -sf /usr/bin/ibwire "$H"
# The shipped config changes nothing: every setting commented out.
[ -z "$(grep -v '^#' /etc/ibwire.yaml | grep -v '^[[:space:]]*$' || true)" ] || { echo "FAIL: /etc/ibwire.yaml sets something"; exit 1; }
echo "hca: {exclude: [mlx5_9]}" >> /etc/ibwire.yaml
dpkg -r ibwire > /dev/null
[ ! -e /usr/bin/ibwire ] && [ ! -L /usr/bin/ibwire-taskprolog ] && [ ! -L /usr/bin/ibwire-health ] && [ ! -e /usr/share/doc/ibwire/README.md ] || { echo "FAIL: dpkg -r left files"; exit 1; }
grep -q 'mlx5_9' /etc/ibwire.yaml || { echo "FAIL: the edited config did not survive dpkg -r"; exit 1; }
# dpkg -r keeps the hook link, as it keeps config files; the binary is gone, enroot skips the
# dangling link: a start is silent and goes on, even in strict mode.
[ -L "$H" ] || { echo "FAIL: dpkg -r removed the hook link"; exit 1; }
for strict in 0 1; do
  out=$(start IBWIRE_STRICT=$strict 2>&1) && [ -z "$out" ] \
    || { echo "FAIL: after dpkg -r a start (IBWIRE_STRICT=$strict) was not silent and successful: $out"; exit 1; }
done
# Installed again, the kept link works again; an admin who removed the hook keeps it removed
# through a reinstall (postinst makes it at the first install only).
dpkg -i "$deb" > /dev/null
start || { echo "FAIL: the hook after a reinstall"; exit 1; }
rm "$H"; dpkg -i "$deb" > /dev/null
[ ! -e "$H" ] && [ ! -L "$H" ] || { echo "FAIL: a reinstall put back the hook the admin removed"; exit 1; }
ln -s /usr/bin/ibwire "$H"
dpkg --purge ibwire > /dev/null
for f in $want /usr/bin/ibwire-taskprolog /usr/bin/ibwire-health "$H"; do [ ! -e "$f" ] && [ ! -L "$f" ] || { echo "FAIL: $f left after purge"; exit 1; }; done
[ -n "$had_etc_enroot" ] || [ ! -e /etc/enroot ] || { echo "FAIL: purge left /etc/enroot, which postinst made"; exit 1; }
# .rpm
want=$(echo "$want" | sed 's#/zsh/ZSHDIR/#/zsh/site-functions/#; s#^UNITDIR#/usr/lib/systemd/system#' | sort)
got=$(rpm -qlp "$rpmf" 2>/dev/null | files)
[ "$got" = "$want" ] || { echo "FAIL: .rpm file list"; diff <(echo "$want") <(echo "$got"); exit 1; }
rpm -qp --scripts "$rpmf" 2>/dev/null > "$L/rpm-scripts"
grep -q 'ln -sf ibwire /usr/bin/ibwire-taskprolog' "$L/rpm-scripts" && grep -q 'ln -sf ibwire /usr/bin/ibwire-health' "$L/rpm-scripts" && grep -q 'ln -s /usr/bin/ibwire "$h"' "$L/rpm-scripts" \
  || { echo "FAIL: rpm scripts"; cat "$L/rpm-scripts"; exit 1; }
# The .rpm's scripts, run here as rpm runs them ($1: 1 install, 2 upgrade, 0 erase), in a
# scratch /etc: the first install makes the link, an upgrade keeps an admin's removal, erase
# removes only that link.
sed -n '/^postinstall scriptlet/,/^postuninstall scriptlet/p' "$L/rpm-scripts" | sed '1d;$d' | sed "s#/etc/enroot#$R-etc/enroot#g; s#/usr/bin/ibwire-taskprolog#$R-tp#; s#/usr/bin/ibwire-health#$R-health#" > "$L/post"
sed -n '/^postuninstall scriptlet/,$p' "$L/rpm-scripts" | sed '1d' | sed "s#/etc/enroot#$R-etc/enroot#g; s#/usr/bin/ibwire-taskprolog#$R-tp#; s#/usr/bin/ibwire-health#$R-health#" > "$L/postun"
sh -e "$L/post" 1 && [ "$(readlink "$R-etc/enroot/hooks.d/90-ibwire.sh")" = /usr/bin/ibwire ] || { echo "FAIL: rpm %post made no hook link"; cat "$L/post"; exit 1; }
rm "$R-etc/enroot/hooks.d/90-ibwire.sh"; sh -e "$L/post" 2
[ ! -L "$R-etc/enroot/hooks.d/90-ibwire.sh" ] || { echo "FAIL: rpm %post (upgrade) put back a removed hook"; exit 1; }
sh -e "$L/post" 1; sh -e "$L/postun" 0
[ ! -e "$R-etc/enroot" ] || { echo "FAIL: rpm %postun left the hook link or the directories %post made"; find "$R-etc"; exit 1; }
rm -rf "$R-etc" "$R-tp"
[ "$(rpm -qp --configfiles "$rpmf" 2>/dev/null)" = /etc/ibwire.yaml ] || { echo "FAIL: rpm config files"; rpm -qp --configfiles "$rpmf"; exit 1; }
rpm -qp --requires "$rpmf" 2>/dev/null | grep -v '^rpmlib(' | grep -q . || true
rpm --root "$R" --dbpath /rpmdb --initdb
rpm --root "$R" --dbpath /rpmdb -i --nodeps --noscripts "$rpmf"
got=$(cd "$R" && find . -type f | sed 's#^\.##' | grep -v '^/rpmdb/' | files)
[ "$got" = "$want" ] || { echo "FAIL: files installed by the .rpm"; diff <(echo "$want") <(echo "$got"); exit 1; }
"$R/usr/bin/ibwire" --version | grep -q '^ibwire ' || { echo "FAIL: ibwire from the .rpm"; exit 1; }
echo "ok: static x86_64 (empty chroot) and aarch64 (qemu-user) binaries decide as the native build on 3 trees x 4 commands, the static hook writes what the native one does (3 trees x 2 images); .deb/.rpm for both arches, no libc dependency; .deb installed, hook link and TaskProlog link work, a binary that cannot run fails the link form and is one warning under the sh form, edited config kept by -r, a start after -r silent, a reinstall keeps an admin's removal, purge clean; .rpm file list, scripts (run in a scratch /etc) and config files checked, installed into a scratch root"
