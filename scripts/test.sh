#!/usr/bin/env bash
# The test command: installs dependencies, builds (Release, warnings as errors), runs every test
# (unit, CLI, integration), then builds again with AddressSanitizer + UndefinedBehaviorSanitizer
# and runs them all there too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "== build (Release, -Werror)"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release -DSTITCHFS_WERROR=ON
echo "== tests"
(cd build && ctest --output-on-failure -j2 --timeout 300)
if [ "${STITCHFS_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build (ASan+UBSan)"
  bash scripts/build.sh build-asan -DSTITCHFS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
    -DSTITCHFS_WERROR=ON
  echo "== tests under ASan+UBSan"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     STITCHFS_YEAR_DAYS=90 ctest --output-on-failure -j2 --timeout 1200)
fi
