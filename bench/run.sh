#!/usr/bin/env bash
# Cold reads of a whole tree through a mount, against reading the same tree on the local disk:
# the figures of the cold-read issue, in one run, on the last day of a daily chain.
#
# The tree (bench/cold_tree.py): at scale 1 about 2 GiB in 50,640 files on day 3 (MergeTree
# parts of 11 files, a Log column of 317 MiB that grows 2 MiB a day, six 100 MiB files, 300
# small Log columns appended to daily). Each day is backed up with `stitch backup --base` the
# day before; the last day is mounted alone (`stitchfs BACKUP`, its chain below it). For each
# repeat, in turns (native, stitchfs, squashfuse), with the page cache dropped before each
# cold figure (`echo 3 > /proc/sys/vm/drop_caches`: needs root) and a fresh mount for each:
#  - tar_cold:  `tar -cf - .` of the whole tree into /dev/zero (not /dev/null, which GNU tar
#               notices and then reads nothing), seconds;
#  - rss:       the daemon's peak RSS after that walk (MiB), and its anonymous part then (the
#               rest is pages of files it maps: its code, and the manifest cache's file);
#  - dd_cold:   `dd bs=1M` of the 317 MiB file, seconds; dd_warm: the same again (best of 3);
#               dd_disk_warm (mounts): the same through a fresh mount with the file's bytes in
#               the page cache of the disk's files (the mount's own path, no disk in it);
#  - rand_cold: 4 KiB random preads of that file (bench/pread_bench, readahead off, 1 thread,
#               READS of them), reads per second;
#  - mount:     `stitchfs BACKUP MNT` until it returns (it serves then), cold (page cache
#               dropped) and warm (best of 3).
# Ratios are native / mount for times and mount / native for rates (1 = as fast as the disk).
# squashfuse_ll (an image of the same tree made with mksquashfs, gzip) where installed
# (bench/install-peers.sh), unless --no-peers.
#
# Usage: bench/run.sh [--scale S=1] [--days D=3] [--repeat R=2] [--reads N=4000]
#                     [--keep DIR] [--no-peers] [-- STITCHFS OPTIONS]
#   --keep DIR  build the tree and chain under DIR/run-s<S>-d<D>-v<version>/ and keep them; a
#               later run with the same DIR and parameters measures them again without
#               rebuilding. STITCH_BENCH_BUILD=DIR measures another build's binaries.
# A table goes to stderr, one JSON line to stdout.
source "$(dirname "$0")/common.sh"
scale=1 days=3 repeat=2 reads=4000 keep="" peers=1
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale=$2; shift ;;
    --days) days=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --reads) reads=$2; shift ;;
    --keep) keep=$2; shift ;;
    --no-peers) peers=0 ;;
    --) shift; break ;;
    *) echo "usage: bench/run.sh [--scale S] [--days D] [--repeat R] [--reads N] [--keep DIR] [--no-peers] [-- OPTIONS]" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "bench/run.sh drops the page cache: run it as root" >&2; exit 2; }
setup
STITCHFS=$BUILD/fs/stitchfs
PREAD=$BUILD/bench/pread_bench
GEN_VERSION=1
data=$work/data
if [ -n "$keep" ]; then
  data=$keep/run-s$scale-d$days-v$GEN_VERSION
fi
mount_dir
export STITCH_CACHE_DIR=$work/cache

build_chain() {
  rm -rf "$data"
  mkdir -p "$data/store"
  local d base=()
  for d in $(seq "$days"); do
    python3 "$ROOT/bench/cold_tree.py" "$data/src" "$scale" "$d"
    "$STITCH" backup "$data/src" "$data/store/day$d" "${base[@]}" >/dev/null 2>"$data/backup.log" ||
      { cat "$data/backup.log" >&2; exit 1; }
    base=(--base "$data/store/day$d")
  done
  if [ "$peers" = 1 ] && command -v mksquashfs >/dev/null && command -v squashfuse_ll >/dev/null; then
    mksquashfs "$data/src" "$data/tree.sqfs" -noappend -comp gzip -no-progress >/dev/null
  fi
  touch "$data/done"
}
[ -f "$data/done" ] || build_chain
top=$data/store/day$days
big=store/logs/events/data.bin
have_sq=0
[ "$peers" = 1 ] && [ -f "$data/tree.sqfs" ] && command -v squashfuse_ll >/dev/null && have_sq=1

# mount_kind KIND: mounts KIND (stitchfs | squashfuse) on $M; prints the seconds it took.
mount_kind() {
  local t0 t1
  t0=$(date +%s.%N)
  case "$1" in
    stitchfs) "$STITCHFS" "$top" "$M" "${OPTS[@]}" ;;
    squashfuse) squashfuse_ll "$data/tree.sqfs" "$M" ;;
  esac
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}'
}
daemon_rss_mb() {
  local pid
  case "$1" in
    stitchfs) pid=$(pgrep -n -f "stitchfs $top") ;;
    squashfuse) pid=$(pgrep -n -f "squashfuse_ll $data/tree.sqfs") ;;
  esac
  awk -v f="${2:-VmHWM}" '$1 == f ":" {printf "%.1f", $2 / 1024}' "/proc/$pid/status"
}
tar_s() { timed sh -c "tar -cf - -C '$1' . >/dev/zero"; }
dd_s() { timed dd if="$1" of=/dev/null bs=1M status=none; }

OPTS=("$@")
declare -A best
keep_best() {  # keep_best NAME VALUE low|high
  local cur=${best[$1]:-}
  if [ -z "$cur" ] || awk -v a="$2" -v b="$cur" -v w="$3" 'BEGIN{exit !((w == "low") ? a < b : a > b)}'; then
    best[$1]=$2
  fi
}
# measure KIND: every figure of one kind (native reads $data/src), best over the repeats.
measure() {
  local kind=$1 dir=$M t
  if [ "$kind" = native ]; then dir=$data/src; fi
  drop
  if [ "$kind" != native ]; then keep_best "${kind}_mount_cold" "$(mount_kind "$kind")" low; fi
  keep_best "${kind}_tar_cold" "$(tar_s "$dir")" low
  if [ "$kind" != native ]; then
    keep_best "${kind}_rss_mb" "$(daemon_rss_mb "$kind")" high
    keep_best "${kind}_anon_mb" "$(daemon_rss_mb "$kind" RssAnon)" high
    umount_m
  fi
  drop
  if [ "$kind" != native ]; then mount_kind "$kind" >/dev/null; fi
  keep_best "${kind}_dd_cold" "$(dd_s "$dir/$big")" low
  for _ in 1 2 3; do keep_best "${kind}_dd_warm" "$(dd_s "$dir/$big")" low; done
  if [ "$kind" != native ]; then
    cmp "$dir/$big" "$data/src/$big"
    umount_m
    # The file's data files now in the page cache, the new mount's own cache empty: what the
    # mount's path costs with no disk in it (compare with native dd_cold).
    mount_kind "$kind" >/dev/null
    keep_best "${kind}_dd_disk_warm" "$(dd_s "$dir/$big")" low
    umount_m
  fi
  drop
  if [ "$kind" != native ]; then mount_kind "$kind" >/dev/null; fi
  keep_best "${kind}_rand_cold" "$("$PREAD" "$dir/$big" 1 "$reads")" high
  if [ "$kind" != native ]; then
    umount_m
    for _ in 1 2 3; do
      t=$(mount_kind "$kind")
      keep_best "${kind}_mount_warm" "$t" low
      umount_m
    done
  fi
}
# The manifest cache (STITCH_CACHE_DIR, in the run's folder) is filled first, so that every
# mount measured finds it, as every mount after a backup's first does.
mount_kind stitchfs >/dev/null
umount_m
kinds=(native stitchfs)
[ "$have_sq" = 1 ] && kinds+=(squashfuse)
for _ in $(seq "$repeat"); do
  for k in "${kinds[@]}"; do measure "$k"; done
done
# The tree read through the mount is the tree: every file and its bytes.
mount_kind stitchfs >/dev/null
diff -r "$data/src" "$M" >/dev/null || { echo "bench/run.sh: the mount differs from the tree" >&2; exit 1; }
umount_m
files=$(find "$data/src" -type f | wc -l)
bytes=$(du -sb "$data/src" | cut -f1)

r() { ratio "$1" "$2"; }
json="{\"bench\":\"cold_tree\",\"scale\":$scale,\"days\":$days,\"repeat\":$repeat,\"files\":$files,\"bytes\":$bytes,\"options\":\"${OPTS[*]}\""
for k in "${!best[@]}"; do json+=",\"$k\":${best[$k]}"; done
table="figure                    native     stitchfs   ratio"
row() {  # row LABEL NAME time|rate
  local n=${best[native_$2]} s=${best[stitchfs_$2]} q=${best[squashfuse_$2]:-} rs rq=""
  if [ "$3" = time ]; then rs=$(r "$n" "$s"); [ -n "$q" ] && rq=$(r "$n" "$q"); else rs=$(r "$s" "$n"); [ -n "$q" ] && rq=$(r "$q" "$n"); fi
  json+=",\"stitchfs_$2_ratio\":$rs"
  [ -n "$rq" ] && json+=",\"squashfuse_$2_ratio\":$rq"
  table+=$(printf '\n%-24s %9s %11s %7s%s' "$1" "$n" "$s" "$rs" "${rq:+   squashfuse $q ($rq)}")
}
row "tar, cold (s)" tar_cold time
row "4 KiB pread, cold (/s)" rand_cold rate
row "dd, cold (s)" dd_cold time
row "dd, warm (s)" dd_warm time
table+=$(printf '\ndd, fresh mount, disk cached (s)  %s (native cold %s)' "${best[stitchfs_dd_disk_warm]}" "${best[native_dd_cold]}")
table+=$(printf '\nmount cold / warm (s)    %s / %s%s' "${best[stitchfs_mount_cold]}" "${best[stitchfs_mount_warm]}" "${best[squashfuse_mount_warm]:+   squashfuse ${best[squashfuse_mount_cold]} / ${best[squashfuse_mount_warm]}}")
table+=$(printf '\ndaemon peak RSS (MiB)    %s (anon %s)%s' "${best[stitchfs_rss_mb]}" "${best[stitchfs_anon_mb]}" "${best[squashfuse_rss_mb]:+   squashfuse ${best[squashfuse_rss_mb]} (anon ${best[squashfuse_anon_mb]})}")
echo "$table" >&2
echo "$json}"
