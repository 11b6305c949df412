#!/usr/bin/env bash
# A year of daily backups: growing logs, DDL files with appended statements, immutable parts
# that come and go, renames and log rotations. Every day's folder in the store mount must equal
# that day's tree; at/ and latest must resolve; stitch diff must report the appends.
# Usage: year_test.sh STITCH STITCHFS [DAYS=365]. Exits 77 (skipped) where FUSE is unusable.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
STITCHFS=$2
DAYS=${STITCHFS_YEAR_DAYS:-${3:-365}}  # (the sanitizer run uses fewer days)
export STITCH_NO_PROGRESS=1 TZ=UTC
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  echo "SKIP: no /dev/fuse or fusermount3"
  exit 77
fi
work=$(mktemp -d)
M=$work/mnt
cleanup() {
  mountpoint -q "$M" 2>/dev/null && { fusermount3 -u "$M" || fusermount3 -uz "$M"; }
  rm -rf "$work"
}
trap cleanup EXIT

S=$work/src
mkdir -p "$S/logs" "$S/metadata/db" "$S/data/db/t"
printf 'CREATE TABLE db.t (x UInt64) ENGINE = MergeTree ORDER BY x;\n' > "$S/metadata/db/t.sql"
parts=()
day_name() { printf 'day-%03d' "$1"; }
prev=""
for d in $(seq 1 "$DAYS"); do
  date=$(date -u -d "2026-01-01 +$((d - 1)) days" '+%F')
  if [ $((d % 30)) = 0 ]; then mv "$S/logs/app.log" "$S/logs/app.log.$d"; fi        # rotation
  printf '%s 00:00:01 request %d ok\n' "$date" "$d" >> "$S/logs/app.log"          # grows daily
  [ $((d % 7)) = 0 ] && printf 'ALTER TABLE db.t ADD COLUMN c%d UInt8;\n' "$d" >> "$S/metadata/db/t.sql"
  if [ $((d % 3)) = 0 ]; then                                                        # a new part
    p="all_${d}_${d}_0"
    mkdir -p "$S/data/db/t/$p"
    head -c $((1000 + d)) /dev/urandom > "$S/data/db/t/$p/x.bin"
    printf 'columns format version: 1\n' > "$S/data/db/t/$p/columns.txt"
    parts+=("$p")
  fi
  if [ $((d % 10)) = 0 ] && [ ${#parts[@]} -ge 2 ]; then                             # a merge
    a=${parts[0]} b=${parts[1]}
    m="all_${a#all_}_merged_$d"
    mkdir -p "$S/data/db/t/$m"
    cat "$S/data/db/t/$a/x.bin" "$S/data/db/t/$b/x.bin" > "$S/data/db/t/$m/x.bin"
    cp "$S/data/db/t/$a/columns.txt" "$S/data/db/t/$m/columns.txt"
    rm -rf "${S:?}/data/db/t/$a" "${S:?}/data/db/t/$b"
    parts=("${parts[@]:2}" "$m")
  fi
  if [ $((d % 45)) = 0 ]; then mv "$S/metadata/db/t.sql" "$S/metadata/db/t_$d.sql"; fi  # rename
  name=$(day_name "$d")
  args=(backup "$S" "$work/store/$name" --immutable 'data/*' --timestamp "$date 03:00:00")
  [ -n "$prev" ] && args+=(--base "$work/store/$prev")
  "$STITCH" "${args[@]}" >/dev/null 2>"$work/err" || { bad "backup $name: $(cat "$work/err")"; break; }
  cp -a "$S" "$work/expected-$name"
  prev=$name
done
check "log lists every day" test "$("$STITCH" log "$work/store" | grep -c '^day-')" = "$DAYS"

mkdir -p "$M"
"$STITCHFS" "$work/store" "$M" || { echo "mount failed"; exit 1; }
same=0
for d in $(seq 1 "$DAYS"); do
  name=$(day_name "$d")
  if diff -r --no-dereference "$work/expected-$name" "$M/$name" >/dev/null; then
    same=$((same + 1))
  else
    bad "day $d differs from its tree"
  fi
done
check "every day's folder equals that day's tree" test "$same" = "$DAYS"
check "latest is the last day" test "$(link_name "$M/latest")" = "$(day_name "$DAYS")"
check "at/<date> resolves to that day" test "$(link_name "$M/at/2026-02-01")" = "day-032"
check "at/<date and hour before the backup> is the day before" test "$(link_name "$M/at/2026-02-01T02")" = "day-031"
check "at/<month> is the month's last backup" test "$(link_name "$M/at/2026-01")" = "day-031"
mid=$(day_name $((DAYS / 2)))
check "a mid-year day read through the store matches" diff -r --no-dereference "$work/expected-$mid" "$M/at/$(date -u -d "2026-01-01 +$((DAYS / 2 - 1)) days" '+%F')/"
out=$("$STITCH" diff "$work/store/day-001" "$work/store/day-002")
check "diff reports the day's log append" grep -qE '^\+ logs/app.log \(\+[0-9]+ bytes\)$' <<<"$out"
out=$("$STITCH" diff "$work/store/day-006" "$work/store/day-007")
check "diff reports the appended DDL statement" grep -qE '^\+ metadata/db/t.sql' <<<"$out"
last=$(( (DAYS / 30) * 30 ))
if [ "$last" -ge 30 ]; then
  out=$("$STITCH" diff "$work/store/$(day_name $((last - 1)))" "$work/store/$(day_name "$last")")
  check "diff reports a rotation as a rename" grep -qE "^R logs/app.log -> logs/app.log.$last$" <<<"$out"
fi
check "the last day verifies through its whole chain" "$STITCH" verify "$work/store/$(day_name "$DAYS")" >/dev/null
fusermount3 -u "$M"

# Shared inodes, with memory bounds so small that backups are evicted and reopened all the time.
"$STITCHFS" "$work/store" "$M" -o share_inodes,max_backups=3,cache_mb=1,manifest_cache_mb=1 ||
  { echo "mount failed"; exit 1; }
same=0 tried=0
for d in $(seq 1 7 "$DAYS"); do
  name=$(day_name "$d")
  tried=$((tried + 1))
  diff -r --no-dereference "$work/expected-$name" "$M/$name" >/dev/null && same=$((same + 1))
done
check "every 7th day equals its tree with tight memory bounds" test "$same" = "$tried"
week=()
for d in $(seq $((DAYS > 8 ? DAYS - 7 : 1)) "$DAYS"); do week+=("$M/$(day_name "$d")"); done
rsync -aH "${week[@]}" "$work/week/"
same=0
for w in "${week[@]}"; do
  diff -r --no-dereference "$work/expected-$(basename "$w")" "$work/week/$(basename "$w")" >/dev/null && same=$((same + 1))
done
check "rsync -aH of the last week copies every day exactly" test "$same" = "${#week[@]}"
files=$(find "$work/week" -type f | wc -l)
inodes=$(find "$work/week" -type f -printf '%i\n' | sort -u | wc -l)
check "rsync -aH linked the unchanged files ($inodes inodes for $files files)" test "$((inodes * 3))" -lt "$files"
all=$(du -s --apparent-size -B1 "$M" | cut -f1)
one=$(du -s --apparent-size -B1 "$M/$(day_name "$DAYS")" | cut -f1)
check "du of the whole year counts unchanged files once" test "$all" -lt "$((one * DAYS / 4))"
fusermount3 -u "$M"

# Prune the year with several policies; every kept day must still equal its tree.
for policy in "--keep-last 7" "--keep-daily 30 --keep-monthly 12" "--keep-monthly 3"; do
  rm -rf "$work/pruned"
  cp -a "$work/store" "$work/pruned"
  # shellcheck disable=SC2086
  "$STITCH" prune "$work/pruned" $policy >/dev/null || bad "prune $policy failed"
  good=0 total=0
  for b in "$work"/pruned/*; do
    name=$(basename "$b")
    total=$((total + 1))
    rm -rf "$work/r"
    "$STITCH" restore "$b" "$work/r" >/dev/null 2>&1 &&
      diff -r --no-dereference "$work/r" "$work/expected-$name" >/dev/null && good=$((good + 1))
  done
  check "prune $policy: every kept day ($total) restores its tree" test "$good" = "$total"
done
check "keep-monthly 3 kept the last backup of each of the last 3 months" \
  test "$(ls "$work/pruned" | wc -l)" = "$([ "$DAYS" -ge 60 ] && echo 3 || ls "$work/pruned" | wc -l)"
finish
