#!/usr/bin/env bash
# Configures and builds into build/ (or $1), incrementally. Extra args go to cmake (and are
# applied again on every run, so a build folder takes the options it is given now); args after
# "--" are the targets to build (default: all). When $CXX names another compiler than the one a
# build folder was configured with (CI moved build-asan from gcc to clang), the folder is
# removed and configured anew: CMake cannot switch compilers in place.
# Usage: scripts/build.sh [DIR [CMAKE_ARG...] [-- TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake_args=()
targets=()
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then
    shift
    targets=("$@")
    break
  fi
  cmake_args+=("$1")
  shift
done
if [ -n "${CXX:-}" ] && [ -f "$dir/CMakeCache.txt" ]; then
  cached=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")
  wanted=$(command -v "$CXX" || echo "$CXX")
  if [ "$(readlink -f "$cached")" != "$(readlink -f "$wanted")" ]; then
    echo "build.sh: $dir was configured with $cached, not $CXX: configuring it anew" >&2
    rm -rf "$dir"
  fi
fi
if [ ! -f "$dir/CMakeCache.txt" ] || [ ${#cmake_args[@]} -gt 0 ]; then
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_args[@]}" >/dev/null
fi
cmake --build "$dir" -j"$(nproc)" ${targets[@]:+--target "${targets[@]}"} >/dev/null
