#!/usr/bin/env bash
# CTest driver of one libFuzzer target: runs it once on each file of its seed corpus (and on the
# inputs of its known findings in fuzz/crashes-found/), then for $STITCHFS_FUZZ_SECONDS seconds
# (default 10) on a fresh copy of the seed corpus under WORK_DIR (the repository's corpus is never
# written to). Fails on any crash, hang, leak or sanitizer report; what was found is left in
# WORK_DIR/artifacts/.
# Usage: run_test.sh FUZZER SEED_DIR WORK_DIR [DICT]
set -euo pipefail
fuzzer=$1
seeds=$2
work=$3
dict=${4:-}
secs=${STITCHFS_FUZZ_SECONDS:-10}
name=$(basename "$fuzzer")
if ! command -v llvm-symbolizer >/dev/null && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi

rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
flags=(-artifact_prefix="$work/artifacts/" -timeout=25 -rss_limit_mb=2048)
if [ -n "$dict" ]; then flags+=(-dict="$dict"); fi

shopt -s nullglob
seed_files=("$seeds"/*)
# Inputs of open findings, committed with their report (fuzz/README.md), fail until fixed.
known=("$(dirname "$0")/crashes-found/${name%_fuzz}"-*)
echo "== $name: ${#seed_files[@]} seed inputs from $seeds, ${#known[@]} of open findings"
if [ $((${#seed_files[@]} + ${#known[@]})) -gt 0 ]; then
  if ! "$fuzzer" "${flags[@]}" "${seed_files[@]}" "${known[@]}" >"$work/seeds.log" 2>&1; then
    tail -n 80 "$work/seeds.log"
    echo "FAIL: $name failed on a seed input or an open finding's input (log: $work/seeds.log)"
    exit 1
  fi
  if [ ${#seed_files[@]} -gt 0 ]; then cp "${seed_files[@]}" "$work/corpus/"; fi
fi

echo "== $name: fuzzing for ${secs}s"
status=0
"$fuzzer" "${flags[@]}" -max_total_time="$secs" -print_final_stats=1 "$work/corpus" \
  >"$work/fuzz.log" 2>&1 || status=$?
found=("$work"/artifacts/*)
if [ $status -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
  tail -n 80 "$work/fuzz.log"
  echo "FAIL: $name exited with $status; found: ${found[*]:-nothing} (log: $work/fuzz.log)"
  exit 1
fi
grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added)' \
  "$work/fuzz.log" || true
grep -E '^#[0-9]+' "$work/fuzz.log" | tail -n 1
