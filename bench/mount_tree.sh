#!/usr/bin/env bash
# A backup of N files (ClickHouse-like paths) mounted with stitchfs: mount time (the first
# mount, which parses the manifest and caches it, and the next one), `find | wc -l`
# and `ls -lR` entries per second, and the daemon's peak RSS. Targets (issue 4, for 1,000,000
# files): mount under 1 s, >= 200,000 entries/s, RSS under 200 MB.
# Usage: bench/mount_tree.sh [FILES=1000000] [-- STITCHFS OPTIONS] (e.g. -- -o spin_us=0 for
# libfuse's own loop, -- -o noxattr).
source "$(dirname "$0")/common.sh"
setup
n=${1:-1000000}
shift $(($# > 0 ? 1 : 0))
[ "${1:-}" = "--" ] && shift
STITCHFS=$BUILD/fs/stitchfs
"$MAKE_FIXTURE" manifest "$work/b" "$n"
export STITCH_CACHE_DIR=$work/cache  # The first mount parses and caches; the second loads.
M=$work/mnt
mkdir -p "$M"
trap 'mountpoint -q "$M" && fusermount3 -u "$M"; rm -rf "$work"' EXIT
cat "$work/b/.backup" >/dev/null
t0=$(date +%s.%N)
"$STITCHFS" "$work/b" "$M" "$@"
t1=$(date +%s.%N)
mount_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
fusermount3 -u "$M"
t0=$(date +%s.%N)
"$STITCHFS" "$work/b" "$M" "$@"
t1=$(date +%s.%N)
cached_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
pid=$(pgrep -n -f "stitchfs $work/b")
t0=$(date +%s.%N)
entries=$(find "$M" | wc -l)
t1=$(date +%s.%N)
find_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
t0=$(date +%s.%N)
lines=$(ls -lR "$M" | wc -l)
t1=$(date +%s.%N)
ls_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
echo "{\"bench\":\"mount_tree\",\"files\":$n,\"options\":\"$*\",\"first_mount_s\":$mount_s,\"mount_s\":$cached_s,\"find_entries\":$entries,\"find_s\":$find_s,\"find_entries_per_s\":$(awk -v e="$entries" -v s="$find_s" 'BEGIN{printf "%.0f", e/s}'),\"ls_lR_lines\":$lines,\"ls_lR_s\":$ls_s,\"ls_lR_entries_per_s\":$(awk -v e="$entries" -v s="$ls_s" 'BEGIN{printf "%.0f", e/s}'),\"daemon_peak_rss_mb\":$(awk -v k="$rss_kb" 'BEGIN{printf "%.1f", k/1024}')}"
