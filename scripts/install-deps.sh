#!/usr/bin/env bash
# Installs the Debian 12 packages stitchfs needs to build, test and run. Idempotent: packages
# already present are not touched. Needs root (or sudo) only when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git   # toolchain
  libfuse3-dev fuse3                     # FUSE (library, fusermount3)
  libxxhash-dev                          # XXH3-128 checksums
  libexpat1-dev                          # manifest XML parser
  libgtest-dev                           # unit tests
  attr rsync procps                      # getfattr, rsync, pkill used by the integration tests
  clang-14 libclang-rt-14-dev llvm-14    # sanitizer build with the fuzz targets; llvm-symbolizer
  libcurl4-openssl-dev ca-certificates   # S3 client: HTTP(S), SigV4 signing, the system CA store
  zlib1g-dev libzstd-dev liblzma-dev libbz2-dev  # archive backups: deflate, zstd, xz/lzma, bzip2
  zip zstd xz-utils bzip2 libarchive-tools       # archive fixtures in the tests (zip, tar, bsdtar)
  curl ceph-mon ceph-osd radosgw         # a real S3 server (radosgw) for the tests and benchmarks
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
