#!/usr/bin/env bash
# scripts/demo.sh, run with the built binaries (nothing installed or built), and the lines of its
# output that matter checked, so that the demo cannot rot: the week of backups and what each
# day stored, the store mount (latest, at/, by-uuid/, diff, cp -a, provenance), log, diff,
# verify, and prune under the open mount with the kept days still reading right.
# Usage: demo_test.sh STITCH STITCHFS REPO
# Exits 77 (skipped) where FUSE cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
STITCHFS=$2
REPO=$3
require_fuse
work=$(mktemp -d)
trap 'unmount_all "$work/demo/mnt"; rm -rf "$work"' EXIT
t0=$SECONDS
STITCH=$STITCH STITCHFS=$STITCHFS bash "$REPO/scripts/demo.sh" "$work/demo" >"$work/out" 2>&1
rc=$?
took=$((SECONDS - t0))
out=$work/out
check "the demo succeeds (exit $rc)" test "$rc" = 0
has() { grep -qE -- "$1" "$out"; }
has_fixed() { grep -qF -- "$1" "$out"; }
line_of() { grep -nE -- "$1" "$out" | head -1 | cut -d: -f1; }

# The three uses, in order, each step announced.
l1=$(line_of '^== 1\. ') l2=$(line_of '^== 2\. ') l3=$(line_of '^== 3\. ')
check "the three steps, in order" test -n "$l1" -a -n "$l2" -a -n "$l3" -a "${l1:-0}" -lt "${l2:-0}" -a "${l2:-0}" -lt "${l3:-0}"
check "every command shown follows a line saying what it shows" \
  test "$(grep -c "^== " "$out")" -ge 10

# 1. A week of backups: each day's line; the incrementals store a fraction of the tree.
bytes() { numfmt --from=iec-i "$(tr -d ' B' <<<"$1")"; }
for d in 1 2 3 4 5 6 7; do
  row=$(grep -E "^day-$d +[0-9.]+ [KMG]?i?B +[0-9.]+ [KMG]?i?B " "$out")
  check "day-$d: tree size and what it stored" test -n "$row"
  [ -n "$row" ] || continue
  read -r _ tsize tunit ssize sunit _ <<<"$row"
  total=$(bytes "$tsize$tunit") stored=$(bytes "$ssize$sunit")
  if [ "$d" = 1 ]; then
    check "day-1, a full backup, stores the whole tree" test "$stored" -ge "$total"
  elif [ "$d" = 4 ]; then
    check "day-4 stores the merged part, less than the tree" test "$stored" -lt "$total"
  else
    check "day-$d stores a small part of the tree ($stored of $total)" test $((stored * 5)) -lt "$total"
  fi
done

# 2. The store mounted once.
has_fixed '$ stitchfs store mnt' || bad "the store is mounted"
check "ls -l shows latest -> day-7" has ' latest -> day-7$'
check "at/<noon on the 3rd> -> day-3" has ' mnt/at/2026-10-03T12:00 -> \.\./day-3$'
check "day-3's parts through at/" has_fixed 'all_3_3_0'
check "by-uuid lists 7 backups" test "$(grep -cE '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' "$out")" = 7
check "diff through the mount shows the merge" has '^Only in mnt/day-5/data/shop/events: all_1_4_1$'
check "diff through the mount shows the DDL change" has_fixed '> ALTER TABLE shop.events ADD COLUMN y String'
check "cp -a of a day out of the mount is that day's tree" has_fixed 'identical to the tree of day-3'
src=$(grep '^user.stitchfs.source=' "$out")
for d in 1 2 3 4 5 6 7; do
  check "provenance names day-$d" grep -q "store/day-$d" <<<"$src"
done

# 3. log, diff, verify, prune with the mount open.
check "stitch log: 7 backups" test "$(grep -cE '^day-[1-7] +2026-10-0[1-7] 03:00:00' "$out")" = 7
check "stitch diff: the log's appended bytes" has '^\+ data/shop/log/data\.bin \(\+[0-9]+ bytes\)$'
check "stitch verify: OK" has '^OK: [0-9]+ files, [0-9]+ bytes read, 0 problems$'
for d in 1 2 3 4; do check "prune removes day-$d" has "^remove  day-$d "; done
check "prune flattens day-5" has '^flatten day-5 \(its base day-4 goes\)'
check "prune keeps day-6 and day-7" test "$(grep -cE '^keep +day-[67] ' "$out")" = 2
after=$(sed -n '/^\$ stitch prune/,$p' "$out" | sed -n '/^\$ ls mnt$/,/^latest$/p' | tr '\n' ' ')
check "the mount follows the prune ($after)" test "$after" = '$ ls mnt at by-uuid day-5 day-6 day-7 latest '
for d in 5 6 7; do
  check "day-$d reads right through the mount after the prune" has_fixed "day-$d through the mount: identical"
done
check "the demo ends" has '^Everything is in '
check "unmounted at the end" bash -c "! mountpoint -q '$work/demo/mnt'"
echo "the demo took $took s (with built binaries)"
check "the demo takes well under a minute when built ($took s)" test "$took" -lt 60
[ "$failed" = 0 ] || cat "$out"
finish
