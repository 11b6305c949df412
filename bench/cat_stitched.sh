#!/usr/bin/env bash
# `stitch cat` of a file stitched from N backups vs `cat` of the same bytes from a plain file,
# warm page cache, best of 5. Target (issue 2): ratio <= 1.15.
# Usage: bench/cat_stitched.sh [BACKUPS=30] [BYTES=1073741824]
source "$(dirname "$0")/common.sh"
setup
n=${1:-30}
bytes=${2:-1073741824}
"$MAKE_FIXTURE" grow "$work" "$n" "$bytes"
top=$(printf "%s/b%03d" "$work" $((n - 1)))
cmp <("$STITCH" cat "$top" grow.bin) "$work/original"   # correctness first
cat "$work/original" >/dev/null
native=$(best_of 5 cat "$work/original")
stitched=$(best_of 5 "$STITCH" cat "$top" grow.bin)
echo "{\"bench\":\"cat_stitched\",\"backups\":$n,\"bytes\":$bytes,\"native_s\":$native,\"stitch_cat_s\":$stitched,\"ratio\":$(ratio "$stitched" "$native")}"
