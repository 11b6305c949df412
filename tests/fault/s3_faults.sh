#!/usr/bin/env bash
# S3 requests answered wrongly on purpose: stitch and stitchfs talk to a real radosgw through
# s3_fault_proxy, whose rules fail, cut, delay or falsify chosen requests.
#  - Transient faults (503, 500, 429, resets before and during the answer, cut bodies, answers
#    cut in their headers, delays, truncated uploads; once or twice) on every kind of request a
#    backup and a read make: the backup, `stitch cat`, `restore` and a mount succeed with the
#    exact bytes.
#  - Persistent faults on each of them (STITCH_S3_MAX_ATTEMPTS=2): `stitch backup` fails with
#    IO_ERROR and leaves no .backup, no data object and no multipart upload, and the next backup
#    to the same place succeeds; `stitch cat` fails and prints no byte that is not the file's;
#    a mount answers EIO for that file only, and the file reads right once the fault is gone.
#  - A ranged GET whose Content-Range gives another length is BACKUP_DAMAGED (exit 20).
#  - Bodies changed on the way: an upload's is refused by the server (Content-MD5) and sent
#    again, or the backup fails cleanly; a flatten's read-back finds a GET's (IO_ERROR, exit 1);
#    a GET's kept in the block cache is dropped when a whole read finds the file wrong (verify
#    and restore read it again and succeed, cat and a mount fail once).
#  - prune's DeleteObjects failed once (retried: done) or for good (exit 1, the kept backup
#    exact, the next prune finishes).
# Usage: s3_faults.sh STITCH STITCHFS S3_FAULT_PROXY RADOSGW_SH
# Exits 77 (skipped) where FUSE or radosgw cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/fault_lib.sh"
STITCH=$1
STITCHFS=$2
PROXY=$3
RGW=$4
export STITCH_NO_PROGRESS=1 STITCH_CACHE_DIR=off
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null || ! command -v radosgw >/dev/null; then
  echo "SKIP: no /dev/fuse, fusermount3 or radosgw"
  exit 77
fi
work=$(mktemp -d)
proxy_pid=
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do
    mountpoint -q "$m" 2>/dev/null && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
  s3_stop "$RGW" "$work"
  rm -rf "$work"
}
trap cleanup EXIT
started=$SECONDS
s3_start "$RGW" "$PROXY" "$work" || exit 1

# uploads PREFIX: the multipart uploads in progress under stitch/PREFIX (faults, s3api, keys:
# fault_lib.sh).
uploads() { s3api GET "stitch?prefix=${1//\//%2F}&uploads=" | grep -o '<UploadId>[^<]*</UploadId>'; }
# drop PREFIX: removes every object under PREFIX (radosgw keeps them in memory).
drop() {
  local k
  for k in $(keys "$1"); do s3api DELETE "stitch/$k" >/dev/null; done
}
# backup ARG...: stitch backup, quiet unless it fails.
backup() {
  "$STITCH" backup "$@" >/dev/null 2>"$work/backup.err" && return
  local rc=$?
  sed 's/^/  stitch: /' "$work/backup.err"
  return $rc
}
# same_backup DEST TREE: DEST verifies and restores to exactly TREE.
same_backup() {
  rm -rf "$work/restored"
  "$STITCH" verify "$1" >/dev/null 2>&1 && "$STITCH" restore "$1" "$work/restored" >/dev/null 2>&1 &&
    diff -r --no-dereference "$work/restored" "$2" >/dev/null
}
# nothing_left PREFIX: no object (but a .lock, which a later backup takes over) under PREFIX.
nothing_left() { [ -z "$(keys "$1/" | grep -v '/\.lock$')" ]; }
no_uploads() { [ -z "$(uploads "$1/")" ]; }
# prefix_of FILE OUT: OUT holds the first bytes of FILE, nothing else.
prefix_of() { cmp -s -n "$(stat -c %s "$2")" "$1" "$2" && [ "$(stat -c %s "$2")" -le "$(stat -c %s "$1")" ]; }

# --- A source tree: a file read in several ranges, one uploaded in two parts, small ones ------
src=$work/src
mkdir -p "$src/logs" "$src/db/part_1" "$src/empty"
head -c 2500000 /dev/urandom >"$src/logs/app.log"
head -c $((17 << 20)) /dev/urandom >"$src/db/part_1/data.bin"  # Multipart: 16 MiB + 1 MiB.
echo "config" >"$src/db/cfg.txt"
: >"$src/logs/empty.log"
ln -s ../db/cfg.txt "$src/logs/link"
BIG=db/part_1/data.bin
check "reference backup through the proxy" backup "$src" s3://stitch/ref/b1
check "reference backup is exact" same_backup s3://stitch/ref/b1 "$src"

# --- Transient faults on every request of a backup: it succeeds, exact -----------------------
# Each round gives each request kind another action, so that the rounds cover every pair.
ACTIONS=(503 500 429 reset reset-mid-body short-body short-head delay=300 truncate-upload)
WRITES=("PUT app.log" "PUT partNumber=" "POST ?uploads" "POST uploadId=" "PUT .backup"
  "PUT .lock" "GET .lock" "DELETE .lock" "GET list-type=2")
for round in "${!ACTIONS[@]}"; do
  set_rules=()
  lost_create=0
  for i in "${!WRITES[@]}"; do
    action=${ACTIONS[$(((round + i) % ${#ACTIONS[@]}))]}
    set_rules+=("${WRITES[$i]} $action $((1 + (round + i) % 2))")
    case "${WRITES[$i]} $action" in
      "POST ?uploads "*-body | "POST ?uploads short-head") lost_create=1 ;;  # Answer lost.
    esac
  done
  faults "${set_rules[@]}"
  dest=s3://stitch/tw/r$round
  check "round $round: backup under transient faults (${set_rules[*]})" \
    backup "$src" "$dest"
  faults
  check "round $round: the backup is exact" same_backup "$dest" "$src"
  check "round $round: no .lock left" [ -z "$(keys "tw/r$round/.lock")" ]
  if [ "$lost_create" = 1 ]; then
    check "round $round: a CreateMultipartUpload whose answer was lost leaves no upload" \
      no_uploads "tw/r$round"
  else
    check "round $round: no multipart upload left" no_uploads "tw/r$round"
  fi
  drop "tw/r$round"
done

# --- Transient faults on every request of a read: cat, restore and a mount are exact --------
READS=("HEAD .backup" "GET .backup" "GET app.log" "GET data.bin")
for round in 0 1 2 3 4 5 6 7; do  # (truncate-upload needs a request body: not for reads.)
  set_rules=()
  for i in "${!READS[@]}"; do
    set_rules+=("${READS[$i]} ${ACTIONS[$(((round + i) % 8))]} $((1 + (round + i) % 2))")
  done
  faults "${set_rules[@]}"
  check "round $round: stitch cat under transient faults (${set_rules[*]})" \
    bash -c "'$STITCH' cat s3://stitch/ref/b1 '$BIG' | cmp - '$src/$BIG'"
  faults "${set_rules[@]}"
  check "round $round: stitch cat of the ranged file" \
    bash -c "'$STITCH' cat s3://stitch/ref/b1 logs/app.log | cmp - '$src/logs/app.log'"
done
faults "HEAD .backup reset 1" "GET .backup short-head 1" "GET app.log 503 2" \
  "GET data.bin reset-mid-body 2" "GET cfg.txt short-body 1"
check "restore under transient faults" same_backup s3://stitch/ref/b1 "$src"
faults "HEAD .backup short-head 2" "GET .backup 503 1" "GET app.log short-head 2" \
  "GET data.bin short-body 2" "GET cfg.txt 429 1"
mkdir -p "$work/m0"
mounts+=("$work/m0")
check "mount under transient faults" "$STITCHFS" s3://stitch/ref/b1 "$work/m0"
check "the mount reads exact bytes (diff -r)" diff -r "$work/m0" "$src"
faults
mountpoint -q "$work/m0" && fusermount3 -u "$work/m0"

# --- Incrementals on S3 bases; a resolved index that cannot be written ------------------------
cp -a "$src" "$work/day2"
head -c 300000 /dev/urandom >>"$work/day2/logs/app.log"
faults "GET .backup reset 1" "HEAD .backup 503 2" "GET .lock short-head 1" "PUT app.log 500 2"
check "an incremental on an S3 base under transient faults" \
  backup "$work/day2" s3://stitch/ref/b2 --base s3://stitch/ref/b1
faults
check "the incremental is exact" same_backup s3://stitch/ref/b2 "$work/day2"
cp -a "$work/day2" "$work/day3"
echo more >>"$work/day3/logs/app.log"
faults "PUT .stitchfs/index 503"
out=$(STITCH_S3_MAX_ATTEMPTS=2 "$STITCH" backup "$work/day3" s3://stitch/ref/b3 \
  --base s3://stitch/ref/b2 2>&1)
check "an incremental whose resolved index cannot be written succeeds" [ $? = 0 ]
case "$out" in *"no resolved index kept"*) ok ;; *) bad "no warning about the index: $out" ;; esac
faults
check "that incremental is exact" same_backup s3://stitch/ref/b3 "$work/day3"

# --- Bytes changed on the way ----------------------------------------------------------------
# Every PUT and part carries Content-MD5: the server refuses a body changed on the way, and it is
# sent again (the backup exact); a flatten reads its copy back and finds a GET's bytes changed.
for rule in "PUT .backup flip-upload 1" "PUT app.log flip-upload 1" "PUT partNumber= flip-upload 1"; do
  faults "$rule"
  check "'$rule': the body is sent again and the backup succeeds" backup "$src" s3://stitch/flip/b
  faults
  check "'$rule': and is exact" same_backup s3://stitch/flip/b "$src"
  drop flip/b
done
faults "GET flatx/b1/$BIG flip-body 1"
"$STITCH" flatten s3://stitch/ref/b1 s3://stitch/flatx/b1 >/dev/null 2>"$work/err"
rc=$?
faults
check "a flatten whose copy reads back changed exits 1, IO_ERROR (got $rc)" [ "$rc" = 1 ]
check "naming the copy, not the backup" grep -q "reads back wrong.*own bytes read right" "$work/err"
check "and leaves no backup" [ -z "$(keys flatx/b1/.backup)" ]
check "the next flatten succeeds" bash -c "'$STITCH' flatten s3://stitch/ref/b1 s3://stitch/flatx/b1 >/dev/null"
check "and is exact" same_backup s3://stitch/flatx/b1 "$src"
drop flatx/b1

# --- Bytes changed on the way and kept in the block cache -----------------------------------
# A random read through a mount is widened to whole 1 MiB blocks, which the block cache keeps:
# bytes no checksum can tell right alone. A whole read that finds the file wrong drops them:
# verify, restore and flatten read the file again from the store and succeed, cat fails once
# (its bytes are out) and the next cat is right, a mount answers EIO and a new one reads right.
bc=$work/blocks
mkdir -p "$work/mp"
mounts+=("$work/mp")
# poison: every 1 MiB block of logs/app.log (2,500,000 bytes) read at random through a mount
# into the block cache $bc (O_DIRECT: no read-ahead), block 1's GET changed on the way.
poison() {
  STITCH_CACHE_DIR=$bc "$STITCHFS" s3://stitch/ref/b1 "$work/mp" || return 1
  local skip
  faults "GET app.log flip-body 1"
  for skip in 300 600 1; do  # Blocks 1, 2 and 0, 4 KiB each (a read at 0 would stream).
    dd if="$work/mp/logs/app.log" of=/dev/null bs=4096 skip=$skip count=1 iflag=direct \
      2>/dev/null || return 1
  done
  faults
  fusermount3 -u "$work/mp"
  [ "$(find "$bc/s3-blocks" -type f | wc -l)" -ge 4 ]  # The three blocks, the version record.
}
check "the block cache holds app.log's blocks, one changed on the way" poison
check "verify reads the file again from the store and succeeds" \
  env STITCH_CACHE_DIR="$bc" "$STITCH" verify s3://stitch/ref/b1
rm -rf "$bc"
check "poisoned again" poison
rm -rf "$work/restored"
check "restore copies the file again from the store and succeeds" \
  env STITCH_CACHE_DIR="$bc" "$STITCH" restore s3://stitch/ref/b1 "$work/restored"
check "and the restore is exact" diff -r --no-dereference "$work/restored" "$src"
rm -rf "$bc"
check "poisoned again" poison
rm -rf "$work/flatlocal"
check "a flatten to a folder copies the file again from the store and succeeds" \
  env STITCH_CACHE_DIR="$bc" "$STITCH" flatten s3://stitch/ref/b1 "$work/flatlocal"
check "and the flattened copy is exact" same_backup "$work/flatlocal" "$src"
rm -rf "$bc" "$work/flatlocal"
check "poisoned again" poison
expect_exit 20 "now dropped" -- env STITCH_CACHE_DIR="$bc" "$STITCH" cat s3://stitch/ref/b1 logs/app.log
check "the next cat reads right" bash -c \
  "STITCH_CACHE_DIR='$bc' '$STITCH' cat s3://stitch/ref/b1 logs/app.log | cmp - '$src/logs/app.log'"
rm -rf "$bc"
check "poisoned again" poison
STITCH_CACHE_DIR=$bc "$STITCHFS" s3://stitch/ref/b1 "$work/mp"
err=$(cat "$work/mp/logs/app.log" 2>&1 >/dev/null)
case "$err" in *"Input/output error"*) ok ;; *) bad "a mount's whole read of the file: not EIO: $err" ;; esac
fusermount3 -u "$work/mp"
STITCH_CACHE_DIR=$bc "$STITCHFS" s3://stitch/ref/b1 "$work/mp"
check "a new mount reads the file right" cmp "$work/mp/logs/app.log" "$src/logs/app.log"
fusermount3 -u "$work/mp"
rm -rf "$bc"

# --- Persistent faults on a backup: it fails cleanly; the next one succeeds ------------------
export STITCH_S3_MAX_ATTEMPTS=2
# persistent NAME RULE: a backup to tp/NAME under RULE fails with IO_ERROR, leaves nothing that
# opens as a backup, no data object and no multipart upload; once the fault is gone, a backup
# to the same place succeeds.
persistent() {
  local name=$1 rule=$2 dest=s3://stitch/tp/$1
  faults "$rule"
  expect_exit 1 "IO_ERROR" -- "$STITCH" backup "$src" "$dest"
  faults
  check "$name ($rule): no .backup left" [ -z "$(keys "tp/$name/.backup")" ]
  check "$name ($rule): does not open as a backup" bash -c "! '$STITCH' ls '$dest' >/dev/null 2>&1"
  check "$name ($rule): no data object left" nothing_left "tp/$name"
  if [ "$name" = create-lost ]; then
    check "$name: a CreateMultipartUpload whose answer was lost leaves no upload" \
      no_uploads "tp/$name"
  else
    check "$name ($rule): no multipart upload left" no_uploads "tp/$name"
  fi
  check "$name: the next backup to the same place succeeds" backup "$src" "$dest"
  check "$name: and is exact" same_backup "$dest" "$src"
  drop "tp/$name"
}
persistent put-503 "PUT app.log 503"
persistent put-lost "PUT app.log reset-mid-body"
persistent put-truncated "PUT app.log truncate-upload"
persistent part-500 "PUT partNumber= 500"
persistent part-truncated "PUT partNumber= truncate-upload"
persistent part-cut-head "PUT partNumber= short-head"
persistent create-503 "POST ?uploads 503"
persistent create-lost "POST ?uploads short-body"
persistent complete-reset "POST uploadId= reset"
persistent complete-lost "POST uploadId= reset-mid-body"
persistent manifest-503 "PUT .backup 503"
persistent manifest-lost "PUT .backup reset-mid-body"
persistent manifest-changed "PUT .backup flip-upload"
persistent part-changed "PUT partNumber= flip-upload"
persistent unlock-429 "DELETE .lock 429"
persistent lock-503 "PUT .lock 503"
persistent list-cut "GET list-type=2 short-body"

# --- DeleteObjects under faults: retried when transient; when it keeps failing prune fails,
# the kept backup stays exact, and the next prune finishes. -------------------------------------
psrc=$work/psrc
mkdir -p "$psrc"
for i in 1 2 3 4 5; do echo "$i" >"$psrc/f$i"; done
pstore() {  # pstore NAME: two full backups under tpr/NAME, a day apart.
  backup "$psrc" "s3://stitch/tpr/$1/d1" --timestamp "2026-11-01 10:00:00" &&
    backup "$psrc" "s3://stitch/tpr/$1/d2" --timestamp "2026-11-02 10:00:00"
}
n=0
for action in 503 reset reset-mid-body short-body short-head delay=300; do
  n=$((n + 1))
  check "store t$n to prune" pstore "t$n"
  faults "POST ?delete $action 1"
  check "prune under '$action' once on DeleteObjects" \
    bash -c "'$STITCH' prune s3://stitch/tpr/t$n --keep-last 1 >/dev/null"
  faults
  check "'$action': the removed backup left no object" [ -z "$(keys "tpr/t$n/d1/")" ]
  check "'$action': the kept one is exact" same_backup "s3://stitch/tpr/t$n/d2" "$psrc"
done
check "store p to prune" pstore p
faults "POST ?delete 503"
expect_exit 1 "IO_ERROR" -- "$STITCH" prune s3://stitch/tpr/p --keep-last 1
faults
check "deletes that keep failing: the kept backup is exact" same_backup s3://stitch/tpr/p/d2 "$psrc"
check "and the next prune finishes" bash -c "'$STITCH' prune s3://stitch/tpr/p --keep-last 1 >/dev/null"
check "leaving no object of the removed one" [ -z "$(keys "tpr/p/d1/")" ]

# --- Persistent faults on reads: an error, never other bytes ---------------------------------
for rule in "GET data.bin 503" "GET data.bin reset-mid-body" "GET data.bin short-body" \
  "GET data.bin short-head" "GET data.bin delay=0 2|GET data.bin reset" \
  "GET .backup short-body" "HEAD .backup short-head"; do
  IFS='|' read -r -a set_rules <<<"$rule"
  faults "${set_rules[@]}"
  "$STITCH" cat s3://stitch/ref/b1 "$BIG" >"$work/out" 2>"$work/err"
  rc=$?
  faults
  check "cat under '$rule': exit 1 (got $rc)" [ "$rc" = 1 ]
  check "cat under '$rule': IO_ERROR" grep -q IO_ERROR "$work/err"
  check "cat under '$rule': no byte but the file's" prefix_of "$src/$BIG" "$work/out"
done
for rule in "GET data.bin wrong-length" "GET data.bin wrong-length=-1" \
  "GET data.bin delay=0 3|GET data.bin wrong-length=7"; do
  IFS='|' read -r -a set_rules <<<"$rule"
  faults "${set_rules[@]}"
  "$STITCH" cat s3://stitch/ref/b1 "$BIG" >"$work/out" 2>"$work/err"
  rc=$?
  check "cat under '$rule': exit 20 (got $rc)" [ "$rc" = 20 ]
  check "cat under '$rule': BACKUP_DAMAGED" grep -q BACKUP_DAMAGED "$work/err"
  check "cat under '$rule': no byte but the file's" prefix_of "$src/$BIG" "$work/out"
  faults "${set_rules[@]}"
  out=$("$STITCH" verify s3://stitch/ref/b1 2>&1)
  rc=$?
  faults
  check "verify under '$rule': exit 20 (got $rc)" [ "$rc" = 20 ]
  case "$out" in *BACKUP_DAMAGED*) ok ;; *) bad "verify under '$rule': $out" ;; esac
done
faults "GET data.bin delay=0 3" "GET data.bin reset"
rm -rf "$work/partial"
expect_exit 1 "IO_ERROR" -- "$STITCH" restore s3://stitch/ref/b1 "$work/partial"
faults
check "a failed restore leaves no partial data.bin" [ ! -e "$work/partial/$BIG" ]
faults "GET .backup wrong-length"
expect_exit 20 "BACKUP_DAMAGED" -- "$STITCH" cat s3://stitch/ref/b1 db/cfg.txt
faults
check "cat reads right once the faults are gone" \
  bash -c "'$STITCH' cat s3://stitch/ref/b1 '$BIG' | cmp - '$src/$BIG'"

# --- Persistent faults through a mount: EIO for that file only, then right again -------------
n=0
for action in 503 reset reset-mid-body short-body short-head wrong-length; do
  n=$((n + 1))
  m=$work/m$n
  mkdir -p "$m"
  mounts+=("$m")
  "$STITCHFS" s3://stitch/ref/b1 "$m" || { bad "mount $n"; continue; }
  faults "GET data.bin $action"
  err=$(cat "$m/$BIG" 2>&1 >/dev/null)
  check "mount, '$action' on data.bin: cat fails" [ $? != 0 ]
  case "$err" in *"Input/output error"*) ok ;; *) bad "mount, '$action': not EIO: $err" ;; esac
  check "mount, '$action': another file reads right" cmp "$m/logs/app.log" "$src/logs/app.log"
  check "mount, '$action': the tree still lists" ls -lR "$m" >/dev/null
  faults
  check "mount, '$action': data.bin reads right once the fault is gone" cmp "$m/$BIG" "$src/$BIG"
  fusermount3 -u "$m"
done

echo "s3_faults: $((SECONDS - started)) s"
# shellcheck disable=SC2154  # (lib.sh counts the failures.)
[ "$failed" = 0 ] || { echo "== last lines of the proxy's log"; tail -n 30 "$work/proxy.log"; }
finish
