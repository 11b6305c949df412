#!/usr/bin/env bash
# End-to-end tests of `stitch backup`: a killed backup, a full destination, exit codes, and an
# incremental on a ClickHouse-format base. Usage: backup_test.sh STITCH MAKE_FIXTURE
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
MAKE_FIXTURE=$2
export STITCH_NO_PROGRESS=1
work=$(mktemp -d)
cleanup() {
  mountpoint -q "$work/small" 2>/dev/null && umount "$work/small"
  rm -rf "$work"
}
trap cleanup EXIT

# --- full + incremental, summary figures ----------------------------------------------------
mkdir -p "$work/src/logs" "$work/src/empty"
head -c 200000 /dev/urandom > "$work/src/logs/app.log"
echo "CREATE TABLE t (x UInt8) ENGINE = Log;" > "$work/src/t.sql"
check "full backup" "$STITCH" backup "$work/src" "$work/store/b0"
head -c 1000 /dev/urandom >> "$work/src/logs/app.log"
sleep 0.1  # Changed clearly before b1 read it: b1's files cache entry for it is trusted below.
out=$("$STITCH" backup "$work/src" "$work/store/b1" --base "$work/store/b0" --json)
check "incremental stores only the appended bytes" grep -q '"bytes_stored":1000,' <<<"$out"
check "incremental reuses the prefix" grep -q '"bytes_from_base_prefix":200000,' <<<"$out"
check "data file is exactly the tail" test "$(stat -c %s "$work/store/b1/logs/app.log")" = 1000
check "a full backup needs no resolved index" test ! -e "$work/store/b0/.stitchfs"
check "nor does one whose base is full" test ! -e "$work/store/b1/.stitchfs"
rm -rf "$work/r"
check "restore incremental" "$STITCH" restore "$work/store/b1" "$work/r"
check "restored tree equals the source" diff -r "$work/r" "$work/src"
check "the base is named by its absolute path (what ClickHouse resolves)" \
  grep -qF "<base_backup>File(&apos;$work/store/b0&apos;)</base_backup>" "$work/store/b1/.backup"
mv "$work/store" "$work/moved-store"
check "a moved store still opens (its base found beside the backup)" "$STITCH" verify "$work/moved-store/b1"
mv "$work/moved-store" "$work/store"

# --- files cache ------------------------------------------------------------------------------
out=$("$STITCH" backup "$work/src" "$work/store/b2" --base "$work/store/b1" --files-cache --json)
check "files cache reads nothing for an unchanged tree" grep -q '"bytes_read":0,' <<<"$out"
check "files cache backup verifies" "$STITCH" verify "$work/store/b2"
check "a backup whose base has a base keeps its resolved index" test -s "$work/store/b2/.stitchfs/index"
cp -a "$work/store/b2" "$work/store/b2-copy"  # Another .backup identity: its index is not trusted.
check "a copy whose index is stale reads the same" cmp <("$STITCH" cat "$work/store/b2-copy" logs/app.log) "$work/src/logs/app.log"
echo garbage > "$work/store/b2-copy/.stitchfs/index"
check "and so does one with a damaged index" cmp <("$STITCH" cat "$work/store/b2-copy" logs/app.log) "$work/src/logs/app.log"
rm "$work/store/b2-copy/.stitchfs/index"
mkfifo "$work/store/b2-copy/.stitchfs/index"
check "and one whose index is a FIFO, never waited on" bash -c 'set -o pipefail; timeout 20 "$0" cat "$1" logs/app.log | cmp - "$2"' \
  "$STITCH" "$work/store/b2-copy" "$work/src/logs/app.log"
rm -rf "$work/store/b2-copy"

# --- stores moved and copied whole: their own bases, their indexes naming the old places -------
mkdir -p "$work/elsewhere"
mv "$work/store" "$work/elsewhere/store"
check "a moved chain of 3 opens (its index names the old places)" \
  "$STITCH" verify "$work/elsewhere/store/b2"
info=$("$STITCH" info "$work/elsewhere/store/b2")
check "info says where each base was found" test "$(grep -c 'found: beside the backup' <<<"$info")" = 2
mv "$work/elsewhere/store" "$work/store"
cp -a "$work/store" "$work/copy"
truncate -s 100 "$work/store/b0/logs/app.log"  # The original damaged: the copy reads its own.
check "a copied store reads its own bases" cmp <("$STITCH" cat "$work/copy/b2" logs/app.log) "$work/src/logs/app.log"
expect_exit 20 "BACKUP_DAMAGED" -- "$STITCH" cat "$work/store/b2" logs/app.log
rm -rf "$work/store" && mv "$work/copy" "$work/store"
check "the copy in the original's place reads" "$STITCH" verify "$work/store/b2"

# --- a backup is never written inside another; prune never takes a nested one along -----------
expect_exit 13 "inside backup" -- "$STITCH" backup "$work/src" "$work/store/b0/nested"
check "nothing was made inside b0" test ! -e "$work/store/b0/nested"
mkdir -p "$work/linked" && ln -s "$work/store/b1" "$work/linked/to-b1"
expect_exit 13 "inside backup" -- "$STITCH" backup "$work/src" "$work/linked/to-b1/x"
"$STITCH" backup "$work/src" "$work/nstore/n0" --timestamp '2026-01-01 00:00:00' >/dev/null 2>&1
"$STITCH" backup "$work/src" "$work/nstore/n1" --timestamp '2026-01-02 00:00:00' >/dev/null 2>&1
"$STITCH" backup "$work/src" "$work/inner" >/dev/null 2>&1
mv "$work/inner" "$work/nstore/n0/inner"  # Nested by hand (as older versions allowed).
out=$("$STITCH" prune "$work/nstore" --keep-last 1 2>&1)
check "prune keeps a backup holding a nested one, saying so ($out)" \
  grep -q "^keep    n0 (holds another backup, $work/nstore/n0/inner" <<<"$out"
check "and the nested one still reads" "$STITCH" verify "$work/nstore/n0/inner"

# --- diff and log ------------------------------------------------------------------------------
check "diff reports the append" grep -q '^+ logs/app.log (+1000 bytes)$' <<<"$("$STITCH" diff "$work/store/b0" "$work/store/b1")"
check "diff --json" grep -q '"change":"appended","name":"logs/app.log"' <<<"$("$STITCH" diff "$work/store/b0" "$work/store/b1" --json)"
check "diff of identical backups is empty" test -z "$("$STITCH" diff "$work/store/b1" "$work/store/b2")"
log=$("$STITCH" log "$work/store")
check "log lists the three backups" test "$(grep -c '^b[012] ' <<<"$log")" = 3
check "log shows chain depth" grep -qE '^b2 +[0-9-]+ [0-9:]+ +3 ' <<<"$log"
check "log --json" grep -q '"depth":3' <<<"$("$STITCH" log "$work/store" --json)"

# --- names with tabs and newlines are escaped in text output and messages ---------------------------
mkdir -p "$work/odd"
printf 'a' > "$work/odd/tab$(printf '\t')here"
printf 'b' > "$work/odd/new$(printf '\nline')"
"$STITCH" backup "$work/odd" "$work/oddb" >/dev/null 2>&1
check "ls prints one line per name, escaped" test "$("$STITCH" ls "$work/oddb" | tr '\n' '|')" = 'new\nline|tab\there|'
err=$("$STITCH" cat "$work/oddb" "$(printf 'no\nsuch')" 2>&1 >/dev/null)
check "an error naming an odd name is one line" test "$(printf '%s' "$err" | wc -l)" = 0
check "and shows the name escaped" grep -qF 'no\nsuch' <<<"$err"
tab=$(printf '\t')
mkfifo "$work/odd/fifo${tab}x"
out=$("$STITCH" backup "$work/odd" "$work/odd${tab}b2" 2>&1 >/dev/null)
check "the summary names DEST escaped" grep -qF "backup $work/odd\tb2 (uuid" <<<"$out"
check "a warning names the source file escaped" grep -qF 'warning: skipped fifo\tx (' <<<"$out"
check "no raw tab in the summary and warnings" test "$(grep -c "$tab" <<<"$out")" = 0
rm "$work/odd/fifo${tab}x"
"$STITCH" backup "$work/odd" "$work/oddstore/a${tab}b" --timestamp '2026-01-01 00:00:00' >/dev/null 2>&1
"$STITCH" backup "$work/odd" "$work/oddstore/c$(printf '\nd')" --timestamp '2026-01-02 00:00:00' >/dev/null 2>&1
out=$("$STITCH" prune "$work/oddstore" --keep-last 1)
check "prune prints one line per backup" test "$(wc -l <<<"$out")" = 3
check "prune shows a removed name escaped" grep -qE '^remove  a\\tb \(' <<<"$out"
check "prune shows a kept name escaped" grep -qxF 'keep    c\nd (last)' <<<"$out"

# --- ls lists symlinks and folders stitchfs recorded (empty ones too) -----------------------------
mkdir -p "$work/lnk/empty" && echo x >"$work/lnk/f" && ln -s f "$work/lnk/to-f"
"$STITCH" backup "$work/lnk" "$work/lnkb" >/dev/null 2>&1
check "ls lists symlinks and empty folders" test "$("$STITCH" ls "$work/lnkb" | tr '\n' '|')" = 'empty/|f|to-f|'
check "ls -l shows a symlink's type and target" grep -qE '^symlink +1 +-  to-f -> f$' <<<"$("$STITCH" ls "$work/lnkb" -l)"
check "ls --json shows them too" grep -qF '{"name":"to-f","type":"symlink","target":"f"}' <<<"$("$STITCH" ls "$work/lnkb" --json)"
check "ls -R lists folders" grep -qx 'empty/' <<<"$("$STITCH" ls "$work/lnkb" -R)"
check "ls of a symlink names it" test "$("$STITCH" ls "$work/lnkb" to-f)" = to-f
check "ls of an empty folder lists nothing" test -z "$("$STITCH" ls "$work/lnkb" empty)"

# --- exit codes -------------------------------------------------------------------------------
expect_exit 13 "already exists" -- "$STITCH" backup "$work/src" "$work/store/b0"
expect_exit 2 "--checksum" -- "$STITCH" backup "$work/src" "$work/x" --checksum md5
expect_exit 10 "BACKUP_NOT_FOUND" -- "$STITCH" backup "$work/src" "$work/x" --base "$work/nothing"
expect_exit 2 "before 1970" -- "$STITCH" backup "$work/src" "$work/x" --timestamp '1600-01-01 00:00:00'
expect_exit 2 "not a date-time" -- "$STITCH" backup "$work/src" "$work/x" --timestamp '10000-01-01 00:00:00'
expect_exit 2 "not a date-time" -- "$STITCH" backup "$work/src" "$work/x" --timestamp '2026-02-30 00:00:00'
check "refused timestamps leave nothing" test ! -e "$work/x"
expect_exit 2 "--timestamp is given an empty value" -- "$STITCH" backup "$work/src" "$work/x" --timestamp ""
expect_exit 2 "--base is given twice" -- "$STITCH" backup "$work/src" "$work/x" --base "$work/store/b0" --base "$work/store/b1"
expect_exit 2 "--jobs is given twice" -- "$STITCH" backup "$work/src" "$work/x" --jobs 1 --jobs=2
expect_exit 2 "--backups-root is given twice" -- "$STITCH" ls "$work/store/b1" --backups-root /a --backups-root /b
check "repeatable options repeat" "$STITCH" ls "$work/store/b1" --disk a=/a --disk b=/b
check "refused options leave nothing" test ! -e "$work/x"
mkdir -p "$work/dest-real" && ln -s "$work/dest-real" "$work/dest-link"
expect_exit 2 "destination $work/dest-link is a symlink (to $work/dest-real)" -- "$STITCH" backup "$work/src" "$work/dest-link"
check "nothing is written through a DEST symlink" test -z "$(ls -A "$work/dest-real")"
head -c 50000000 /dev/urandom > "$work/src/big.bin"
( while [ ! -e "$work/stop" ]; do echo more >> "$work/src/big.bin"; done ) &
appender=$!
expect_exit 24 "EXPECTED_END_OF_FILE" -- "$STITCH" backup "$work/src" "$work/grow" --immutable '*.bin'
touch "$work/stop"
wait "$appender"
check "failed backup leaves nothing" test ! -e "$work/grow"
rm -f "$work/src/big.bin" "$work/stop"

# --- killed mid-way ---------------------------------------------------------------------------
head -c 300000000 /dev/urandom > "$work/src/huge.bin"
# Killed as soon as its staging folder exists; on a loaded machine the backup can still win the
# race, so it is tried again (a finished backup is removed first) rather than failing the test.
for _ in 1 2 3 4 5; do
  "$STITCH" backup "$work/src" "$work/killed" --jobs 1 >/dev/null &
  pid=$!
  for _ in $(seq 2000); do [ -e "$work/killed/.stitch-tmp" ] && break; sleep 0.005; done
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  [ -e "$work/killed/.lock" ] && break
  rm -rf "$work/killed"
done
check "killed backup left a lock" test -e "$work/killed/.lock"
expect_exit 10 ".lock" -- "$STITCH" info "$work/killed"
out=$("$STITCH" backup "$work/src" "$work/killed" 2>&1)
check "the next run takes over and succeeds" "$STITCH" verify "$work/killed"
check "the next run says it took over" grep -q "took over" <<<"$out"
rm -f "$work/src/huge.bin"

# --- destination full (ENOSPC) ---------------------------------------------------------------
mkdir -p "$work/small"
if mount -t tmpfs -o size=1m tmpfs "$work/small" 2>/dev/null; then
  head -c 3000000 /dev/urandom > "$work/src/three-mb.bin"
  expect_exit 1 "No space left on device" -- "$STITCH" backup "$work/src" "$work/small/b"
  check "ENOSPC leaves nothing that opens as a backup" test ! -e "$work/small/b/.backup"
  check "ENOSPC cleans up its partial data" test -z "$(ls -A "$work/small")"
  umount "$work/small"
  rm -f "$work/src/three-mb.bin"
else
  echo "SKIP: cannot mount a tmpfs for the ENOSPC test"
fi

# --- incremental on a ClickHouse-format base --------------------------------------------------
"$MAKE_FIXTURE" chain "$work/ch" || exit 1
cp -r "$work/ch/expected/b2" "$work/chsrc"
printf 'appended by stitch\n' >> "$work/chsrc/data/db/log/data.bin"
out=$("$STITCH" backup "$work/chsrc" "$work/ch/b3" --base "$work/ch/b2" --json)
check "on a ClickHouse base only the new tail is stored" grep -q '"bytes_stored":19,' <<<"$out"
check "ClickHouse checksums kept (no stitchfs_checksum tag)" bash -c "! grep -q stitchfs_checksum '$work/ch/b3/.backup'"
check "4-deep mixed chain verifies" "$STITCH" verify "$work/ch/b3"
rm -rf "$work/r3"
"$STITCH" restore "$work/ch/b3" "$work/r3"
check "4-deep mixed chain restores" diff -r "$work/r3" "$work/chsrc"

# --- flatten: one point in time without its bases -------------------------------------------------
check "flatten the 4-deep chain" "$STITCH" flatten "$work/ch/b3" "$work/flat"
mv "$work/ch" "$work/ch-gone"
check "flattened backup opens without any base" "$STITCH" verify "$work/flat"
check "flattened backup is a full backup" grep -q "chain (1 backup)" <<<"$("$STITCH" info "$work/flat")"
rm -rf "$work/rf"
"$STITCH" restore "$work/flat" "$work/rf"
check "flattened backup restores byte-exact" diff -r "$work/rf" "$work/chsrc"
check "flattened backup keeps the checksums" test "$(grep -o '<checksum>[^<]*' "$work/flat/.backup" | sort)" = "$(grep -o '<checksum>[^<]*' "$work/ch-gone/b3/.backup" | sort)"
expect_exit 13 "already exists" -- "$STITCH" flatten "$work/store/b1" "$work/flat"

# --- prune: never breaks a kept backup, even when interrupted ---------------------------------------
make_days() {  # make_days STORE: 10 daily backups of a growing file, expected trees beside
  local store=$1 prev=""
  rm -rf "$work/psrc" && mkdir -p "$work/psrc"
  head -c 20000000 /dev/urandom > "$work/psrc/base.bin"
  for d in $(seq 1 10); do
    head -c 300000 /dev/urandom >> "$work/psrc/base.bin"
    local name; name=$(printf 'day%02d' "$d")
    "$STITCH" backup "$work/psrc" "$store/$name" ${prev:+--base "$store/$prev"} \
      --timestamp "2026-03-$(printf %02d "$d") 03:00:00" >/dev/null 2>&1
    cp -a "$work/psrc" "$store.expected-$name"
    prev=$name
  done
}
kept_ok() {  # kept_ok STORE DAY...: each day still opens and restores byte-exact
  local store=$1; shift
  for name in "$@"; do
    rm -rf "$work/pr"
    "$STITCH" restore "$store/$name" "$work/pr" >/dev/null 2>&1 || return 1
    diff -r "$work/pr" "$store.expected-$name" >/dev/null || return 1
  done
}
make_days "$work/p1"
out=$("$STITCH" prune "$work/p1" --keep-last 3 --dry-run)
check "dry run plans the flatten" grep -q "^flatten day08 (its base day07 goes)" <<<"$out"
check "dry run removes nothing" test "$(ls "$work/p1" | wc -l)" = 10
out=$("$STITCH" prune "$work/p1" --keep-last 3)
check "prune keeps the last 3" test "$(ls "$work/p1" | tr '\n' ' ')" = "day08 day09 day10 "
check "prune reports bytes freed" grep -q "freed" <<<"$out"
# What prune says it freed is what `du` counted of what went (the removed backups and the old
# copy of the flattened one), and freed minus written is what the store shrank by.
make_days "$work/p7"
before=$(du -sB1 "$work/p7" | cut -f1)
gone=$(du -sB1 "$work"/p7/day0[1-9] | awk '{s += $1} END {print s}')
out=$("$STITCH" prune "$work/p7" --keep-last 2 --json)
after=$(du -sB1 "$work/p7" | cut -f1)
total() { grep -o "\"$1\":[0-9]*" | cut -d: -f2 | awk '{s += $1} END {print s + 0}'; }
freed=$(total freed <<<"$out")
written=$(total written <<<"$out")
check "prune's freed figure is du's of what went ($freed, du $gone)" test "$freed" = "$gone"
check "freed - written is what the store shrank by ($((freed - written)), du $((before - after)))" \
  test $((before - after)) = $((freed - written))
check "every kept day restores byte-exact" kept_ok "$work/p1" day08 day09 day10
check "the oldest kept day is now full" grep -q "chain (1 backup)" <<<"$("$STITCH" info "$work/p1/day08")"
# A base whose bytes went bad is never copied as if whole: flatten and prune read each copy back,
# fail with BACKUP_DAMAGED naming the backup that holds the bad bytes, and prune removes nothing.
make_days "$work/p8"
printf '\0\0\0\0\0\0\0\0' | dd of="$work/p8/day01/base.bin" bs=1 seek=1000000 conv=notrunc status=none
"$STITCH" flatten "$work/p8/day09" "$work/p8-flat" 2>"$work/p8.err"
rc=$?
check "a flatten of damaged bytes exits 20 (got $rc)" test "$rc" = 20
check "naming the backups that may hold them" grep -qF "or $work/p8/day01, bytes [0, " "$work/p8.err"
check "and blames the backup's bytes, not the copy's" bash -c "! grep -q 'reads back' '$work/p8.err'"
check "a flatten of damaged bytes leaves no backup" test ! -e "$work/p8-flat/.backup"
expect_exit 20 "or $work/p8/day01, bytes [0, " -- "$STITCH" prune "$work/p8" --keep-last 3
check "a prune that met damaged bytes removed nothing" test "$(ls "$work/p8" | wc -l)" = 10
rm -rf "$work/p8"*
make_days "$work/p2"
"$STITCH" prune "$work/p2" --keep-daily 2 --keep-monthly 1 >/dev/null
check "keep-daily/monthly keep the newest days" test "$(ls "$work/p2" | tr '\n' ' ')" = "day09 day10 "
expect_exit 2 "policy" -- "$STITCH" prune "$work/p2"
# One prune of a store at a time (a second would take the first one's work for leftovers).
flock "$work/p2" sleep 30 &
holder=$!
for _ in $(seq 100); do flock -n "$work/p2" true 2>/dev/null || break; sleep 0.05; done
expect_exit 1 "another stitch prune is running" -- "$STITCH" prune "$work/p2" --keep-last 1
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
check "a refused prune changed nothing" "$STITCH" verify "$(ls -d "$work"/p2/* | head -1)"
for delay in 0.05 0.2 0.5; do
  rm -rf "$work/p3" "$work"/p3.expected-*
  make_days "$work/p3"
  "$STITCH" prune "$work/p3" --keep-last 2 >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  check "prune killed after ${delay}s leaves every kept backup readable" kept_ok "$work/p3" day09 day10
  "$STITCH" prune "$work/p3" --keep-last 2 >/dev/null 2>&1
  check "prune after the kill finishes the job (${delay}s)" test "$(ls -A "$work/p3" | tr '\n' ' ')" = "day09 day10 "
done

# --- prune plans by identity, whatever the spelling of STORE, and proves before it deletes ---------
make_days "$work/p4"
(cd "$work" && "$STITCH" prune p4 --keep-last 2 --keep-daily 4 >/dev/null 2>&1)
check "relative STORE: prune keeps what the policy says" test "$(ls "$work/p4" | tr '\n' ' ')" = "day07 day08 day09 day10 "
check "relative STORE: every kept day restores byte-exact" kept_ok "$work/p4" day07 day08 day09 day10
ln -s "$work/p4" "$work/p4-link"
(cd "$work/p4" && "$STITCH" prune ../p4-link/ --keep-last 1 >/dev/null 2>&1)
check "STORE through a symlink: the kept day restores byte-exact" kept_ok "$work/p4" day10
check "STORE through a symlink: the rest is gone" test "$(ls "$work/p4" | tr '\n' ' ')" = "day10 "
make_days "$work/p5"
printf '<config>broken' > "$work/p5/day10/.backup"
expect_exit 20 "prune removes nothing" -- "$STITCH" prune "$work/p5" --keep-last 2
check "a kept backup that does not open: prune removed nothing" test "$(ls "$work/p5" | wc -l)" = 10
check "a kept backup that does not open: the others still restore" kept_ok "$work/p5" day01 day05 day09

# --- a FIFO named .backup never hangs anything ------------------------------------------------------
mkdir -p "$work/p6/fifo" && mkfifo "$work/p6/fifo/.backup"
ln -s "$work/p4/day10/.backup" "$work/p6/day10-link-manifest" 2>/dev/null
mkdir -p "$work/p6/symlinked" && ln -s "$work/p4/day10/.backup" "$work/p6/symlinked/.backup"
expect_exit 10 "not a regular file" -- timeout 10 "$STITCH" info "$work/p6/fifo"
expect_exit 10 "symlink" -- timeout 10 "$STITCH" info "$work/p6/symlinked"
check "log of a store with a FIFO .backup ends and lists nothing" test -z "$(timeout 10 "$STITCH" log "$work/p6" | tail -n +2)"
expect_exit 2 "policy" -- timeout 10 "$STITCH" prune "$work/p6"
check "prune of a store with a FIFO .backup ends" timeout 10 "$STITCH" prune "$work/p6" --keep-last 1
expect_exit 10 "not a regular file" -- timeout 10 "$STITCH" backup "$work/src" "$work/p6/x" --base "$work/p6/fifo"

# --- a source whose names are those of the backup folder's own files ------------------------------
R=$work/reserved
mkdir -p "$R/src/.stitchfs" "$R/src/.stitch-tmp"
for n in .backup .lock ..backup.tmp-1 .stitchfs/index .stitchfs/data .stitch-tmp/x; do echo "$n" > "$R/src/$n"; done
echo .backup > "$R/src/same-as-dot-backup"
check "a source file named .backup: backup" "$STITCH" backup "$R/src" "$R/b1"
echo more >> "$R/src/.backup"
check "and an incremental on it" "$STITCH" backup "$R/src" "$R/b2" --base "$R/b1"
check "verify finds every file" "$STITCH" verify "$R/b2"
check "restore gives the source back" "$STITCH" restore "$R/b2" "$R/r"
check "byte for byte" diff -r "$R/src" "$R/r"
check "flatten keeps them apart too" "$STITCH" flatten "$R/b2" "$R/f"
check "and the flattened copy verifies" "$STITCH" verify "$R/f"
check "their data files live under .stitchfs/data" test -f "$R/b1/.stitchfs/data/.lock"

finish
