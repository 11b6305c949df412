#!/usr/bin/env bash
# The snapshot writer on a tree of FILES files (BYTES in total), warm page cache, best of 3:
#  - full backup vs `cp -a` of the tree                       (target: ratio <= 1.3)
#  - incremental over the unchanged tree vs reading every file (target: <= 1.2; <= 0.1 with
#    --files-cache)
#  - incremental after appending to 10% of the files: bytes added to the store vs bytes appended
#    (target: at most the appended bytes plus the manifest)
#  - the same day-1/day-2 workload through restic and borg, where installed.
# Usage: bench/backup_tree.sh [FILES=2000] [BYTES=536870912]
source "$(dirname "$0")/common.sh"
setup
files=${1:-2000}
bytes=${2:-536870912}
"$MAKE_FIXTURE" files "$work" "$files" "$bytes"
T=$work/tree
# Sum of the sizes of the regular files under $1 (what a store adds, without folder blocks).
file_bytes() { find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }
find "$T" -type f -exec cat {} + >/dev/null

copy() { rm -rf "$work/cp"; cp -a "$T" "$work/cp"; sync -f "$work"; }
full() { rm -rf "$work/full"; "$STITCH" backup "$T" "$work/full"; sync -f "$work"; }
readall() { find "$T" -type f -exec cat {} + >/dev/null; }
incr() { rm -rf "$work/inc"; "$STITCH" backup "$T" "$work/inc" --base "$work/full" "$@"; }
cp_s=$(best_of 3 copy)
full_s=$(best_of 3 full)
read_s=$(best_of 3 readall)
inc_s=$(best_of 3 incr)
inc_cache_s=$(best_of 3 incr --files-cache)

# Peers' day 1 (full) backups of the same tree.
peer_day1() {
  if command -v restic >/dev/null; then
    export RESTIC_PASSWORD=bench
    restic init -q -r "$work/restic" >/dev/null
    restic_day1=$(best_of 1 restic backup -q -r "$work/restic" "$T")
  fi
  if command -v borg >/dev/null; then
    export BORG_PASSPHRASE="" BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
    borg init -e none "$work/borg" >/dev/null
    borg_day1=$(best_of 1 borg create "$work/borg::day1" "$T")
  fi
}
peer_day1

# Day 2: append 1..4 KiB to every tenth file.
append_every_tenth "$T"
day2() { "$STITCH" backup "$T" "$work/day2" --base "$work/full"; }
day2_s=$(best_of 1 day2)
day2_bytes=$(file_bytes "$work/day2")
manifest=$(stat -c %s "$work/day2/.backup")
"$STITCH" verify "$work/day2" >/dev/null

peers=""
if command -v restic >/dev/null; then
  before=$(file_bytes "$work/restic")
  r2=$(best_of 1 restic backup -q -r "$work/restic" "$T")
  after=$(file_bytes "$work/restic")
  peers="$peers,\"restic\":{\"day1_s\":$restic_day1,\"day2_s\":$r2,\"day2_bytes_added\":$((after - before))}"
fi
if command -v borg >/dev/null; then
  before=$(file_bytes "$work/borg")
  b2=$(best_of 1 borg create "$work/borg::day2" "$T")
  after=$(file_bytes "$work/borg")
  peers="$peers,\"borg\":{\"day1_s\":$borg_day1,\"day2_s\":$b2,\"day2_bytes_added\":$((after - before))}"
fi
echo "{\"bench\":\"backup_tree\",\"files\":$files,\"bytes\":$bytes,\"cp_a_s\":$cp_s,\"full_backup_s\":$full_s,\"full_ratio\":$(ratio "$full_s" "$cp_s")," \
     "\"read_all_s\":$read_s,\"incremental_s\":$inc_s,\"incremental_ratio\":$(ratio "$inc_s" "$read_s")," \
     "\"incremental_files_cache_s\":$inc_cache_s,\"files_cache_ratio\":$(ratio "$inc_cache_s" "$read_s")," \
     "\"appended_bytes\":$appended,\"day2_s\":$day2_s,\"day2_backup_bytes\":$day2_bytes,\"day2_manifest_bytes\":$manifest," \
     "\"day2_over_appended_plus_manifest\":$(ratio "$day2_bytes" $((appended + manifest)))$peers}"
