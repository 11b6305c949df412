#!/usr/bin/env bash
# The test command: installs dependencies, builds, runs every test (unit and integration), then
# builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the unit tests there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "== build (RelWithDebInfo)"
bash scripts/build.sh build
echo "== tests"
(cd build && ctest --output-on-failure -j2 --timeout 300)
if [ "${STITCHFS_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build (ASan+UBSan)"
  bash scripts/build.sh build-asan -DSTITCHFS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  echo "== tests under ASan+UBSan"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     STITCHFS_YEAR_DAYS=90 ctest --output-on-failure -j2 --timeout 1200)
fi
