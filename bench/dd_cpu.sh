#!/usr/bin/env bash
# Where a cold `dd` through the mount goes: bench/run.sh's `dd bs=1M` of the 317 MiB file of
# the last day of its chain, in turns, ROUNDS rounds, the page cache dropped before each:
#   native      the file of the tree, read directly;
#   mount       through a fresh mount (bench/run.sh's dd_cold);
#   cached      through a fresh mount with the file's data files in the page cache (the mount's
#               path with no disk in it: bench/run.sh's dd_disk_warm);
#   mount+cat   through a fresh mount while a `cat` of the file's data files, started with it in
#               another process, reads them ahead (one trial of a read-ahead beside the daemon;
#               it copies the bytes too, on the same CPUs).
# Each with its wall seconds and the machine's CPU seconds meanwhile (busy and idle, of all
# CPUs, from /proc/stat; see cpu() below): a figure whose CPUs sit idle waits for something
# other than work. Needs root (it drops the page cache).
#
# Usage: bench/dd_cpu.sh [--rounds N=7] [--keep DIR]   (--keep DIR as bench/run.sh's)
# A line per round goes to stderr; one JSON line of medians to stdout.
source "$(dirname "$0")/common.sh"
rounds=7 keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --keep) keep=$2; shift ;;
    *) echo "usage: bench/dd_cpu.sh [--rounds N] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done
kept_chain_bench bench/dd_cpu.sh "$keep"
mapfile -t parts < <(ls "$data"/store/day*/"$big")  # The file's data files, base first.

mount_top() {
  "$STITCHFS" "$top" "$M" && stat "$M/$big" >/dev/null ||
    { echo "bench/dd_cpu.sh: the mount failed" >&2; exit 1; }
}
# CPU ticks of all CPUs: busy (user nice system irq softirq) and idle (idle iowait); steal,
# time the hypervisor gave another guest, is neither. Ticks are CLK_TCK (100) a second, so
# figures of 0.01-0.03 s are at the resolution's edge.
cpu() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8, $5 + $6}' /proc/stat; }
# measure KIND: "wall cpu idle" of one dd of KIND, seconds.
measure() {
  local f=$M/$big a b t0 t1
  case "$1" in
    native) drop; f=$data/src/$big ;;
    mount) drop; mount_top ;;
    cached) drop; cat "${parts[@]}" >/dev/null; mount_top ;;
    mount+cat) drop; mount_top ;;
  esac
  [ "$1" = mount+cat ] && { cat "${parts[@]}" >/dev/null & }
  read -ra a < <(cpu); t0=$(date +%s.%N)
  dd if="$f" of=/dev/null bs=1M status=none || { echo "bench/dd_cpu.sh: $1: dd failed" >&2; exit 1; }
  t1=$(date +%s.%N); read -ra b < <(cpu)
  wait
  if [ "$1" != native ]; then
    cmp -s "$f" "$data/src/$big" || { echo "bench/dd_cpu.sh: $1 read wrong bytes" >&2; exit 1; }
    umount_m
  fi
  local hz
  hz=$(getconf CLK_TCK)
  awk -v t0="$t0" -v t1="$t1" -v c=$((b[0] - a[0])) -v i=$((b[1] - a[1])) -v hz="$hz" \
    'BEGIN{printf "%.4f %.2f %.2f", t1 - t0, c / hz, i / hz}'
}
kinds=(native mount cached mount+cat)
declare -A runs
for r in $(seq "$rounds"); do
  line="round $r:"
  for k in "${kinds[@]}"; do
    m=$(measure "$k")
    runs[$k]+="$m"$'\n'
    line+=$(printf '  %s %s s (cpu %s, idle %s)' "$k" $m)
  done
  echo "$line" >&2
done
# median COLUMN KIND
median() { column_median "$1" "${runs[$2]}"; }  # median COLUMN KIND
json="{\"bench\":\"dd_cpu\",\"rounds\":$rounds"
for k in "${kinds[@]}"; do
  n=${k/+/_}
  json+=",\"${n}_s\":$(median 1 "$k"),\"${n}_cpu_s\":$(median 2 "$k"),\"${n}_idle_s\":$(median 3 "$k")"
done
nat=$(median 1 native)
json+=",\"mount_ratio\":$(ratio "$nat" "$(median 1 mount)")"
json+=",\"cached_ratio\":$(ratio "$nat" "$(median 1 cached)")"
json+=",\"mount_cat_ratio\":$(ratio "$nat" "$(median 1 mount+cat)")}"
echo "$json"
