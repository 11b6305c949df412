#!/usr/bin/env bash
# Memory of a store mount as more and more backups are visited: a store of DAYS daily backups
# of a tree of FILES files (a few change each day, a log grows), every day listed with
# `find -printf %s` (a stat of every entry) and its log read. Prints the daemon's RSS after a
# quarter, half, three quarters and all of the days, next to the size of every day's manifest
# together (what RSS would grow with if each visited backup kept its chain's manifests).
# Usage: bench/store_memory.sh [DAYS=365] [FILES=5000] [-- STITCHFS OPTIONS]
source "$(dirname "$0")/common.sh"
setup
days=${1:-365}
files=${2:-5000}
shift $(($# > 2 ? 2 : $#))
[ "${1:-}" = "--" ] && shift
STITCHFS=$BUILD/fs/stitchfs
S=$work/src
mkdir -p "$S/logs"
for i in $(seq 1 "$files"); do
  d=$S/db/table_$((i % 50))/part_$((i / 50))
  mkdir -p "$d"
  printf 'column data %d\n' "$i" > "$d/data_$i.bin"
done
prev=""
for d in $(seq 1 "$days"); do
  head -c 4096 /dev/urandom >> "$S/logs/app.log"
  printf "day %d\n" "$d" >> "$S/db/table_$((d % 50))/part_1/data_$((d % 50 + 50)).bin"
  name=$(printf 'day-%03d' "$d")
  ts=$(date -u -d "2026-01-01 +$((d - 1)) days" '+%F 03:00:00')
  base=()
  [ -n "$prev" ] && base=(--base "$work/store/$prev")
  "$STITCH" backup "$S" "$work/store/$name" "${base[@]}" --timestamp "$ts" >/dev/null 2>&1
  prev=$name
done
manifest_mb=$(du -cm "$work"/store/*/.backup | tail -1 | cut -f1)
M=$work/mnt
mkdir -p "$M"
trap 'mountpoint -q "$M" && fusermount3 -u "$M"; rm -rf "$work"' EXIT
"$STITCHFS" "$work/store" "$M" "$@"
pid=$(pgrep -n -f "stitchfs $work/store")
rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$pid/status"; }
out=""
t0=$(date +%s.%N)
for d in $(seq 1 "$days"); do
  name=$(printf 'day-%03d' "$d")
  find "$M/$name" -printf "%s\n" >/dev/null
  cat "$M/$name/logs/app.log" >/dev/null
  case " $((days / 4)) $((days / 2)) $((days * 3 / 4)) " in
    *" $d "*) out="$out\"rss_mb_after_${d}_days\":$(rss)," ;;
  esac
done
t1=$(date +%s.%N)
echo "{\"bench\":\"store_memory\",\"days\":$days,\"files\":$files,\"options\":\"$*\",\"manifests_on_disk_mb\":$manifest_mb,\"entries_all_days\":$((days * (files + 1))),${out}\"rss_mb_after_all\":$(rss),\"visit_all_s\":$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')}"
