#!/usr/bin/env bash
# A store of N daily backups of a tree with a growing log (one line a day, so the log of the
# last day is stitched from N segments):
#  - store mount time, and the first `ls -lR` of the last day (deepest in the chain);
#  - sequential read of the N-segment log vs the same bytes stored whole in a full backup,
#    through the mount, first read each (target >= 0.8);
#  - the daemon's RSS after visiting every day.
# Usage: bench/store_year.sh [DAYS=365] [BYTES_APPENDED_PER_DAY=1048576]
source "$(dirname "$0")/common.sh"
setup
days=${1:-365}
line=${2:-1048576}
STITCHFS=$BUILD/fs/stitchfs
S=$work/src
mkdir -p "$S/logs" "$S/data"
head -c 1000000 /dev/urandom > "$S/data/part.bin"
prev=""
for d in $(seq 1 "$days"); do
  head -c "$line" /dev/urandom >> "$S/logs/app.log"
  name=$(printf 'day-%03d' "$d")
  ts=$(date -u -d "2026-01-01 +$((d - 1)) days" '+%F 03:00:00')
  if [ -n "$prev" ]; then
    "$STITCH" backup "$S" "$work/store/$name" --base "$work/store/$prev" --timestamp "$ts" >/dev/null 2>&1
  else
    "$STITCH" backup "$S" "$work/store/$name" --timestamp "$ts" >/dev/null 2>&1
  fi
  prev=$name
done
"$STITCH" backup "$S" "$work/whole" >/dev/null 2>&1
M=$work/mnt
W=$work/wmnt
mkdir -p "$M" "$W"
trap 'for m in "$M" "$W"; do mountpoint -q "$m" && fusermount3 -u "$m"; done; rm -rf "$work"' EXIT
cat "$work"/store/*/logs/app.log "$work/whole/logs/app.log" >/dev/null 2>&1
t0=$(date +%s.%N); "$STITCHFS" "$work/store" "$M"; t1=$(date +%s.%N)
mount_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
pid=$(pgrep -n -f "stitchfs $work/store")
t0=$(date +%s.%N); ls -lR "$M/$prev" >/dev/null; t1=$(date +%s.%N)
ls_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
"$STITCHFS" "$work/whole" "$W"
cmp "$M/$prev/logs/app.log" "$W/logs/app.log"
fusermount3 -u "$W"; "$STITCHFS" "$work/whole" "$W"
fusermount3 -u "$M"; "$STITCHFS" "$work/store" "$M"
pid=$(pgrep -n -f "stitchfs $work/store")
whole_s=$(best_of 1 cat "$W/logs/app.log")
stitched_s=$(best_of 1 cat "$M/$prev/logs/app.log")
for d in $(seq 1 "$days"); do ls -l "$M/$(printf 'day-%03d' "$d")/logs" >/dev/null; done
rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
segments=$(getfattr --only-values -n user.stitchfs.source "$M/$prev/logs/app.log" | grep -o '"level"' | wc -l)
echo "{\"bench\":\"store_year\",\"days\":$days,\"log_bytes\":$((days * line)),\"segments\":$segments,\"store_mount_s\":$mount_s,\"first_ls_lR_last_day_s\":$ls_s,\"whole_read_s\":$whole_s,\"stitched_read_s\":$stitched_s,\"stitched_over_whole_throughput\":$(ratio "$whole_s" "$stitched_s"),\"rss_after_every_day_mb\":$(awk -v k="$rss_kb" 'BEGIN{printf "%.1f", k/1024}')}"
