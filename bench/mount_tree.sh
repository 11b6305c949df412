#!/usr/bin/env bash
# A backup of N files (ClickHouse-like paths) mounted with stitchfs: mount time (the first
# mount, which parses the manifest and caches it, and the next one), `find | wc -l`
# and `ls -lR` entries per second, and the daemon's peak RSS. Targets (issue 4, for 1,000,000
# files): mount under 1 s, >= 200,000 entries/s, RSS under 200 MB. Baseline, same run: `find`
# and `ls -lR` of the same tree made of empty files on the local disk (its cache warm: the
# mount's walks start cold, from a fresh mount). Also the cost of one request to the daemon and
# back (an xattr call of those `ls -l` makes, after the walks) against the same call natively.
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
# One request to the daemon and back, as `ls -l` makes two per file (extended attributes).
probe=$(cd "$M" && find . -type f -print -quit)
rtt_us=$("$BUILD/bench/xattr_loop" "$M/$probe" 20000)
(cd "$M" && find . -mindepth 1 -type d) >"$work/dirs"
(cd "$M" && find . -type f) >"$work/files"
fusermount3 -u "$M"
mkdir "$work/native"
(cd "$work/native" && xargs -d '\n' mkdir -p <"$work/dirs" && xargs -d '\n' touch <"$work/files")
find "$work/native" >/dev/null
native_find_s=$(best_of 1 sh -c "find '$work/native' | wc -l")
native_ls_s=$(best_of 1 sh -c "ls -lR '$work/native' | wc -l")
native_rtt_us=$("$BUILD/bench/xattr_loop" "$work/native/$probe" 20000)
per_s() { awk -v e="$entries" -v s="$1" 'BEGIN{printf "%.0f", e/s}'; }
echo "{\"bench\":\"mount_tree\",\"files\":$n,\"options\":\"$*\",\"first_mount_s\":$mount_s,\"mount_s\":$cached_s,\"find_entries\":$entries,\"find_s\":$find_s,\"find_entries_per_s\":$(per_s "$find_s"),\"ls_lR_lines\":$lines,\"ls_lR_s\":$ls_s,\"ls_lR_entries_per_s\":$(per_s "$ls_s"),\"native_find_entries_per_s\":$(per_s "$native_find_s"),\"native_ls_lR_entries_per_s\":$(per_s "$native_ls_s"),\"find_ratio\":$(ratio "$native_find_s" "$find_s"),\"ls_lR_ratio\":$(ratio "$native_ls_s" "$ls_s"),\"xattr_call_us\":$rtt_us,\"native_xattr_call_us\":$native_rtt_us,\"daemon_peak_rss_mb\":$(awk -v k="$rss_kb" 'BEGIN{printf "%.1f", k/1024}')}"
