#!/usr/bin/env bash
# Where a cold 4 KiB random read through the mount goes: bench/pread_bench's READS random
# 4 KiB preads (one thread, read-ahead off) of bench/run.sh's 317 MiB file, the page cache
# dropped before each, ROUNDS rounds in turns:
#   native       the file of the tree, each read sleeping through its disk read;
#   native-poll  the same, each read polling for its pages (preadv2 RWF_NOWAIT): the difference
#                is what waking a thread after a disk read costs here;
#   mount        through a fresh mount (bench/run.sh's rand_cold).
# Each with reads per second, microseconds per read and the sectors read from the chain's disk
# (/proc/diskstats); then, where `perf` is installed, one round more of each counts the disk
# requests issued (the block:block_rq_issue tracepoint, all CPUs; counting slows the reads, so
# that round is not timed). The mount reads no more from the disk than a native read does when
# both match. Needs root.
#
# Usage: bench/rand_cold.sh [--rounds N=3] [--reads N=4000] [--keep DIR]
# A line per round goes to stderr; one JSON line of medians to stdout.
source "$(dirname "$0")/common.sh"
rounds=3 reads=4000 keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --reads) reads=$2; shift ;;
    --keep) keep=$2; shift ;;
    *) echo "usage: bench/rand_cold.sh [--rounds N] [--reads N] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done
kept_chain_bench bench/rand_cold.sh "$keep"
PREAD=$BUILD/bench/pread_bench
have_perf=0
perf stat -e block:block_rq_issue -a -- true >/dev/null 2>&1 && have_perf=1
# The disk the chain is on, for the sectors it reads (/proc/diskstats, field 6).
disk=$(basename "$(findmnt -no SOURCE --target "$data" | head -1)")
sectors() { awk -v d="$disk" '$3 == d {print $6}' /proc/diskstats; }

# measure KIND [count]: "reads_per_s us_per_read disk_requests sectors_read" of one round of
# KIND (requests -1 unless counted, sectors -1 where the disk has no line in /proc/diskstats).
measure() {
  local f=$data/src/$big mode="" rate reqs=-1 s0 s1
  drop
  case "$1" in
    native-poll) mode=poll ;;
    mount)
      "$STITCHFS" "$top" "$M" && stat "$M/$big" >/dev/null ||
        { echo "bench/rand_cold.sh: the mount failed" >&2; exit 1; }
      f=$M/$big
      ;;
  esac
  s0=$(sectors)
  if [ "${2:-}" = count ]; then
    perf stat -x, -o "$work/perf" -e block:block_rq_issue -a -- \
      "$PREAD" "$f" 1 "$reads" 4096 $mode >"$work/rate" || exit 1
    reqs=$(awk -F, '/block_rq_issue/ {print $1}' "$work/perf")
  else
    "$PREAD" "$f" 1 "$reads" 4096 $mode >"$work/rate" ||
      { echo "bench/rand_cold.sh: $1: pread_bench failed" >&2; exit 1; }
  fi
  s1=$(sectors)
  rate=$(awk '{print $1}' "$work/rate")
  [ "$1" = mount ] && umount_m
  awk -v r="$rate" -v q="$reqs" -v a="${s0:--1}" -v b="${s1:--1}" \
    'BEGIN{printf "%d %.1f %d %d", r, 1e6 / r, q, (a < 0 || b < 0) ? -1 : b - a}'
}
kinds=(native native-poll mount)
declare -A runs
for r in $(seq "$rounds"); do
  line="round $r:"
  for k in "${kinds[@]}"; do
    m=$(measure "$k")
    runs[$k]+="$m"$'\n'
    read -r per_s us _ sect <<<"$m"
    line+=$(printf '  %s %s/s %s us %s sectors' "$k" "$per_s" "$us" "$sect")
  done
  echo "$line" >&2
done
declare -A requests
for k in "${kinds[@]}"; do
  requests[$k]=-1
  [ "$have_perf" = 1 ] && requests[$k]=$(measure "$k" count | awk '{print $3}')
done
echo "disk requests (perf): native ${requests[native]}, native-poll ${requests[native-poll]}," \
  "mount ${requests[mount]}" >&2
median() { column_median "$1" "${runs[$2]}"; }  # median COLUMN KIND
json="{\"bench\":\"rand_cold\",\"rounds\":$rounds,\"reads\":$reads"
for k in "${kinds[@]}"; do
  n=${k/-/_}
  json+=",\"${n}_per_s\":$(median 1 "$k"),\"${n}_us\":$(median 2 "$k"),\"${n}_disk_requests\":${requests[$k]}"
  json+=",\"${n}_sectors_read\":$(median 4 "$k")"
done
json+=",\"mount_ratio\":$(ratio "$(median 1 mount)" "$(median 1 native)")"
json+=",\"mount_extra_us\":$(awk -v a="$(median 2 mount)" -v b="$(median 2 native)" 'BEGIN{printf "%.1f", a - b}')"
json+=",\"mount_extra_over_poll_us\":$(awk -v a="$(median 2 mount)" -v b="$(median 2 native-poll)" 'BEGIN{printf "%.1f", a - b}')}"
echo "$json"
