#!/usr/bin/env bash
# Installs the Debian 12 packages stitchfs needs. Idempotent: packages already present are not
# touched. Needs root (or sudo) only when something is missing.
# Usage: scripts/install-deps.sh           what building and running stitch and stitchfs needs
#        scripts/install-deps.sh --tests   that, and everything the tests need (scripts/test.sh;
#                                          the real ClickHouse is scripts/install-clickhouse.sh)
set -euo pipefail

# Building and running `stitch` and `stitchfs` (and the demo).
TOOL=(
  build-essential cmake pkg-config       # toolchain (build-essential brings dpkg-dev)
  libfuse3-dev fuse3                     # FUSE (library, fusermount3)
  libxxhash-dev                          # XXH3-128 checksums
  libexpat1-dev                          # manifest XML parser
  libcurl4-openssl-dev ca-certificates   # S3 client: HTTP(S), SigV4 signing, the system CA store
  zlib1g-dev libzstd-dev liblzma-dev libbz2-dev  # archive backups: deflate, zstd, xz/lzma, bzip2
  attr                                   # getfattr: the provenance xattrs the demo shows
)
# The tests, benchmarks, sanitizer and fuzz builds, and the Debian package's checks.
TESTS=(
  git                                    # the tests' fixtures and the package test's clone
  libgtest-dev                           # unit tests
  rsync procps                           # rsync, pkill used by the integration tests
  python3                                # helpers of the integration and fault tests, the layer check
  clang-14 libclang-rt-14-dev llvm-14    # sanitizer build with the fuzz targets; llvm-symbolizer
  zip zstd xz-utils bzip2 libarchive-tools       # archive fixtures in the tests (zip, tar, bsdtar)
  curl ceph-mon ceph-osd radosgw         # a real S3 server (radosgw) for the tests and benchmarks
  lintian                                # checks the Debian package (tests/integration/package_test.sh)
)

case "${1:-}" in
  "") PACKAGES=("${TOOL[@]}") ;;
  --tests) PACKAGES=("${TOOL[@]}" "${TESTS[@]}") ;;
  *) echo "usage: $0 [--tests]" >&2; exit 2 ;;
esac

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
