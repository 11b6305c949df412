#!/usr/bin/env bash
# Builds the Debian package stitchfs_VERSION_amd64.deb (CPack: cmake/package.cmake) and prints
# its path: stitch and stitchfs built in build-deb/ (Release, unity build, Debian's hardening
# flags from dpkg-buildflags, prefix /usr, the mount helper in /sbin), the manual pages, the
# mount helper and its mount.fuse.stitchfs link, bash completion, the systemd unit as an
# example; Depends from dpkg-shlibdeps, and fuse3. VERSION is the project's (CMakeLists.txt),
# the one `stitch --version` prints. Needs what scripts/install-deps.sh installs.
# Usage: scripts/package.sh [BUILD_DIR]   (default: build-deb)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-deb}
# Debian's flags (stack protector, fortify, relro, now), without -g: the binaries are stripped.
mkdir -p "$dir"
flags() { dpkg-buildflags --get "$1" | sed 's/\(^\| \)-g\( \|$\)/ /'; }
bash scripts/build.sh "$dir" -DCMAKE_BUILD_TYPE=Release -DSTITCHFS_TESTS=OFF -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_INSTALL_PREFIX=/usr -DSTITCHFS_SBIN_DIR=/sbin \
  "-DCMAKE_CXX_FLAGS=$(flags CPPFLAGS) $(flags CXXFLAGS)" "-DCMAKE_EXE_LINKER_FLAGS=$(flags LDFLAGS)" \
  -- stitch stitchfs 2>"$dir/build.log" || { cat "$dir/build.log" >&2; exit 1; }  # Warnings: logged.
rm -f "$dir"/stitchfs_*.deb
(cd "$dir" && cpack -G DEB >cpack.log 2>&1) || { cat "$dir/cpack.log" >&2; exit 1; }
ls "$PWD/$dir"/stitchfs_*_amd64.deb
