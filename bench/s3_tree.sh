#!/usr/bin/env bash
# Walking a backup of FILES files in S3 (a throwaway Ceph radosgw on 127.0.0.1,
# scripts/radosgw.sh) against the same backup on the local disk, in one run: a random tree of
# FILES small files (make_fixture files: 37 x 5 folders, BYTES in all) backed up once to a
# local folder and once to s3://stitch/tree with `stitch backup`, then for each:
#  - mount time: `stitchfs` until a stat through the mount returns, first (empty manifest
#    cache) and the best of three later ones;
#  - `find | wc -l` and `ls -lR | wc -l` from a fresh mount (best of 3, local and S3
#    alternated): ratio s3 / local (target <= 1.2).
# The walks read the manifest only; the listings of both mounts must be identical, and a few
# files read through the S3 mount must equal the tree's.
# Usage: bench/s3_tree.sh [FILES=100000] [BYTES=FILES*256]
source "$(dirname "$0")/common.sh"
shopt -s inherit_errexit  # A failed check inside $(...) stops the run.
setup
files=${1:-100000}
bytes=${2:-$((files * 256))}
STITCHFS=$BUILD/fs/stitchfs
M=$work/mnt
mkdir -p "$M"
cleanup() {
  mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M"; }
  stop_radosgw
  rm -rf "$work"
}
trap cleanup EXIT
start_radosgw
export STITCH_CACHE_DIR=$work/cache

"$MAKE_FIXTURE" files "$work" "$files" "$bytes"
T=$work/tree
local_b=$work/backup
s3_b=s3://stitch/tree
"$STITCH" backup "$T" "$local_b" --json >/dev/null
# 16 uploads at once: the default (one per core) is latency-bound on small files.
s3_backup_s=$(timed "$STITCH" backup "$T" "$s3_b" --jobs 16 --json)

mount_stat() { "$STITCHFS" "$1" "$M" && stat "$M/d0" >/dev/null; }
walk() {  # walk BACKUP CMD: a fresh mount, CMD's time (printed), unmount
  mount_stat "$1"
  timed sh -c "$2"
  fusermount3 -u "$M"
}
first_local=$(timed mount_stat "$local_b")
fusermount3 -u "$M"
first_s3=$(timed mount_stat "$s3_b")
fusermount3 -u "$M"
mount_local=""
mount_s3=""
find_local=""
find_s3=""
ls_local=""
ls_s3=""
for _ in 1 2 3; do
  mount_local=$(min "$mount_local" "$(timed mount_stat "$local_b")")
  fusermount3 -u "$M"
  mount_s3=$(min "$mount_s3" "$(timed mount_stat "$s3_b")")
  fusermount3 -u "$M"
  find_local=$(min "$find_local" "$(walk "$local_b" "find '$M' | wc -l")")
  find_s3=$(min "$find_s3" "$(walk "$s3_b" "find '$M' | wc -l")")
  ls_local=$(min "$ls_local" "$(walk "$local_b" "ls -lR '$M' | wc -l")")
  ls_s3=$(min "$ls_s3" "$(walk "$s3_b" "ls -lR '$M' | wc -l")")
done

# The same listing from both; the bytes of a few files through the S3 mount.
mount_stat "$local_b"
(cd "$M" && ls -lR --time-style=full-iso) >"$work/ls.local"
fusermount3 -u "$M"
mount_stat "$s3_b"
(cd "$M" && ls -lR --time-style=full-iso) >"$work/ls.s3"
entries=$(find "$M" | wc -l)
for i in 0 $((files / 2)) $((files - 1)); do
  f=d$((i % 37))/sub$((i % 5))/f$i
  cmp "$M/$f" "$T/$f"
done
fusermount3 -u "$M"
cmp "$work/ls.local" "$work/ls.s3"
[ "$entries" = "$(find "$T" | wc -l)" ]
manifest=$(stat -c %s "$local_b/.backup")
echo "{\"bench\":\"s3_tree\",\"files\":$files,\"bytes\":$bytes,\"entries\":$entries,\"manifest_bytes\":$manifest,\"s3_backup_s\":$s3_backup_s,\"local_first_mount_s\":$first_local,\"s3_first_mount_s\":$first_s3,\"local_mount_s\":$mount_local,\"s3_mount_s\":$mount_s3,\"mount_ratio\":$(ratio "$mount_s3" "$mount_local"),\"local_find_s\":$find_local,\"s3_find_s\":$find_s3,\"find_ratio\":$(ratio "$find_s3" "$find_local"),\"local_ls_lR_s\":$ls_local,\"s3_ls_lR_s\":$ls_s3,\"ls_lR_ratio\":$(ratio "$ls_s3" "$ls_local")}"
