#!/usr/bin/env bash
# The warm `dd` of bench/run.sh, side by side: for each of ROUNDS rounds, stitchfs and
# squashfuse_ll (on run.sh's image of the same tree) in turns, each from a dropped page cache:
# a fresh mount, the cold `dd bs=1M` of the 317 MiB file, then three warm ones (what run.sh
# keeps the best of). Both are served by the kernel's page cache once warm (no daemon is asked),
# so the two should differ only by the machine's moves. Needs root (it drops the page cache)
# and squashfuse_ll with run.sh's tree.sqfs (run.sh without --no-peers makes it).
#
# Usage: bench/dd_warm.sh [--rounds N=3] [--keep DIR]   (--keep DIR as bench/run.sh's)
# A line per mount goes to stderr; one JSON line to stdout: each kind's median of its best warm
# read, and the medians of the first warm read.
source "$(dirname "$0")/common.sh"
rounds=3 keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --keep) keep=$2; shift ;;
    *) echo "usage: bench/dd_warm.sh [--rounds N] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done
kept_chain_bench bench/dd_warm.sh "$keep"
command -v squashfuse_ll >/dev/null && [ -f "$data/tree.sqfs" ] ||
  { echo "bench/dd_warm.sh: needs squashfuse_ll and $data/tree.sqfs (bench/run.sh)" >&2; exit 2; }

dd_s() { timed dd if="$M/$big" of=/dev/null bs=1M status=none; }
# reads KIND: "cold warm1 warm2 warm3" through a fresh mount of KIND.
reads() {
  drop
  case "$1" in
    stitchfs) "$STITCHFS" "$top" "$M" ;;
    squashfuse) squashfuse_ll "$data/tree.sqfs" "$M" ;;
  esac
  echo "$(dd_s) $(dd_s) $(dd_s) $(dd_s)"
  cmp -s "$M/$big" "$data/src/$big" || { echo "bench/dd_warm.sh: $1 read wrong bytes" >&2; exit 1; }
  umount_m
}
declare -A lines
for r in $(seq "$rounds"); do
  for kind in stitchfs squashfuse; do
    l=$(reads "$kind")
    echo "round $r $kind: cold, then warm: $l" >&2
    # Fields: cold, the first warm, the best warm.
    lines[$kind]+=$(awk '{b = $2; if ($3 < b) b = $3; if ($4 < b) b = $4; print $1, $2, b}' <<<"$l")$'\n'
  done
done
printf '{"bench":"dd_warm","rounds":%s' "$rounds"
for kind in stitchfs squashfuse; do
  printf ',"%s_cold":%s,"%s_first_warm":%s,"%s_best_warm":%s' \
    "$kind" "$(column_median 1 "${lines[$kind]}")" "$kind" "$(column_median 2 "${lines[$kind]}")" \
    "$kind" "$(column_median 3 "${lines[$kind]}")"
done
echo "}"
