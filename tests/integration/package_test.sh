#!/usr/bin/env bash
# The Debian package: scripts/package.sh builds it, lintian finds no error in it, and its files,
# unpacked into a scratch root (dpkg-deb -x), work there: the version is the project's, a backup
# and an incremental one, a mount through the packaged mount helper with fstab-only options, a
# store mounted by mount(8) from an fstab line through /sbin/mount.fuse.stitchfs, and the bash
# completion.
# Usage: package_test.sh REPO
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
REPO=$1
export STITCH_NO_PROGRESS=1
for tool in dpkg-deb lintian cpack; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/install-deps.sh --tests)"; exit 1; }
done
work=$(mktemp -d)
mounts=()
cleanup() {
  unmount_all "${mounts[@]}"
  [ -L /sbin/mount.fuse.stitchfs ] && [ "$(readlink /sbin/mount.fuse.stitchfs)" = "$work/helper" ] &&
    rm -f /sbin/mount.fuse.stitchfs
  rm -rf "$work"
}
trap cleanup EXIT

t=$SECONDS
deb=$(bash "$REPO/scripts/package.sh") || { echo "FAIL: scripts/package.sh"; exit 1; }
echo "package built in $((SECONDS - t)) s: $deb"
version=$(dpkg-deb -f "$deb" Version)
check "the file is named stitchfs_VERSION_amd64.deb" test "$(basename "$deb")" = "stitchfs_${version}_amd64.deb"
lintian --fail-on error "$deb" >"$work/lintian" 2>&1
rc=$?
sed 's/^/  lintian: /' "$work/lintian"
check "lintian finds no error" test "$rc" = 0
check "lintian ran on it" bash -c "! grep -q 'E: ' '$work/lintian'"
depends=$(dpkg-deb -f "$deb" Depends)
check "Depends: fuse3" grep -qE '(^|, )fuse3(,|$)' <<<"$depends"
check "Depends: libfuse3 and libc (dpkg-shlibdeps), libcurl4 (loaded when object storage is used)" \
  bash -c "grep -q 'libfuse3-3' <<<'$depends' && grep -q 'libcurl4' <<<'$depends' && grep -q 'libc6' <<<'$depends'"
check "Depends: the archive codecs (loaded when an archive needs one)" \
  bash -c "for p in zlib1g libzstd1 liblzma5 libbz2-1.0; do grep -q \"\$p\" <<<'$depends' || exit 1; done"

R=$work/root
dpkg-deb -x "$deb" "$R"
for f in usr/bin/stitch usr/bin/stitchfs sbin/mount.stitchfs usr/share/man/man1/stitch.1.gz \
  usr/share/man/man1/stitchfs.1.gz usr/share/man/man5/stitch-format.5.gz \
  usr/share/man/man8/mount.stitchfs.8.gz usr/share/bash-completion/completions/stitch \
  usr/share/doc/stitchfs/examples/mnt-backup.mount usr/share/doc/stitchfs/copyright; do
  check "packaged: /$f" test -f "$R/$f"
done
check "/sbin/mount.fuse.stitchfs -> mount.stitchfs" test "$(readlink "$R/sbin/mount.fuse.stitchfs")" = mount.stitchfs
check "stitchfs's completion is stitch's" test "$(readlink "$R/usr/share/bash-completion/completions/stitchfs")" = stitch
check "the version is the one stitch --version prints" test "$("$R/usr/bin/stitch" --version)" = "stitch $version"
check "and the project's" grep -q "project(stitchfs VERSION $version " "$REPO/CMakeLists.txt"
check "the manual pages read" bash -c "zcat '$R/usr/share/man/man1/stitch.1.gz' | grep -q '^\.SH EXIT STATUS'"

# A backup and an incremental one with the packaged stitch.
S=$work/src
mkdir -p "$S/logs"
head -c 200000 /dev/urandom >"$S/logs/app.log"
"$R/usr/bin/stitch" backup "$S" "$work/store/b1" --timestamp '2026-10-01 03:00:00' >/dev/null 2>&1
check "packaged stitch: a backup" test -f "$work/store/b1/.backup"
head -c 1000 /dev/urandom >>"$S/logs/app.log"
stored=$("$R/usr/bin/stitch" backup "$S" "$work/store/b2" --base "$work/store/b1" \
  --timestamp '2026-10-02 03:00:00' --json 2>/dev/null | sed -n 's/.*"bytes_stored":\([0-9]*\).*/\1/p')
check "packaged stitch: an incremental backup stores the appended bytes ($stored)" test "${stored:-x}" = 1000
check "packaged stitch verifies it" "$R/usr/bin/stitch" verify "$work/store/b2"

# Completion, sourced as bash-completion would.
out=$(bash -c "source '$R/usr/share/bash-completion/completions/stitch'; COMP_WORDS=(stitch ver); COMP_CWORD=1; _stitch; echo \"\${COMPREPLY[*]}\"")
check "packaged completion completes a command ($out)" test "$out" = verify

if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  echo "SKIP: no /dev/fuse or fusermount3: the mounts"
  finish
  exit
fi
export PATH=$R/usr/bin:$PATH  # The packaged stitchfs, as the helper finds it once installed.
# The helper as mount(8) calls it for an fstab entry: fstab-only options are removed.
mkdir -p "$work/m1"
mounts+=("$work/m1")
"$R/sbin/mount.stitchfs" "$work/store/b2" "$work/m1" -o ro,nofail,noauto,_netdev,x-systemd.automount
check "a mount through the packaged helper" diff -r "$S" "$work/m1"
unmount_all "$work/m1"
# An fstab line, mounted by mount(8) through /sbin/mount.fuse.stitchfs: for the test (if no other
# is installed) a script that runs the packaged one with the packaged stitchfs on PATH, where an
# installed package has it (mount(8) gives helpers a PATH of its own).
if [ -e /sbin/mount.fuse.stitchfs ] || [ -L /sbin/mount.fuse.stitchfs ] || [ ! -w /sbin ]; then
  echo "SKIP: /sbin/mount.fuse.stitchfs is taken or /sbin is read-only: the fstab line"
else
  printf '#!/bin/sh\nPATH=%s/usr/bin:$PATH exec %s/sbin/mount.fuse.stitchfs "$@"\n' "$R" "$R" >"$work/helper"
  chmod +x "$work/helper"
  ln -s "$work/helper" /sbin/mount.fuse.stitchfs
  mkdir -p "$work/m2"
  mounts+=("$work/m2")
  echo "$work/store  $work/m2  fuse.stitchfs  ro,nofail,noauto,_netdev,allow_other  0  0" >"$work/fstab"
  mount -T "$work/fstab" "$work/m2" 2>"$work/mount.err"
  check "mount(8) mounts a store from an fstab line ($(cat "$work/mount.err"))" mountpoint -q "$work/m2"
  check "fstab mount: latest -> b2" test "$(readlink "$work/m2/latest")" = b2
  check "fstab mount: the latest backup reads as its source" diff -r "$S" "$work/m2/latest"
  check "fstab mount: at/ the first day, before the log grew" \
    test "$(stat -c %s "$work/m2/at/2026-10-01T12:00/logs/app.log")" = 200000
  umount "$work/m2"
  rm -f /sbin/mount.fuse.stitchfs
fi
finish
