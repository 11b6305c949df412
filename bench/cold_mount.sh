#!/usr/bin/env bash
# Where a cold mount's time goes: the mount of bench/run.sh (the last day of its chain, 50,640
# files at scale 1), taken apart. For each of RUNS rounds, in turns, with the page cache dropped
# before each cold figure (`echo 3 > /proc/sys/vm/drop_caches`: needs root):
#  - true_cold:        /bin/true, cold: starting any program from a cold disk;
#  - version_cold:     `stitchfs --version`, cold: the program and its libraries, no backup;
#  - cache_read_cold:  `cat` of the files a mount reads whole (the backup's manifest cache file
#                      and its resolved index, from STITCH_CACHE_DIR) into /dev/null, cold
#                      (`cat` itself read back first: only the files' bytes);
#  - mount_cold:       `stitchfs BACKUP MNT` until it returns, cold (as bench/run.sh);
#  - mount_cache_warm: the same with only those cache files read back first (the program and
#                      its libraries still cold): mount_cold minus this is what the cache's
#                      bytes cost;
#  - mount_program_warm: the same with only the program and its libraries read back first
#                      (`stitchfs --version`), the backup's files cold: a backup's first mount
#                      on a machine that has run stitchfs before;
#  - mount_warm:       the same with everything in the page cache: the mount's own work.
# Then the two largest parts of that work, each best of 30 in one process (bench/mount_work):
#  - open_cached:      opening the backup from the manifest cache, every check included;
#  - inode_table:      building the mount's inode table from the opened manifest.
# The floor of a mount that reads and checks the whole manifest is version_cold +
# cache_read_cold (program start and the bytes, with no work); `floor_ratio` = that floor /
# mount_cold (1 = nothing left to take out but the reading itself). Figures are medians of the
# RUNS rounds (min in the JSON too).
#
# Usage: bench/cold_mount.sh [--runs N=7] [--keep DIR] [-- STITCHFS OPTIONS]
#   --keep DIR  the chain of bench/run.sh --keep DIR (built by it, at scale 1 and 3 days, when
#               missing). STITCH_BENCH_BUILD=DIR measures another build's binaries.
# A table goes to stderr, one JSON line to stdout.
source "$(dirname "$0")/common.sh"
runs=7 keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --keep) keep=$2; shift ;;
    --) shift; break ;;
    *) echo "usage: bench/cold_mount.sh [--runs N] [--keep DIR] [-- OPTIONS]" >&2; exit 2 ;;
  esac
  shift
done
kept_chain_bench bench/cold_mount.sh "$keep"
OPTS=("$@")

mount_s() { local t; t=$(timed "$STITCHFS" "$top" "$M" "${OPTS[@]}"); umount_m; sleep 0.5; echo "$t"; }
cache_files() { find "$STITCH_CACHE_DIR" -maxdepth 1 -type f \( -name '*.manifest' -o -name '*.index' \); }
read_cache() { cat "${cached[@]}" >/dev/null; }
# Only the files' bytes: cat itself (and its libraries) read back first, after the drop.
read_cache_cold() { drop; cat </dev/null; timed read_cache; }

# The first mount fills the cache; the files it made are what every later mount reads.
mount_s >/dev/null
mapfile -t cached < <(cache_files)
[ "${#cached[@]}" -ge 2 ] || { echo "bench/cold_mount.sh: no manifest cache was made" >&2; exit 1; }
cache_bytes=$(stat -c %s "${cached[@]}" | awk '{s += $1} END {print s}')

declare -A all
note() { all[$1]="${all[$1]:-} $2"; }
for _ in $(seq "$runs"); do
  drop; note true_cold "$(timed /bin/true)"
  drop; note version_cold "$(timed "$STITCHFS" --version)"
  note cache_read_cold "$(read_cache_cold)"
  drop; note mount_cold "$(mount_s)"
  drop; read_cache; note mount_cache_warm "$(mount_s)"
  drop; "$STITCHFS" --version >/dev/null; note mount_program_warm "$(mount_s)"
  note mount_warm "$(mount_s)"
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
least() { tr ' ' '\n' <<<"$1" | grep . | sort -g | head -1; }

json="{\"bench\":\"cold_mount\",\"runs\":$runs,\"cache_bytes\":$cache_bytes,\"options\":\"${OPTS[*]}\""
table="figure (s)             median      min"
for k in true_cold version_cold cache_read_cold mount_cold mount_cache_warm mount_program_warm \
  mount_warm; do
  med=$(median "${all[$k]}") lo=$(least "${all[$k]}")
  declare "m_$k=$med"
  json+=",\"$k\":$med,\"${k}_min\":$lo"
  table+=$(printf '\n%-20s %9.4f %9.4f' "$k" "$med" "$lo")
done
floor=$(awk -v a="$m_version_cold" -v b="$m_cache_read_cold" 'BEGIN{print a + b}')
json+=",\"floor\":$floor,\"floor_ratio\":$(ratio "$floor" "$m_mount_cold")"
json+=",\"cache_cost\":$(awk -v a="$m_mount_cold" -v b="$m_mount_cache_warm" 'BEGIN{print a - b}')"
work_line='{}'  # A build from before bench/mount_work has none: null figures.
[ -x "$BUILD/bench/mount_work" ] && work_line=$("$BUILD/bench/mount_work" "$top" 30)
for k in open_cached inode_table; do
  best=$(grep -o "\"${k}_best\":[0-9.]*" <<<"$work_line" | cut -d: -f2 || true)
  json+=",\"$k\":${best:-null}"
  table+=$(printf '\n%-20s %9s (best of 30, warm)' "$k" "${best:-n/a}")
done
json+="}"
table+=$(printf '\nfloor (version + cache read) %.4f = %s of the cold mount; cache files %s bytes' \
  "$floor" "$(ratio "$floor" "$m_mount_cold")" "$cache_bytes")
echo "$table" >&2
echo "$json"
