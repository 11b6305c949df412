#!/usr/bin/env bash
# Fuzzes longer than CI does. Builds build-fuzz/ (clang-14, ASan + UBSan + libFuzzer,
# RelWithDebInfo) incrementally, then runs each fuzz target (or the ones named) for SECONDS
# seconds on a working corpus in build-fuzz/fuzz-corpus/TARGET/ (seeded from fuzz/corpus/TARGET/
# and kept between runs, so runs build on each other; the repository's corpus is not written),
# and prints per target: runs executed, runs per second, coverage (cov:, ft:), new corpus files
# and the crash files found (in build-fuzz/fuzz-artifacts/TARGET/). Exits 1 if a target crashed,
# hung, leaked or broke a check.
# Usage: scripts/fuzz.sh SECONDS [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."

# The same list as STITCHFS_FUZZ_TARGETS in fuzz/CMakeLists.txt.
TARGETS=(manifest_reader manifest_cache locator mount_options at_names resolved_index archive
  archive_index)

usage() {
  echo "usage: scripts/fuzz.sh SECONDS [TARGET...]   targets: ${TARGETS[*]}" >&2
  exit 2
}
[ $# -ge 1 ] || usage
secs=$1
shift
[[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -gt 0 ] || usage
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
for t in "${targets[@]}"; do
  [[ " ${TARGETS[*]} " == *" $t "* ]] || { echo "unknown fuzz target: $t" >&2; usage; }
done

# The dictionary of a target: fuzz/TARGET.dict, else fuzz/<first word of TARGET>.dict.
dict_of() {
  if [ -f "fuzz/$1.dict" ]; then echo "fuzz/$1.dict"; elif [ -f "fuzz/${1%%_*}.dict" ]; then
    echo "fuzz/${1%%_*}.dict"
  fi
}

bash scripts/install-deps.sh --tests
B=build-fuzz
echo "== build ($B: clang-14, ASan+UBSan+libFuzzer)"
CC=clang-14 CXX=clang++-14 bash scripts/build.sh "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTITCHFS_SANITIZE=ON -DSTITCHFS_FUZZ=ON -DSTITCHFS_TESTS=OFF -- "${targets[@]/%/_fuzz}"

if ! command -v llvm-symbolizer >/dev/null && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

failed=()
for t in "${targets[@]}"; do
  corpus=$B/fuzz-corpus/$t
  artifacts=$B/fuzz-artifacts/$t
  log=$B/fuzz-logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  cp -n fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  before=$(find "$corpus" -type f | wc -l)
  find "$artifacts" -type f | sort >"$log.old-artifacts"
  flags=(-max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$artifacts/")
  dict=$(dict_of "$t")
  if [ -n "$dict" ]; then flags+=(-dict="$dict"); fi
  echo "== $t: ${secs}s, corpus $corpus ($before files)"
  status=0
  nice "$B/fuzz/${t}_fuzz" "${flags[@]}" "$corpus" >"$log" 2>&1 || status=$?
  after=$(find "$corpus" -type f | wc -l)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
  new=$(comm -13 "$log.old-artifacts" <(find "$artifacts" -type f | sort))
  echo "   runs ${runs:-?} (${speed:-?}/s), ${cov:-no coverage line}, corpus +$((after - before))" \
    "files ($after), exit status $status"
  if [ $status -ne 0 ] || [ -n "$new" ]; then
    failed+=("$t")
    grep -E 'fuzz check failed|ERROR: |runtime error|SUMMARY' "$log" | head -n 5 | sed 's/^/   /'
    for f in $new; do
      echo "   crash file: $f"
      echo "   reproduce:  $B/fuzz/${t}_fuzz $f"
    done
    echo "   log: $log"
  fi
  rm -f "$log.old-artifacts"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "no crash"
