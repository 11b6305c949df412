#!/usr/bin/env bash
# The test command: installs dependencies (the tool's and the tests', and the real ClickHouse),
# builds (Release, warnings as errors), runs every test (unit, CLI, integration, fault,
# clickhouse; the demo; the Debian package built by scripts/package.sh and checked with
# lintian), then builds again with clang, AddressSanitizer + UndefinedBehaviorSanitizer and the
# libFuzzer targets, and runs them all there too but the clickhouse and package ones, with each
# fuzz target for a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
# The real ClickHouse the `clickhouse` tests run against (npm chdb, cached outside the tree).
bash scripts/install-clickhouse.sh >/dev/null
echo "== build (Release, -Werror)"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release -DSTITCHFS_WERROR=ON
echo "== tests"
(cd build && ctest --output-on-failure -j2 --timeout 300)
if [ "${STITCHFS_SKIP_SANITIZERS:-0}" != 1 ]; then
  # clang, so that the one sanitizer build also builds the libFuzzer targets (fuzz/), which run
  # with the tests: once over their seed corpus, then STITCHFS_FUZZ_SECONDS (default 10) each.
  echo "== build (ASan+UBSan, clang-14, with the fuzz targets)"
  CC=clang-14 CXX=clang++-14 bash scripts/build.sh build-asan -DSTITCHFS_SANITIZE=ON \
    -DSTITCHFS_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug -DSTITCHFS_WERROR=ON
  if ! command -v llvm-symbolizer >/dev/null && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
    export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
  fi
  echo "== tests under ASan+UBSan (and the fuzz targets)"
  # The real-ClickHouse tests check what stitch reads and writes, not its memory, and the
  # package test builds its own binaries: once, above.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     STITCHFS_YEAR_DAYS=90 ctest --output-on-failure -j2 --timeout 1200 -LE 'clickhouse|package')
fi
