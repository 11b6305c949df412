#!/usr/bin/env bash
# Archive backups (.zip, .tar, .tar.gz/.tgz, .tar.bz2, .tar.xz, .tar.lzma, .tar.zst/.tzst) read in
# place by every command and both mounts: chains mixing archives and folders, random reads
# across restart points, damaged archives, and the per-user index cache.
# Usage: archive_test.sh STITCH STITCHFS MAKE_FIXTURE PREAD_CHECK
# Exits 77 (skipped) where FUSE cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
STITCHFS=$2
MAKE_FIXTURE=$3
PREAD_CHECK=$4
export STITCH_NO_PROGRESS=1
require_fuse
for tool in zip bsdtar zstd xz bzip2; do
  command -v $tool >/dev/null || { echo "SKIP: $tool missing (scripts/install-deps.sh --tests)"; exit 77; }
done
work=$(mktemp -d)
export STITCH_CACHE_DIR=$work/cache
mounts=()
cleanup() {
  unmount_all "${mounts[@]}"
  rm -rf "$work"
}
trap cleanup EXIT
mnt() {
  local backup=$1 dir=$2
  mkdir -p "$dir"
  mounts+=("$dir")
  "$STITCHFS" "$backup" "$dir"
}
umnt() { fusermount3 -u "$1"; }
# damaged ARCHIVE PART: `stitch verify` exits 20 (BACKUP_DAMAGED) and says PART (in an error or
# in a PROBLEM line).
damaged() {
  local out
  out=$("$STITCH" verify "$1" 2>&1)
  local got=$?
  if [ "$got" != 20 ]; then bad "verify $1: exit $got, not 20 ($out)"; return; fi
  case "$out" in *"$2"*) ok ;; *) bad "verify $1 does not say '$2' ($out)" ;; esac
}
# pack FORMAT SRC_DIR ARCHIVE: the backup folder SRC_DIR as one archive, with the tools and
# member orders users meet (GNU tar's "./" names, libarchive's pax headers as ClickHouse
# writes them, `.backup` first or last).
pack() {
  local format=$1 src=$2 out=$3
  rm -f "$out"
  case $format in
    zip) (cd "$src" && zip -qr -X "$out" .) ;;
    zip0) (cd "$src" && zip -qr -X -0 "$out" .) ;;
    tar) bsdtar --format pax -cf "$out" -C "$src" $(cd "$src" && ls -A | grep -vx .backup) .backup ;;
    tar.gz) tar -czf "$out" -C "$src" . ;;
    tgz) bsdtar --format pax -czf "$out" -C "$src" .backup $(cd "$src" && ls -A | grep -vx .backup) ;;
    tar.bz2) bsdtar --format pax -cjf "$out" -C "$src" . ;;
    tar.xz) tar -cJf "$out" -C "$src" . ;;
    tar.lzma) bsdtar --format pax --lzma -cf "$out" -C "$src" . ;;
    tar.zst) bsdtar --format pax --zstd -cf "$out" -C "$src" . ;;
    tzst) tar --zstd -cf "$out" -C "$src" . ;;
  esac
}
# flip FILE OFFSET [COUNT]: inverts COUNT (1) bytes of FILE from OFFSET (always a change).
flip() {
  local f=$1 off=$2 count=${3:-1} i b
  for ((i = 0; i < count; i++)); do
    b=$(od -An -tu1 -j $((off + i)) -N1 "$f" | tr -d ' ')
    printf "\\x$(printf %02x $((b ^ 0xff)))" | dd of="$f" bs=1 seek=$((off + i)) conv=notrunc 2>/dev/null
  done
}
# set_base BACKUP_DIR LOCATOR_PATH: points the manifest's base at File('LOCATOR_PATH').
set_base() {
  sed -i "s|<base_backup>[^<]*</base_backup>|<base_backup>File(\&apos;$2\&apos;)</base_backup>|" "$1/.backup"
}

# --- Every format, one backup each: verify, restore, mount, against the expected tree.
"$MAKE_FIXTURE" chain "$work/fx" >/dev/null || { echo "make_fixture failed"; exit 1; }
exp=$work/fx/expected
formats="zip zip0 tar tar.gz tgz tar.bz2 tar.xz tar.lzma tar.zst tzst"
for f in $formats; do
  ext=$f
  [ "$f" = zip0 ] && ext=zip
  a=$work/b0-$f.$ext
  pack "$f" "$work/fx/b0" "$a"
  check "$f verify" "$STITCH" verify "$a" >/dev/null
  rm -rf "$work/out"
  check "$f restore" "$STITCH" restore "$a" "$work/out" >/dev/null
  check "$f restore tree" diff -r "$work/out" "$exp/b0"
  mnt "$a" "$work/m-$f"
  check "$f mount diff" diff -r "$work/m-$f" "$exp/b0"
  check "$f mount tar" bash -c "tar -cf - -C '$work/m-$f' . | tar -tf - >/dev/null"
  umnt "$work/m-$f"
done
check "bsdtar lzma is real lzma (not xz)" bash -c "od -An -tx1 -N1 '$work/b0-tar.lzma.tar.lzma' | grep -q 5d"
check "index cache kept" bash -c "ls '$STITCH_CACHE_DIR'/archives/*.aindex >/dev/null"
check "tar.zst decoded into the cache" bash -c "ls '$STITCH_CACHE_DIR'/archives/*.stream >/dev/null"
check "info names the archive form" bash -c "'$STITCH' info '$work/b0-tgz.tgz' | grep -q 'form: *tar.gz archive'"

# --- Chains: b0.zip <- b1.tar.zst <- b2 (folder); and b0 (folder) <- b1.tgz.
cp -a "$work/fx/b0" "$work/c0"
pack zip "$work/c0" "$work/c0.zip"
cp -a "$work/fx/b1" "$work/c1"
set_base "$work/c1" c0.zip
pack tar.zst "$work/c1" "$work/c1.tar.zst"
cp -a "$work/fx/b2" "$work/c2"
set_base "$work/c2" c1.tar.zst
rm -rf "$work/c0" "$work/c1"
check "folder on tzst on zip: verify" "$STITCH" verify "$work/c2" >/dev/null
mnt "$work/c2" "$work/m-c2"
check "folder on tzst on zip: mount" diff -r "$work/m-c2" "$exp/b2"
umnt "$work/m-c2"
mnt "$work/c1.tar.zst" "$work/m-c1"
check "tzst on zip: mount" diff -r "$work/m-c1" "$exp/b1"
umnt "$work/m-c1"
check "info shows the archive base" bash -c "'$STITCH' info '$work/c2' | grep -q c1.tar.zst"
cp -a "$work/fx/b1" "$work/d1"
set_base "$work/d1" "$work/fx/b0"
pack tgz "$work/d1" "$work/d1.tgz"
rm -rf "$work/d1"
mnt "$work/d1.tgz" "$work/m-d1"
check "tgz on a folder: mount" diff -r "$work/m-d1" "$exp/b1"
umnt "$work/m-d1"
expect_exit 21 "c9.zip" -- "$STITCH" verify "$work/c2" --base "$work/c9.zip"

# --- The other commands that read: ls, cat, diff, flatten, info --json, on archives.
check "ls -R of an archive" bash -c "'$STITCH' ls -R '$work/b0-zip.zip' | grep -q 'columns.txt'"
check "cat of an archive member" bash -c "'$STITCH' cat '$work/b0-tar.xz.tar.xz' data/db/log/data.bin | cmp -s - '$exp/b0/data/db/log/data.bin'"
check "diff of a zip and a folder" bash -c "'$STITCH' diff '$work/b0-zip.zip' '$work/c2' --json | grep -q 'store/copy.txt'"
check "diff of two archives of one backup: nothing" bash -c "[ -z \"\$('$STITCH' diff '$work/b0-zip.zip' '$work/b0-tar.bz2.tar.bz2')\" ]"
check "flatten an archive chain into a folder" "$STITCH" flatten "$work/c1.tar.zst" "$work/flat-c1"
rm -rf "$work/out"
"$STITCH" restore "$work/flat-c1" "$work/out" >/dev/null
check "the flattened backup, restored" diff -r "$work/out" "$exp/b1"
check "info --json names the form" bash -c "'$STITCH' info --json '$work/c1.tar.zst' | grep -q '\"form\":\"tar.zst\"'"

# --- A store holding archives and folders: archives appear as backups.
mkdir -p "$work/store"
cp -a "$work/fx/b0" "$work/store/f0"
cp "$work/b0-zip.zip" "$work/b0-tar.gz.tar.gz" "$work/store/"
mnt "$work/store" "$work/m-store"
check "store lists archives" test -d "$work/m-store/b0-zip.zip"
check "store zip diff" diff -r "$work/m-store/b0-zip.zip" "$exp/b0"
check "store tar.gz diff" diff -r "$work/m-store/b0-tar.gz.tar.gz" "$exp/b0"
check "store folder diff" diff -r "$work/m-store/f0" "$exp/b0"
umnt "$work/m-store"
check "stitch log lists archives" bash -c "'$STITCH' log '$work/store' | grep -q b0-zip.zip"
(cd "$work/fx/expected" && zip -qr "$work/store/other.zip" b0)
check "an archive that is not a backup is left out of log" bash -c "'$STITCH' log '$work/store' >'$work/log.txt' && ! grep -q other.zip '$work/log.txt'"
check "and does not stop prune" "$STITCH" prune "$work/store" --keep-last 5 --dry-run

# --- Prune: an archive is never rewritten; its bases stay while it is kept; a removed one goes.
p=$work/prune
mkdir -p "$p/src" "$p/store"
seq 1 100000 >"$p/src/a"
"$STITCH" backup "$p/src" "$p/store/f1" --timestamp "2026-01-01 00:00:00" >/dev/null
seq 1 1000 >>"$p/src/a"
"$STITCH" backup "$p/src" "$p/store/f2" --base "$p/store/f1" --timestamp "2026-01-02 00:00:00" >/dev/null
pack zip "$p/store/f2" "$p/store/f2.zip"
rm -rf "$p/store/f2"
cp "$p/src/a" "$p/a2"
seq 1 1000 >>"$p/src/a"
"$STITCH" backup "$p/src" "$p/store/f3" --base "$p/store/f2.zip" --timestamp "2026-01-03 00:00:00" >/dev/null
check "prune keeps the base of a kept archive" bash -c "'$STITCH' prune '$p/store' --keep-last 2 | grep -q 'keep    f1 (base of kept archive f2.zip)'"
check "the archive is still a file" test -f "$p/store/f2.zip"
check "the archive still reads" bash -c "'$STITCH' cat '$p/store/f2.zip' a | cmp -s - '$p/a2'"
check "prune removes an archive, flattening what stood on it" "$STITCH" prune "$p/store" --keep-last 1 >/dev/null
check "archive removed" test ! -e "$p/store/f2.zip"
check "kept backup reads after prune" bash -c "'$STITCH' cat '$p/store/f3' a | cmp -s - '$p/src/a'"

# --- Large members: random reads across restart points (deflate, gzip, zstd, stored).
mkdir -p "$work/big/src"
head -c 6000000 /dev/urandom >"$work/big/src/random.bin"
seq 1 3000000 >"$work/big/src/numbers.txt"
"$STITCH" backup "$work/big/src" "$work/big/b" >/dev/null
for f in zip tar.gz tar.zst tar; do
  pack "$f" "$work/big/b" "$work/big/b.$f"
  mnt "$work/big/b.$f" "$work/m-big"
  check "$f random preads" "$PREAD_CHECK" "$work/m-big/numbers.txt" "$work/big/src/numbers.txt" 4 400
  check "$f sequential" cmp "$work/m-big/random.bin" "$work/big/src/random.bin"
  umnt "$work/m-big"
done

check "indexing shows progress on a terminal" bash -c "STITCH_CACHE_DIR='$work/cache3' script -qec \"env -u STITCH_NO_PROGRESS '$STITCH' verify '$work/big/b.tar.gz'\" /dev/null | grep -q 'index b.tar.gz'"
check "and nothing when not on one" bash -c "! STITCH_CACHE_DIR='$work/cache4' env -u STITCH_NO_PROGRESS '$STITCH' verify '$work/big/b.tar.gz' 2>&1 | grep -q 'index b.tar.gz'"
(cd "$work/big/b" && zip -q -r -Z bzip2 "$work/big/bz.zip" .)
check "zip with bzip2 members" bash -c "'$STITCH' cat '$work/big/bz.zip' numbers.txt | cmp -s - '$work/big/src/numbers.txt'"

# --- Damaged archives: clear errors and exit codes, never other bytes.
d=$work/dmg
mkdir -p "$d"
size=$(stat -c %s "$work/big/b.tar.gz")
head -c $((size / 2)) "$work/big/b.tar.gz" >"$d/cut.tar.gz"
damaged "$d/cut.tar.gz" "ends early"
cp "$work/big/b.tar.gz" "$d/flip.tar.gz"
flip "$d/flip.tar.gz" $((size / 3))
damaged "$d/flip.tar.gz" "damaged"
zsize=$(stat -c %s "$work/big/b.tar.zst")
cp "$work/big/b.tar.zst" "$d/flip.tar.zst"
flip "$d/flip.tar.zst" $((zsize / 2)) 4
damaged "$d/flip.tar.zst" "checksum mismatch"
cp "$work/big/b.zip" "$d/flip.zip"
zipsize=$(stat -c %s "$d/flip.zip")
flip "$d/flip.zip" $((zipsize / 4)) 2
damaged "$d/flip.zip" "damaged"
cp "$work/b0-zip.zip" "$d/missing.zip"
zip -q -d "$d/missing.zip" data/db/t/all_1_1_0/columns.txt
damaged "$d/missing.zip" "columns.txt is missing (no such member in the archive)"
mnt "$d/missing.zip" "$work/m-missing"
check "missing member: EIO" bash -c "! cat '$work/m-missing/data/db/t/all_1_1_0/columns.txt' 2>/dev/null"
check "missing member: others read" diff -r "$work/m-missing/metadata" "$exp/b0/metadata"
umnt "$work/m-missing"
for how in longer shorter; do
  rm -rf "$d/$how" && cp -a "$work/fx/b0" "$d/$how"
  f="$d/$how/data/db/t/all_1_1_0/x.bin"
  if [ $how = longer ]; then printf 'x' >>"$f"; else truncate -s -1 "$f"; fi
  pack tar.gz "$d/$how" "$d/$how.tar.gz"
  damaged "$d/$how.tar.gz" "the manifest declares 70000"
done
(cd "$work/big/src" && zip -q "$d/notbackup.zip" numbers.txt)
expect_exit 10 "not a backup" -- "$STITCH" verify "$d/notbackup.zip"
head -c 5000 /dev/urandom >"$d/garbage.zip"
expect_exit 20 "not a readable zip archive" -- "$STITCH" verify "$d/garbage.zip"
head -c 5000 /dev/urandom >"$d/garbage.tar"
expect_exit 20 "not a readable tar archive" -- "$STITCH" verify "$d/garbage.tar"
mkfifo "$d/fifo.zip"
expect_exit 10 "not a regular file" -- timeout 10 "$STITCH" verify "$d/fifo.zip"
# Hostile: 300 directory entries over one bomb (issue 25: 104 s and 703 MB to index) is refused
# from its directory; in a store mount the other backups are served.
"$MAKE_FIXTURE" hostile-zip "$d/shared.zip"
expect_exit 20 "overlap" -- timeout 60 "$STITCH" verify "$d/shared.zip"
mkdir -p "$work/hstore"
cp -a "$work/fx/b0" "$work/hstore/f0"
cp "$d/shared.zip" "$work/hstore/"
mnt "$work/hstore" "$work/m-hstore"
check "hostile store: the folder backup reads" timeout 60 diff -r "$work/m-hstore/f0" "$exp/b0"
check "hostile store: the hostile archive is an error" bash -c "! timeout 60 ls '$work/m-hstore/shared.zip/' >/dev/null 2>&1"
check "hostile store: the folder backup still reads" timeout 60 diff -r "$work/m-hstore/f0" "$exp/b0"
umnt "$work/m-hstore"
check "hostile store: log lists the folder backup" bash -c "timeout 60 '$STITCH' log '$work/hstore' | grep -q f0"
# A cache on a nearly full file system: refused before it fills, nothing left behind.
mkdir -p "$work/small"
if mount -t tmpfs -o size=64m tmpfs "$work/small" 2>/dev/null; then
  mounts+=("$work/small")
  expect_exit 1 "less than 512 MiB would be left free" -- env STITCH_CACHE_DIR="$work/small" "$STITCH" verify "$work/big/b.tar.zst"
  check "a refused decode leaves no file" bash -c "[ -z \"\$(find '$work/small' -type f ! -name .trimmed)\" ]"
  umount "$work/small"
else
  bad "cannot mount a small tmpfs for the full-disk check"
fi
expect_exit 14 "STITCH_ARCHIVE_CACHE_MB" -- env STITCH_ARCHIVE_CACHE_MB=1 STITCH_CACHE_DIR="$work/cache2" "$STITCH" verify "$work/big/b.tar.zst"
expect_exit 14 "read-only" -- "$STITCH" backup "$work/big/src" "$d/new.zip"

# --- The cache: a damaged decoded stream is an error, then decoded again.
for s in "$STITCH_CACHE_DIR"/archives/*.stream; do
  printf 'XXXX' | dd of="$s" bs=1 seek=100 conv=notrunc 2>/dev/null
done
expect_exit 1 "decoded again" -- "$STITCH" verify "$work/b0-tar.zst.tar.zst"
check "decoded again after damage" "$STITCH" verify "$work/b0-tar.zst.tar.zst" >/dev/null
check "no cache: tar.zst" env STITCH_CACHE_DIR=off "$STITCH" verify "$work/b0-tar.zst.tar.zst" >/dev/null

# --- A build killed part-way (kill -9 while its temporary files exist): the next open builds
# again (or uses what was renamed into place whole) and reads right.
mkdir -p "$work/kill/src"
seq 1 20000000 >"$work/kill/src/n.txt"
"$STITCH" backup "$work/kill/src" "$work/kill/b" >/dev/null
(cd "$work/kill/b" && tar -cf - . | gzip -1 >"$work/kill/b.tar.gz" && tar -cf - . | zstd -q -1 >"$work/kill/b.tar.zst")
for f in tar.gz tar.zst; do
  # A .tar.gz's index is written out in a few milliseconds at the end of its pass: on a loaded
  # machine the poll can miss it, so the run is tried again (from an empty cache) until a kill
  # lands while a temporary file exists.
  seen=""
  for attempt in $(seq 10); do
    kc=$work/kill/cache-$f-$attempt
    STITCH_CACHE_DIR="$kc" "$STITCH" verify "$work/kill/b.$f" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 30000); do  # Until it ends by itself (at most about a minute).
      kill -0 "$pid" 2>/dev/null || break
      if compgen -G "$kc/archives/*.tmp-*" >/dev/null; then seen=1 && break; fi
      sleep 0.001
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    [ -n "$seen" ] && break
  done
  check "$f: killed while building its cache (attempt $attempt)" test -n "$seen"
  check "$f: the next open reads right" bash -c "STITCH_CACHE_DIR='$kc' '$STITCH' cat '$work/kill/b.$f' n.txt | cmp -s - '$work/kill/src/n.txt'"
  check "$f: and verifies" bash -c "STITCH_CACHE_DIR='$kc' '$STITCH' verify '$work/kill/b.$f' >/dev/null"
  check "$f: the next run removed what the killed one left" bash -c "! compgen -G '$kc/archives/*.tmp*'"
done
# A decode that is only stopped is alive: another run on the same cache leaves its temporary
# file alone, and it finishes when it goes on.
kc=$work/kill/cache-stopped
STITCH_CACHE_DIR="$kc" "$STITCH" verify "$work/kill/b.tar.zst" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 30000); do
  kill -0 "$pid" 2>/dev/null || break
  compgen -G "$kc/archives/*.stream.tmp-*" >/dev/null && break
  sleep 0.001
done
kill -STOP "$pid" 2>/dev/null
if compgen -G "$kc/archives/*.stream.tmp-*" >/dev/null; then
  check "another run beside a stopped decode" bash -c "STITCH_CACHE_DIR='$kc' '$STITCH' verify '$work/kill/b.tar.gz' >/dev/null"
  check "leaves the stopped decode's temporary file" bash -c "compgen -G '$kc/archives/*.stream.tmp-*' >/dev/null"
  kill -CONT "$pid"
  check "which then finishes" wait "$pid"
else
  kill -CONT "$pid" 2>/dev/null
  wait "$pid"
  echo "note: the decode ended before it could be stopped; the live-temporary check did not run"
fi
rm -rf "$work/kill"

finish
