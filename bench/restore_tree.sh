#!/usr/bin/env bash
# `stitch restore` of a backup of a tree vs `cp -a` of the original tree, same filesystem,
# warm page cache, best of 3. Target (issue 2): ratio <= 1.3.
# Usage: bench/restore_tree.sh [FILES=2000] [BYTES=536870912]
source "$(dirname "$0")/common.sh"
setup
files=${1:-2000}
bytes=${2:-536870912}
"$MAKE_FIXTURE" tree "$work" "$files" "$bytes"
"$STITCH" restore "$work/backup" "$work/check"
diff -r "$work/check" "$work/tree"   # correctness first
rm -rf "$work/check"
copy() { rm -rf "$work/out"; cp -a "$work/tree" "$work/out"; sync -f "$work"; }
restore() { rm -rf "$work/out"; "$STITCH" restore "$work/backup" "$work/out"; sync -f "$work"; }
cat "$work"/tree/*/*/* >/dev/null
native=$(best_of 3 copy)
stitched=$(best_of 3 restore)
echo "{\"bench\":\"restore_tree\",\"files\":$files,\"bytes\":$bytes,\"cp_a_s\":$native,\"stitch_restore_s\":$stitched,\"ratio\":$(ratio "$stitched" "$native")}"
