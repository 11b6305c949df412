#!/usr/bin/env bash
# Real FUSE mounts of real backups, checked with ordinary tools.
# Usage: mount_test.sh STITCH STITCHFS MAKE_FIXTURE PREAD_CHECK MOUNT_HELPER
# Exits 77 (skipped) where FUSE cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
STITCHFS=$2
MAKE_FIXTURE=$3
PREAD_CHECK=$4
HELPER=$5
export STITCH_NO_PROGRESS=1
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  echo "SKIP: no /dev/fuse or fusermount3"
  exit 77
fi
work=$(mktemp -d)
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do
    mountpoint -q "$m" 2>/dev/null && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
  [ -L /sbin/mount.fuse.stitchfs ] && [ "$(readlink /sbin/mount.fuse.stitchfs)" = "$work/helper" ] &&
    rm -f /sbin/mount.fuse.stitchfs
  rm -rf "$work"
}
trap cleanup EXIT
# mount BACKUP DIR [stitchfs args]: the command returns once the folder is mounted.
mnt() {
  local backup=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  mounts+=("$dir")
  "$STITCHFS" "$backup" "$dir" "$@"
}
umnt() { fusermount3 -u "$1"; }
# wait_for CMD...: until CMD succeeds (30 s at most: changes show within about a second, longer
# on a loaded machine).
wait_for() { for _ in $(seq 600); do "$@" && return 0; sleep 0.05; done; return 1; }
# eio CMD...: CMD fails with "Input/output error".
eio() { grep -q "Input/output error" <<<"$("$@" 2>&1 >/dev/null)"; }
# A listing of a tree with metadata, comparable between a source and a copy.
# (Folder sizes are left out: they depend on the filesystem.)
listing() { (cd "$1" && find . -mindepth 1 \( -type d -printf '%P %y %m %U %G %T@\n' \) -o -printf '%P %y %m %U %G %s %l %T@\n' | sort); }
listing_no_dir_times() { (cd "$1" && find . -mindepth 1 \( -type d -printf '%P %y %m %U %G\n' \) -o -printf '%P %y %m %U %G %s %l %T@\n' | sort); }
# rsync sets folder and symlink times in a late pass that sometimes loses to its own receiver
# (seen with rsync 3.2.7 on local copies); the mount's own times are checked by `listing`.
listing_files_times() { (cd "$1" && find . -mindepth 1 \( -type d -o -type l \) -printf '%P %y %m %U %G %l\n' -o -printf '%P %y %m %U %G %s %T@\n' | sort); }

# same_listing LISTER A B: equal listings, or the difference printed.
same_listing() { diff <("$1" "$2") <("$1" "$3") >&2; }

# --- a tree over three generations ------------------------------------------------------------
S=$work/src
mkdir -p "$S/logs" "$S/db/part_1" "$S/empty/deeper"
head -c 3000000 /dev/urandom > "$S/logs/big.log"
printf 'CREATE TABLE t (x UInt8) ENGINE = Log;\n' > "$S/db/t.sql"
head -c 70000 /dev/urandom > "$S/db/part_1/data.bin"
cp "$S/db/part_1/data.bin" "$S/db/part_1/copy.bin"
ln -s ../logs/big.log "$S/db/link"
ln "$S/db/t.sql" "$S/hard.sql"
chmod 600 "$S/db/part_1/copy.bin"
chown 1234:5678 "$S/db/part_1/data.bin"
touch -d '2021-05-06 07:08:09.123456789' "$S/empty/deeper"
"$STITCH" backup "$S" "$work/store/g0" >/dev/null 2>&1 || bad "backup g0"
head -c 500000 /dev/urandom >> "$S/logs/big.log"
printf 'ALTER TABLE t ADD COLUMN y String;\n' >> "$S/db/t.sql"
"$STITCH" backup "$S" "$work/store/g1" --base "$work/store/g0" >/dev/null 2>&1 || bad "backup g1"
head -c 123457 /dev/urandom >> "$S/logs/big.log"
mv "$S/db/part_1" "$S/db/part_2"
"$STITCH" backup "$S" "$work/store/g2" --base "$work/store/g1" >/dev/null 2>&1 || bad "backup g2"

M=$work/m
mnt "$work/store/g2" "$M"
check "mounted" mountpoint -q "$M"
check "diff -r against the source" diff -r --no-dereference "$S" "$M"
check "cmp of a file stitched from three backups" cmp "$S/logs/big.log" "$M/logs/big.log"
check "metadata as stored (modes, owners, sizes, times, symlinks)" same_listing listing "$S" "$M"
check "hard links share an inode" test "$(stat -c %i "$M/db/t.sql")" = "$(stat -c %i "$M/hard.sql")"
check "hard links count" test "$(stat -c %h "$M/db/t.sql")" = 2
check "symlink target" test "$(readlink "$M/db/link")" = "../logs/big.log"
cp -a "$M" "$work/cp"
check "cp -a out of the mount keeps metadata" same_listing listing_no_dir_times "$S" "$work/cp"
rsync -a "$M/" "$work/rsync/"
check "rsync -a out of the mount keeps metadata" same_listing listing_files_times "$S" "$work/rsync"
check "tar of the mount" test "$(tar -C "$M" -cf - . | tar -tf - | wc -l)" = "$(tar -C "$S" -cf - . | tar -tf - | wc -l)"
check "find counts" test "$(find "$M" | wc -l)" = "$(find "$S" | wc -l)"
check "du counts" test "$(du -s --apparent-size "$M" | cut -f1)" -gt 3000
check "statfs answers" stat -f "$M"
src=$(getfattr --only-values -n user.stitchfs.source "$M/logs/big.log")
check "xattr source names all three backups" grep -q '"level":2.*"level":1.*"level":0' <<<"$src"
check "xattr base_size" test "$(getfattr --only-values -n user.stitchfs.base_size "$M/logs/big.log")" = 3500000
check "xattr checksum" test "$(getfattr --only-values -n user.stitchfs.checksum "$M/logs/big.log" | wc -c)" = 32
check "root xattrs" grep -q '"num_files":' <<<"$(getfattr --only-values -n user.stitchfs.stats "$M")"
check ".appended is not listed" bash -c "! ls -a '$M' | grep -q appended"
check ".appended/<file> holds only what g2 added" test "$(stat -c %s "$M/.appended/logs/big.log")" = 123457
check ".appended bytes are the file's tail" cmp "$M/.appended/logs/big.log" <(tail -c 123457 "$S/logs/big.log")
check ".appended of an unchanged file is empty" test "$(stat -c %s "$M/.appended/db/part_2/data.bin")" = 0
check "8 threads of random preads, then mmap" "$PREAD_CHECK" "$M/logs/big.log" "$S/logs/big.log" 8 300

# --- the other ways of serving requests ----------------------------------------------------
mnt "$work/store/g2" "$work/m0" -o spin_us=0
check "libfuse's multithreaded loop (spin_us=0): diff -r" diff -r --no-dereference "$S" "$work/m0"
check "libfuse's loop: 8 threads of random preads" "$PREAD_CHECK" "$work/m0/logs/big.log" "$S/logs/big.log" 8 100
umnt "$work/m0"
mnt "$work/store/g2" "$work/m1" -s
check "single-threaded (-s): diff -r" diff -r --no-dereference "$S" "$work/m1"
check "single-threaded: 8 threads of random preads" "$PREAD_CHECK" "$work/m1/logs/big.log" "$S/logs/big.log" 8 100
umnt "$work/m1"

mnt "$work/store/g2" "$work/m2" -o noxattr
check "noxattr: diff -r" diff -r --no-dereference "$S" "$work/m2"
check "noxattr: ls -lR lists everything" test "$(ls -lR "$work/m2" | wc -l)" = "$(ls -lR "$M" | wc -l)"
out=$(getfattr -n user.stitchfs.checksum "$work/m2/logs/big.log" 2>&1)
check "noxattr: extended attributes are not supported" grep -q "not supported" <<<"$out"
umnt "$work/m2"

# --- listings by name first (files listed without attributes), then everything stat'ed --------
mnt "$work/store/g2" "$work/m3"
names() { (cd "$1" && find . -mindepth 1 -type "$2" | sort); }
check "a walk by name finds every file" diff <(names "$S" f) <(names "$work/m3" f)
check "... every symlink" diff <(names "$S" l) <(names "$work/m3" l)
check "... every folder" diff <(names "$S" d) <(names "$work/m3" d)
check "listed inode numbers are the stat'ed ones" \
  test "$(ls -i1 "$work/m3/db" | awk '{print $1, $2}' | sort)" = "$(cd "$work/m3/db" && stat -c '%i %n' * | sort)"
check "after the walk, metadata as stored" same_listing listing "$S" "$work/m3"
check "after the walk, ls -lR as on a fresh mount" diff <(cd "$work/m3" && ls -lR) <(cd "$M" && ls -lR)
check "after the walk, diff -r" diff -r --no-dereference "$S" "$work/m3"
umnt "$work/m3"

# --- read-only: every kind of write is EROFS ---------------------------------------------------
erofs() { local out; out=$("$@" 2>&1); case "$out" in *"Read-only file system"*) ok ;; *) bad "not EROFS: $* ($out)" ;; esac; }
erofs touch "$M/new"
erofs sh -c "echo x > '$M/db/t.sql'"
erofs sh -c "echo x >> '$M/db/t.sql'"
erofs mkdir "$M/dir"
erofs rm "$M/db/t.sql"
erofs mv "$M/db/t.sql" "$M/db/u.sql"
erofs chmod 777 "$M/db/t.sql"
erofs ln -s x "$M/sl"
erofs ln "$M/db/t.sql" "$M/hl"
erofs setfattr -n user.x -v y "$M/db/t.sql"
erofs truncate -s 0 "$M/db/t.sql"
umnt "$M"
check "unmounted" bash -c "! mountpoint -q '$M'"

# --- a ClickHouse-format chain (no POSIX metadata) --------------------------------------------
"$MAKE_FIXTURE" chain "$work/ch" || exit 1
mnt "$work/ch/b2" "$work/chm"
check "ClickHouse chain equals its source" diff -r "$work/chm" "$work/ch/expected/b2"
check "ClickHouse files show 0444" test "$(stat -c %a "$work/chm/metadata/db/t.sql")" = 444
check "ClickHouse folders show 0555" test "$(stat -c %a "$work/chm/metadata")" = 555
check "ClickHouse mtime is the backup time" test "$(date -d @"$(stat -c %Y "$work/chm/metadata/db/t.sql")" '+%F %T')" = "2026-10-03 03:00:00"
umnt "$work/chm"
mnt "$work/ch/b2" "$work/chm2" -o uid=4321,gid=8765,umask=027
check "uid= gid= umask= overrides" test "$(stat -c '%u %g %a' "$work/chm2/metadata/db/t.sql")" = "4321 8765 440"
umnt "$work/chm2"

# --- mount-time errors and exit codes (stitchfs(1) EXIT STATUS) --------------------------------
mkdir -p "$work/e"
expect_exit 2 "unknown mount option" -- "$STITCHFS" "$work/store/g2" "$work/e" -o frobnicate
expect_exit 2 "read-only" -- "$STITCHFS" "$work/store/g2" "$work/e" -o rw
expect_exit 10 "BACKUP_NOT_FOUND" -- "$STITCHFS" "$work/nothing" "$work/e"
expect_exit 30 "not a folder" -- "$STITCHFS" "$work/store/g2" "$work/nothing"
cp -r "$work/ch" "$work/bad"
sed -i 's|<version>1</version>|<version>9</version>|' "$work/bad/b0/.backup"
expect_exit 11 "Version 9" -- "$STITCHFS" "$work/bad/b2" "$work/e"
cp -r "$work/ch" "$work/dmg"
printf '<config>' > "$work/dmg/b1/.backup"
expect_exit 20 "BACKUP_DAMAGED" -- "$STITCHFS" "$work/dmg/b2" "$work/e"
cp -r "$work/ch" "$work/nob"
rm -rf "$work/nob/b1"
expect_exit 21 "NO_BASE_BACKUP" -- "$STITCHFS" "$work/nob/b2" "$work/e"
mnt "$work/nob/b2" "$work/baseopt" -o base="$work/ch/b1"
check "-o base= resolves a moved base" cmp "$work/baseopt/data/db/log/data.bin" "$work/ch/expected/b2/data/db/log/data.bin"
umnt "$work/baseopt"
cp -r "$work/ch" "$work/wrong"
sed -i 's|<base_backup_uuid>[^<]*<|<base_backup_uuid>00000000-0000-4000-8000-000000000000<|' "$work/wrong/b2/.backup"
expect_exit 22 "WRONG_BASE_BACKUP" -- "$STITCHFS" "$work/wrong/b2" "$work/e"
cp -r "$work/ch" "$work/insecure"
sed -i 's|<name>store/copy.txt</name>|<name>../escape</name>|' "$work/insecure/b2/.backup"
expect_exit 23 "INSECURE_PATH" -- "$STITCHFS" "$work/insecure/b2" "$work/e"
check "nothing left mounted after errors" bash -c "! mountpoint -q '$work/e'"

# --- damage after mount: EIO for that file only, never wrong bytes, daemon keeps serving -------
cp -r "$work/store" "$work/hurt"
mnt "$work/hurt/g2" "$work/hm"
truncate -s 1000 "$work/hurt/g0/logs/big.log"
out=$(cat "$work/hm/logs/big.log" 2>&1 >/dev/null)
check "truncated base data file gives EIO" grep -q "Input/output error" <<<"$out"
check "other files still read" cmp "$work/hm/db/t.sql" "$S/db/t.sql"
check "daemon still serving" mountpoint -q "$work/hm"
umnt "$work/hm"

# --- one byte flipped in a base's data file (same length: only checksums tell) ---------------
cp -a "$S" "$work/flipsrc"
"$STITCH" backup "$work/flipsrc" "$work/flip/g0" >/dev/null 2>&1 || bad "backup flip/g0"
echo "more" >>"$work/flipsrc/logs/big.log"
"$STITCH" backup "$work/flipsrc" "$work/flip/g1" --base "$work/flip/g0" >/dev/null 2>&1 ||
  bad "backup flip/g1"
# Its byte 1000 complemented (writing a fixed 0xff left random bytes unchanged 1 time in 256).
byte=$(od -An -tu1 -j1000 -N1 "$work/flip/g0/logs/big.log" | tr -d ' ')
printf "\\x$(printf %02x $((byte ^ 255)))" |
  dd of="$work/flip/g0/logs/big.log" bs=1 seek=1000 conv=notrunc 2>/dev/null
mnt "$work/flip/g1" "$work/fm"
out=$(cat "$work/fm/logs/big.log" 2>&1 >/dev/null)
check "a whole read of a file with a flipped byte ends in EIO" grep -q "Input/output error" <<<"$out"
out=$(cat "$work/fm/logs/big.log" 2>&1 >/dev/null)
check "and so does the next (most of it from the page cache)" grep -q "Input/output error" <<<"$out"
check "other files read" cmp "$work/fm/db/t.sql" "$S/db/t.sql"
# A tar walk (read ahead of the walker, -o walk_ahead): the damaged file fails, the rest is exact.
# (GNU tar reports an error after a partial read as the file having shrunk, and pads it.)
mkdir "$work/fm-tar"
tar -cf - -C "$work/fm" . 2>"$work/tar.err" | tar -xf - -C "$work/fm-tar" 2>/dev/null
check "a tar walk of the mount fails on the damaged file" \
  grep -q "big.log: \(File shrank\|.*Input/output error\)" "$work/tar.err"
check "and the rest of the walk is the backup's bytes" diff -r --no-dereference -x big.log "$work/fm-tar" "$work/flipsrc"
check "a partial read is not checked (nothing to compare with)" \
  bash -c "dd if='$work/fm/logs/big.log' bs=4096 skip=100 count=1 status=none | wc -c | grep -qx 4096"
umnt "$work/fm"
# `tail` first: the end's pages stay in the kernel's cache, and a whole read after it never
# reads them through the mount; it fails all the same (its last read is checked as the end).
mnt "$work/flip/g1" "$work/fm"
check "tail of the damaged file alone is not checked" \
  bash -c "tail -c 100 '$work/fm/logs/big.log' | wc -c | grep -qx 100"
out=$(cat "$work/fm/logs/big.log" 2>&1 >/dev/null)
check "a whole read after tail ends in EIO" grep -q "Input/output error" <<<"$out"
umnt "$work/fm"
mnt "$work/flip/g1" "$work/fm" -o noverify
check "-o noverify: the same read succeeds (unchecked)" bash -c "cat '$work/fm/logs/big.log' >/dev/null"
umnt "$work/fm"
expect_exit 20 "the bad bytes are in backup $work/flip/g0" -- "$STITCH" cat "$work/flip/g1" logs/big.log
expect_exit 20 "checksum mismatch" -- "$STITCH" restore "$work/flip/g1" "$work/flip-out"
check "restore left no unverified file under its name" test ! -e "$work/flip-out/logs/big.log"

# --- SIGTERM unmounts cleanly ------------------------------------------------------------------
mkdir -p "$work/fg"
mounts+=("$work/fg")
exec 3< <("$STITCHFS" "$work/store/g2" "$work/fg" -f 2>&1; echo "exit=$?")
read -r line <&3
check "foreground says when it serves" grep -q "serving" <<<"$line"
check "foreground mount is ready" test -f "$work/fg/db/t.sql"
pkill -TERM -f "stitchfs $work/store/g2 $work/fg" || true
read -r line <&3
check "SIGTERM exits 0" test "$line" = "exit=0"
check "SIGTERM unmounted" bash -c "! mountpoint -q '$work/fg'"

# --- a mount whose daemon died (kill -9): the next mount there says it is stale and how to clear it
mkdir -p "$work/stale"
mounts+=("$work/stale")
"$STITCHFS" "$work/store/g2" "$work/stale" -f 2>/dev/null &
stale_pid=$!
wait_for test -f "$work/stale/db/t.sql"
kill -9 "$stale_pid"
wait "$stale_pid" 2>/dev/null
expect_exit 30 "is a stale mount" -- "$STITCHFS" "$work/store/g2" "$work/stale"
expect_exit 30 "fusermount3 -u $work/stale" -- "$STITCHFS" "$work/store/g2" "$work/stale"
check "the command it names clears it" fusermount3 -u "$work/stale"
mnt "$work/store/g2" "$work/stale"
check "and a mount there works again" cmp "$work/stale/db/t.sql" "$S/db/t.sql"
umnt "$work/stale"

# --- a backup of a store mount whose base locator does not parse: EIO, and the reason logged ----
mkdir -p "$work/locstore" "$work/loc"
cp -r "$work/store/g0" "$work/locstore/good"
cp -r "$work/store/g1" "$work/locstore/bad"
sed -i 's|<base_backup>[^<]*</base_backup>|<base_backup>File(\&apos;g0</base_backup>|' "$work/locstore/bad/.backup"
mounts+=("$work/loc")
"$STITCHFS" "$work/locstore" "$work/loc" -f 2>"$work/loc.log" &
loc_pid=$!
wait_for test -d "$work/loc/good/db"
check "a bad base locator is EIO" eio ls "$work/loc/bad"
check "and the mount logs why (the locator not shown: it may hold a secret)" \
  grep -q "bad: cannot parse base backup locator File(...)" "$work/loc.log"
check "the other backups read" cmp "$work/loc/good/db/t.sql" "$work/store/g0/db/t.sql"
kill -TERM "$loc_pid"
wait "$loc_pid" 2>/dev/null

# --- mount helper: fstab-style call and mount -t fuse.stitchfs --------------------------------
mkdir -p "$work/h1" "$work/h2"
mounts+=("$work/h1" "$work/h2")
STITCHFS="$STITCHFS" "$HELPER" "$work/store/g2" "$work/h1" -o rw,nofail,noauto,_netdev,user,users,x-systemd.automount,defaults,allow_other
check "helper strips fstab-only options and mounts" cmp "$work/h1/db/t.sql" "$S/db/t.sql"
check "allow_other implies default_permissions" grep -q "$work/h1 .*default_permissions" /proc/self/mountinfo
umnt "$work/h1"
if [ ! -e /sbin/mount.fuse.stitchfs ] && [ -w /sbin ]; then
  printf '#!/bin/sh\nSTITCHFS=%s exec %s "$@"\n' "$STITCHFS" "$HELPER" > "$work/helper"
  chmod +x "$work/helper"
  ln -s "$work/helper" /sbin/mount.fuse.stitchfs
  mount -t fuse.stitchfs "$work/store/g2" "$work/h2" -o ro,nofail
  check "mount -t fuse.stitchfs" cmp "$work/h2/db/t.sql" "$S/db/t.sql"
  umount "$work/h2"
fi

# --- a whole store: every backup, latest, at/, by-uuid/, changes without a remount -------------
ST=$work/store
mnt "$ST" "$work/sm"
check "store lists every backup" test "$(ls "$work/sm" | tr '\n' ' ')" = "at by-uuid g0 g1 g2 latest "
check "latest is the newest" test "$(link_name "$work/sm/latest")" = g2
check "latest names the backup's own folder (ls -l: latest -> g2)" test "$(readlink "$work/sm/latest")" = g2
check "at/ links name the folder too" test "$(readlink "$work/sm/at/2099")" = ../g2
check "a day's folder equals its source" diff -r --no-dereference "$work/sm/g2" "$S"
g0time=$("$STITCH" info "$ST/g0" --json | grep -o '"timestamp":"[^"]*"' | head -1 | cut -d'"' -f4 | tr ' ' 'T')
check "at/<exact time> resolves" test -n "$(readlink "$work/sm/at/$g0time")"
check "at/<year 2099> is the newest" test "$(link_name "$work/sm/at/2099")" = g2
check "at/<before any backup> does not exist" test ! -e "$work/sm/at/1999-01-01"
uuid1=$("$STITCH" info "$ST/g1" --json | grep -o '"uuid":"[^"]*"' | head -1 | cut -d'"' -f4)
check "by-uuid resolves" test "$(link_name "$work/sm/by-uuid/$uuid1")" = g1
check "files read through a store path" cmp "$work/sm/latest/logs/big.log" "$S/logs/big.log"
check "find of the store after reading through a link" find "$work/sm" -type f -name big.log
head -c 1000 /dev/urandom >> "$S/logs/big.log"
"$STITCH" backup "$S" "$ST/g3" --base "$ST/g2" >/dev/null 2>&1
mkdir -p "$ST/unfinished" && echo x > "$ST/unfinished/.lock"
# wait_output WANT CMD...: until CMD (run again each time) prints exactly WANT.
wait_output() {
  local want=$1
  shift
  for _ in $(seq 600); do [ "$("$@" 2>/dev/null)" = "$want" ] && return 0; sleep 0.05; done
  return 1
}
listing_line() { ls "$1" | tr '\n' ' '; }
check "a new backup appears without a remount" wait_for test -d "$work/sm/g3/logs"
check "latest moves to it" wait_output g3 link_name "$work/sm/latest"
check "an unfinished backup never appears" test ! -e "$work/sm/unfinished"
cp -r "$ST/g0" "$work/g0-damaged"
printf '<config>' > "$work/g0-damaged/.backup"
mv "$work/g0-damaged" "$ST/broken"
out=$(wait_for test -e "$work/sm/broken"; ls "$work/sm/broken" 2>&1)
check "a damaged backup shows as unreadable (EIO)" grep -q "Input/output error" <<<"$out"
check "the others still read" cmp "$work/sm/g3/logs/big.log" "$S/logs/big.log"
rm -rf "$ST/broken"
check "a removed backup disappears" wait_for test ! -e "$work/sm/broken"
check "without share_inodes every backup has its own inodes" test "$(stat -c %i "$work/sm/g0/db/t.sql")" != "$(stat -c %i "$work/sm/g1/db/t.sql")"

# --- the store changes under a live mount: hostile folders, prune, a backup replaced in place ---
mkdir -p "$ST/fifo" && mkfifo "$ST/fifo/.backup"
mkdir -p "$ST/linked" && ln -s "$ST/g1/.backup" "$ST/linked/.backup"
cp -r "$ST/g0" "$ST/slashuuid"
sed -i 's|<uuid>[^<]*</uuid>|<uuid>aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeee/eee</uuid>|' "$ST/slashuuid/.backup"
cp -r "$ST/g0" "$ST/dotdot"
sed -i 's|<timestamp>[^<]*</timestamp>|<timestamp>..</timestamp>|' "$ST/dotdot/.backup"
check "a FIFO, a symlinked .backup and hostile headers never hang the mount" wait_for test -e "$work/sm/slashuuid"
check "a FIFO or symlink named .backup is not a backup" bash -c "! ls '$work/sm' | grep -qx 'fifo\|linked'"
check "at/ lists with hostile headers around" timeout 10 ls "$work/sm/at" >/dev/null
check "by-uuid/ lists with hostile headers around" timeout 10 ls "$work/sm/by-uuid" >/dev/null
check "at/ has no .. entry of a backup" test "$(ls -a "$work/sm/at" | grep -cx '\.\.')" = 1
check "a hostile header is EIO, not a listing" bash -c "! timeout 10 ls '$work/sm/slashuuid' 2>/dev/null"
check "the others still read beside them" timeout 10 cmp "$work/sm/g3/logs/big.log" "$S/logs/big.log"
rm -rf "$ST/fifo" "$ST/linked" "$ST/slashuuid" "$ST/dotdot"
# A backup whose base breaks after it was read: its files and folders fail with EIO, as its
# root does (not ENOENT or ENOTDIR), and nothing of that is cached: repaired, it reads again.
# (The kernel keeps what it was told of folders listed before: those are not asked again.)
"$STITCH" backup "$S" "$ST/c0" >/dev/null 2>&1 || bad "backup c0"
"$STITCH" backup "$S" "$ST/c1" --base "$ST/c0" >/dev/null 2>&1 || bad "backup c1"
check "a new chain reads" wait_for cmp -s "$work/sm/c1/db/t.sql" "$S/db/t.sql"
ls "$work/sm/c1/db" >/dev/null
cp "$ST/c0/.backup" "$work/c0.backup"
printf '<config>' > "$ST/c0/.backup"
wait_for bash -c "! cat '$work/sm/c1/db/t.sql' >/dev/null 2>&1"
check "its base broken, a file read before is EIO" eio cat "$work/sm/c1/db/t.sql"
check "and a folder not listed yet is EIO" eio ls "$work/sm/c1/db/part_2"
check "and a name looked up in it is EIO" eio stat "$work/sm/c1/db/part_2/data.bin"
check "and its extended attributes are EIO" eio getfattr -n user.stitchfs.source "$work/sm/c1/db/t.sql"
cp "$work/c0.backup" "$ST/c0/.backup.new" && mv "$ST/c0/.backup.new" "$ST/c0/.backup"
check "repaired, the file reads again" wait_for cmp -s "$work/sm/c1/db/t.sql" "$S/db/t.sql"
check "and the name looked up while broken is there" cmp "$work/sm/c1/db/part_2/data.bin" "$S/db/part_2/data.bin"
rm -rf "$ST/c0" "$ST/c1"
umnt "$work/sm"
PST=$work/pstore  # A copy: pruned and changed under its own mount.
cp -a "$ST" "$PST"
mnt "$PST" "$work/psm"
for g in g2 g3; do "$STITCH" restore "$PST/$g" "$work/exp-$g" >/dev/null 2>&1; done
check "read before prune" diff -r "$work/psm/g3" "$work/exp-g3"
g2_ino=$(stat -c %i "$work/psm/g2/logs/big.log")
python3 - "$work/psm/g3/logs/big.log" "$work/exp-g3/logs/big.log" "$work/held" > "$work/held.out" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
want = open(sys.argv[2], 'rb').read()
os.pread(fd, 1, 0)
open(sys.argv[3] + '.ready', 'w').close()
while not os.path.exists(sys.argv[3] + '.go'):
    time.sleep(0.05)
try:
    got = b''.join(os.pread(fd, 1 << 20, off) for off in range(0, len(want), 1 << 20))
    print('same' if got == want else 'wrong')
except OSError as e:
    print('eio' if e.errno == 5 else 'error %d' % e.errno)
PY
held=$!
wait_for test -e "$work/held.ready"
"$STITCH" prune "$PST" --keep-last 2 >/dev/null
touch "$work/held.go"
check "prune: only the kept backups remain" wait_output "at by-uuid g2 g3 latest " listing_line "$work/psm"
check "prune: a kept backup flattened in place reads exactly" diff -r "$work/psm/g2" "$work/exp-g2"
check "prune: flattened in place, it keeps its inode numbers" test "$(stat -c %i "$work/psm/g2/logs/big.log")" = "$g2_ino"
check "prune: a kept backup whose chain changed reads exactly" diff -r "$work/psm/g3" "$work/exp-g3"
wait "$held"
check "a file held open across prune: old bytes or EIO, never wrong ($(cat "$work/held.out"))" grep -qx 'same\|eio' "$work/held.out"
mkdir -p "$work/other/logs" && echo "another tree" > "$work/other/file"
head -c 8192 /dev/urandom > "$work/other/logs/big.log"  # Other bytes under the same name.
"$STITCH" backup "$work/other" "$work/.g3-new" --timestamp '2001-02-03 04:05:06' >/dev/null 2>&1
old_uuid=$("$STITCH" info "$PST/g3" --json | grep -o '"uuid":"[^"]*"' | head -1 | cut -d'"' -f4)
new_uuid=$("$STITCH" info "$work/.g3-new" --json | grep -o '"uuid":"[^"]*"' | head -1 | cut -d'"' -f4)
old_gen=$(ls "$work/psm/.generations" | grep '^g3@')
exec 7<"$work/psm/g3/logs/big.log"  # Open across the replacement.
rm -rf "$PST/g3" && mv "$work/.g3-new" "$PST/g3"
check "a backup replaced in place: its new content" wait_output "another tree" cat "$work/psm/g3/file"
check "a backup replaced in place: by-uuid has the new uuid" test "$(link_name "$work/psm/by-uuid/$new_uuid")" = g3
check "the old generation never shows the new backup" bash -c "! ls '$work/psm/.generations/$old_gen/file' >/dev/null 2>&1"
if head -c 4096 <&7 >"$work/held-bytes" 2>"$work/held-err"; then
  check "a file open across the replacement still reads the old backup" \
    cmp -n 4096 "$work/held-bytes" "$work/exp-g3/logs/big.log"
else
  check "a file open across the replacement fails (EIO), never reads the new backup" \
    grep -q "Input/output error" "$work/held-err"
fi
exec 7<&-
check "a backup replaced in place: the old uuid is gone" test ! -e "$work/psm/by-uuid/$old_uuid"
check "a backup replaced in place: at/ uses its new time" test "$(link_name "$work/psm/at/2001")" = g3
check "a backup replaced in place: latest moves" test "$(link_name "$work/psm/latest")" = g2
umnt "$work/psm"


# --- share_inodes: an unchanged file has one inode number in every backup ---------------------
expect_exit 2 "needs a store" -- "$STITCHFS" "$ST/g2" "$work/e" -o share_inodes
mnt "$ST" "$work/sh" -o share_inodes
ino() { stat -c %i "$work/sh/$1"; }
check "unchanged file: one inode in g0 and g1" test "$(ino g0/db/part_1/data.bin)" = "$(ino g1/db/part_1/data.bin)"
check "and it counts as linked" test "$(stat -c %h "$work/sh/g1/db/part_1/data.bin")" -ge 2
check "appended file: a new inode" test "$(ino g0/logs/big.log)" != "$(ino g1/logs/big.log)"
check "renamed file: a new inode" test "$(ino g1/db/part_1/data.bin)" != "$(ino g2/db/part_2/data.bin)"
check "unchanged over two later backups" test "$(ino g3/db/part_2/data.bin)" = "$(ino g2/db/part_2/data.bin)"
check "hard links inside a backup still share theirs" test "$(ino g0/db/t.sql)" = "$(ino g0/hard.sql)"
check "readdir agrees with stat" test "$(ls -i "$work/sh/g1/db/part_1" | grep data.bin | awk '{print $1}')" = "$(ino g1/db/part_1/data.bin)"
one=$(du -s --apparent-size -B1 "$work/sh/g1" | cut -f1)
both=$(du -sc --apparent-size -B1 "$work/sh/g0" "$work/sh/g1" | tail -1 | cut -f1)
zero=$(du -s --apparent-size -B1 "$work/sh/g0" | cut -f1)
check "du counts shared files once" test "$both" -le $((zero + one - 140000))
rsync -aH "$work/sh/g0" "$work/sh/g1" "$work/rsh/"
check "rsync -H makes one file of them" test "$(stat -c %i "$work/rsh/g0/db/part_1/data.bin")" = "$(stat -c %i "$work/rsh/g1/db/part_1/data.bin")"
check "rsync -H copies stay exact" diff -r --no-dereference "$work/rsh/g1" "$work/sh/g1"
check "the changed file is not linked" test "$(stat -c %h "$work/rsh/g1/logs/big.log")" = 1
umnt "$work/sh"

# --- the resident set: cached manifest and index mapped, released after use --------------------
# A tree whose manifest is cached (1 MiB or more) over three backups, so the top keeps its own
# resolved index: the mount maps both from its cache folder, and a second after a walk neither
# is in the daemon's resident set (the bytes stay in the page cache).
T=$work/many
for d in $(seq 150); do
  mkdir -p "$T/d$d"
  (cd "$T/d$d" && seq -f "column_of_a_wide_table_%04g.bin" 60 | xargs touch)
done
printf 'grows' > "$T/d1/log"
export STITCH_CACHE_DIR=$work/rss-cache
"$STITCH" backup "$T" "$work/rss/r0" >/dev/null 2>&1 || bad "backup r0"
printf ' more' >> "$T/d1/log"
"$STITCH" backup "$T" "$work/rss/r1" --base "$work/rss/r0" >/dev/null 2>&1 || bad "backup r1"
printf ' again' >> "$T/d1/log"
"$STITCH" backup "$T" "$work/rss/r2" --base "$work/rss/r1" >/dev/null 2>&1 || bad "backup r2"
check "the top keeps its own index" test -s "$work/rss/r2/.stitchfs/index"
manifest_bytes=$(stat -c %s "$work/rss/r2/.backup")
check "its manifest is large enough to be cached ($manifest_bytes bytes)" test "$manifest_bytes" -ge 1048576
mnt "$work/rss/r2" "$work/rm"
umnt "$work/rm"
check "the manifest is cached" compgen -G "$STITCH_CACHE_DIR/*.manifest" >/dev/null
# has_copy FILE DIR: DIR holds a file ending in .index with FILE's bytes.
has_copy() { local f; for f in "$2"/*.index; do cmp -s "$1" "$f" && return 0; done; return 1; }
check "and the backup's own index copied beside it" has_copy "$work/rss/r2/.stitchfs/index" "$STITCH_CACHE_DIR"
mnt "$work/rss/r2" "$work/rm"
daemon=$(pgrep -n -f "stitchfs $work/rss/r2 $work/rm")
check "a walk reads the tree" diff -r "$T" "$work/rm"
# mapped_kb PATTERN: resident KiB of the daemon's mappings of files matching PATTERN.
mapped_kb() {
  awk -v p="$1" '/^[0-9a-f]+-/{f=($6 ~ p)} f && /^Rss:/{kb+=$2} END{print kb+0}' "/proc/$daemon/smaps"
}
walked=$(mapped_kb '\.(manifest|index)$')
check "the walk mapped the cache's files ($walked KiB)" test "$walked" -gt 0
released() { [ "$(mapped_kb '\.(manifest|index)$')" = 0 ]; }
check "and they leave the daemon's resident set after it" wait_for released
check "read again, they read the same" diff -r "$T" "$work/rm"
umnt "$work/rm"
unset STITCH_CACHE_DIR

# --- a mount of one backup while prune rewrites its chain ---------------------------------------
# prune removes the base of the base after flattening the level above it in place, then (keep
# last 1) flattens the mounted backup itself: the mount opens it again through its chain as it
# is then, and every file reads the same, beyond the files whose readers it kept (300 files).
P="$work/pr/src"
mkdir -p "$P/d"
for i in $(seq 300); do head -c $((1000 + i)) /dev/urandom >"$P/d/f$i"; done
"$STITCH" backup "$P" "$work/pr/s/p1" --timestamp "2026-01-01 00:00:00" >/dev/null 2>&1 || bad "backup p1"
for i in $(seq 300); do echo a >>"$P/d/f$i"; done
"$STITCH" backup "$P" "$work/pr/s/p2" --base "$work/pr/s/p1" --timestamp "2026-01-02 00:00:00" >/dev/null 2>&1 || bad "backup p2"
for i in $(seq 300); do echo b >>"$P/d/f$i"; done
"$STITCH" backup "$P" "$work/pr/s/p3" --base "$work/pr/s/p2" --timestamp "2026-01-03 00:00:00" >/dev/null 2>&1 || bad "backup p3"
mnt "$work/pr/s/p3" "$work/prm"
check "before the prune" diff -r "$P" "$work/prm"
tail_size=$(stat -c %s "$work/prm/.appended/d/f1")
check "p3's own tail of d/f1 is what it appended (2 bytes)" test "$tail_size" = 2
"$STITCH" prune "$work/pr/s" --keep-last 2 >/dev/null 2>&1 || bad "prune --keep-last 2"
check "p1 is gone" test ! -e "$work/pr/s/p1"
sync && echo 3 >/proc/sys/vm/drop_caches
check "after p1 went and p2 was flattened" diff -r "$P" "$work/prm"
"$STITCH" prune "$work/pr/s" --keep-last 1 >/dev/null 2>&1 || bad "prune --keep-last 1"
sync && echo 3 >/proc/sys/vm/drop_caches
check "after the mounted backup itself was flattened" diff -r "$P" "$work/prm"
# What the mount showed stays: .appended is still p3's own tail (its size, and its bytes or EIO),
# never the flattened backup's whole file.
check "the tail keeps its size" test "$(stat -c %s "$work/prm/.appended/d/f1")" = "$tail_size"
tail_now=$(cat "$work/prm/.appended/d/f1" 2>/dev/null)
check "and reads as it was, or not at all" test "$tail_now" = b -o -z "$tail_now"
# Another backup in its place (the first deleted): never served in its stead; reads that need
# the first fail, and no file reads other bytes.
cp -r "$P" "$work/pr/other" && for i in $(seq 300); do echo c >>"$work/pr/other/d/f$i"; done
"$STITCH" backup "$work/pr/other" "$work/pr/p3-new" --timestamp "2026-01-03 00:00:00" >/dev/null 2>&1 || bad "backup p3-new"
rm -rf "$work/pr/s/p3" && mv "$work/pr/p3-new" "$work/pr/s/p3"
sync && echo 3 >/proc/sys/vm/drop_caches
check "another backup in its place: reads fail" eio cat "$work/prm/d/f1"
other_bytes() { for i in $(seq 300); do cmp -s "$P/d/f$i" "$work/prm/d/f$i" 2>/dev/null || { [ -r "$work/prm/d/f$i" ] && cat "$work/prm/d/f$i" >/dev/null 2>&1 && return 0; }; done; return 1; }
check "and none reads other bytes" test ! "$(other_bytes && echo yes)"
umnt "$work/prm"

# --- the files cache on a remote file system (a FUSE mount is one) ------------------------------
# A file changed 3 s before its base began reading: clearly before on a local disk; on a remote
# file system, whose server sets times by its own clock, not (the files cache allows 10 s there).
R=$work/remote-src
mkdir -p "$R"
head -c 5000 /dev/urandom >"$R/f"
touch -d "@$(($(date +%s) - 3)).5" "$R/f"
sleep 0.1
"$STITCH" backup "$R" "$work/rs/b0" >/dev/null 2>&1 || bad "backup of the source to mount"
mnt "$work/rs/b0" "$work/rsm"  # Its files' ctime is their mtime: 3 s ago, in sub-seconds.
"$STITCH" backup "$work/rsm" "$work/rs/c0" >/dev/null 2>&1 || bad "backup of the mount"
out=$("$STITCH" backup "$work/rsm" "$work/rs/c1" --base "$work/rs/c0" --files-cache --json)
check "files cache, a FUSE source: a file changed 3 s before the base read is read again" \
  grep -q '"bytes_read":5000,' <<<"$out"
sleep 0.1
"$STITCH" backup "$R" "$work/rs/l0" >/dev/null 2>&1 || bad "backup of the local source"
out=$("$STITCH" backup "$R" "$work/rs/l1" --base "$work/rs/l0" --files-cache --json)
check "files cache, a local source: the same file is trusted" grep -q '"bytes_read":0,' <<<"$out"
umnt "$work/rsm"

finish
