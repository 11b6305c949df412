#!/usr/bin/env bash
# Configures and builds into build/ (or $1), incrementally. Extra args go to cmake (and are
# applied again on every run, so a build folder takes the options it is given now).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/CMakeCache.txt" ] || [ $# -gt 0 ]; then
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$dir" -j"$(nproc)" >/dev/null
