#!/usr/bin/env bash
# Backups in object storage, against a real S3 server (Ceph radosgw started for the test):
# backups and incrementals written to S3, chains mixing S3 and local backups, ClickHouse
# locators with and without credentials, refused credentials and missing buckets, mounts of
# a backup and of a store compared byte for byte, the server killed during reads and during a
# backup, prune and flatten of an S3 store, mount options in place of the environment.
# Usage: s3_test.sh STITCH STITCHFS RADOSGW_SH MOUNT_HELPER [MAKE_FIXTURE]
# Exits 77 (skipped) where FUSE or radosgw cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
STITCHFS=$2
RGW=$3
HELPER=$4
MAKE_FIXTURE=${5:-}
export STITCH_NO_PROGRESS=1
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null || ! command -v radosgw >/dev/null; then
  echo "SKIP: no /dev/fuse, fusermount3 or radosgw"
  exit 77
fi
work=$(mktemp -d)
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do
    mountpoint -q "$m" 2>/dev/null && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
  bash "$RGW" stop "$work/rgw" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/rgw"
bash "$RGW" start "$work/rgw" >/dev/null || { echo "FAIL: radosgw did not start"; exit 1; }
source "$work/rgw/env"
export HOME=$work/home STITCH_S3_MAX_ATTEMPTS=3  # No ~/.aws of the machine's; quick failures.
mkdir -p "$HOME"
URL=$AWS_ENDPOINT_URL
mnt() {
  local backup=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  mounts+=("$dir")
  "$STITCHFS" "$backup" "$dir" "$@"
}
# s3api METHOD PATH: a signed request with curl, body on stdout.
# Further arguments go to curl (`-T FILE` for a PUT's body).
s3api() {
  curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X "$1" "$URL/$2" "${@:3}"
}
# Keys under a prefix, percent-encoded as the server lists them with encoding-type=url (so that
# a key holding a CR or a control character is seen too).
keys() {
  s3api GET "stitch?encoding-type=url&list-type=2&prefix=${1//\//%2F}" | grep -o '<Key>[^<]*</Key>' |
    sed 's/<[^>]*>//g'
}
export URL
export -f s3api keys

# --- A source tree and two days of it --------------------------------------------------------
src=$work/src
mkdir -p "$src/logs" "$src/db/part 1" "$src/empty"
head -c 3000000 /dev/urandom >"$src/logs/app.log"
head -c 20000000 /dev/urandom >"$src/db/part 1/data.bin"  # Multipart (> 16 MiB).
echo "config" >"$src/db/cfg.txt"
cp "$src/db/cfg.txt" "$src/db/cfg copy.txt"
: >"$src/logs/empty.log"
ln -s ../db/cfg.txt "$src/logs/link"
printf 'caf\xc3\xa9\n' >"$src/logs/caf$(printf '\xc3\xa9').txt"
chmod 600 "$src/db/cfg.txt"
cp -a "$src" "$work/day1"
check "full backup to S3" "$STITCH" backup "$src" s3://stitch/store/d1
head -c 500000 /dev/urandom >>"$src/logs/app.log"
mv "$src/db/cfg copy.txt" "$src/db/renamed.txt"
echo "new" >"$src/logs/new.txt"
cp -a "$src" "$work/day2"
check "incremental to S3 on an S3 base" "$STITCH" backup "$src" s3://stitch/store/d2 \
  --base s3://stitch/store/d1
loc=$("$STITCH" info --json s3://stitch/store/d2 | grep -o '"base_backup": *"[^"]*"')
case "$loc" in *"S3('$URL/stitch/store/d1')"*) ok ;; *) bad "base locator is a ClickHouse S3 URL: $loc" ;; esac
stored=$(keys store/d2/ | grep -c 'app.log')
check "only the tail of app.log is stored on day 2" [ "$stored" = 1 ]
check "the tail object has the appended bytes" \
  [ "$("$STITCH" cat s3://stitch/store/d2 logs/app.log | wc -c)" = 3500000 ]
check "verify an S3 chain" "$STITCH" verify s3://stitch/store/d2
check "restore from S3 equals the source" bash -c \
  "'$STITCH' restore s3://stitch/store/d2 '$work/restored' && diff -r '$work/restored' '$work/day2'"
check "no .lock left behind" [ -z "$(keys store/d2/.lock)" ]
expect_exit 13 "already exists" -- "$STITCH" backup "$src" s3://stitch/store/d2
d=$("$STITCH" diff s3://stitch/store/d1 s3://stitch/store/d2 2>&1)
case "$d" in *logs/new.txt*renamed.txt*|*renamed.txt*logs/new.txt*) ok ;; *) bad "stitch diff of two S3 backups: $d" ;; esac
case "$d" in *app.log*500000*) ok ;; *) bad "stitch diff shows the appended bytes: $d" ;; esac

# --- Mounts -----------------------------------------------------------------------------------
mnt s3://stitch/store/d2 "$work/m1"
check "mounted S3 backup equals day 2 (diff -r)" diff -r "$work/m1" "$work/day2"
check "symlink target" [ "$(readlink "$work/m1/logs/link")" = "../db/cfg.txt" ]
check "mode kept" [ "$(stat -c %a "$work/m1/db/cfg.txt")" = 600 ]
check "tar of the mount" bash -c "tar -C '$work/m1' -cf - . | tar -tf - | grep -q 'part 1/data.bin'"
mnt s3://stitch/store "$work/m2"
check "store mount lists both days" bash -c "ls '$work/m2' | grep -qx d1 && ls '$work/m2' | grep -qx d2"
check "store mount day 1 (diff -r)" diff -r "$work/m2/d1" "$work/day1"
check "store mount day 2 (diff -r)" diff -r "$work/m2/d2" "$work/day2"

# --- Chains mixing local and S3 ---------------------------------------------------------------
echo more >>"$src/logs/app.log"
check "local incremental on an S3 base" "$STITCH" backup "$src" "$work/local3" \
  --base s3://stitch/store/d2
cp -a "$src" "$work/day3"
echo again >>"$src/logs/app.log"
check "S3 incremental on a local base" "$STITCH" backup "$src" s3://stitch/mixed/d4 \
  --base "$work/local3"
mnt s3://stitch/mixed/d4 "$work/m3"
check "S3 on local on S3 chain (diff -r)" diff -r "$work/m3" "$src"
check "local on S3 chain" bash -c "'$STITCH' restore '$work/local3' '$work/r3' && diff -r '$work/r3' '$work/day3'"

# --- Mount options instead of the environment (fstab: no secret on a command line) ---------
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$AWS_ACCESS_KEY_ID" \
  "$AWS_SECRET_ACCESS_KEY" >"$work/creds"
chmod 600 "$work/creds"
mkdir -p "$work/m7"
mounts+=("$work/m7")
check "mount.stitchfs with -o s3_endpoint=,s3_credentials=" env -u AWS_ENDPOINT_URL \
  -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY STITCHFS="$STITCHFS" sh "$HELPER" \
  s3://stitch/store/d2 "$work/m7" -o "ro,_netdev,nofail,s3_endpoint=$URL,s3_credentials=$work/creds"
check "that mount reads (diff -r)" diff -r "$work/m7" "$work/day2"
m7pid=$(pgrep -f "stitchfs s3://stitch/store/d2 $work/m7" | head -1)
check "the mount's daemon is found" [ -n "$m7pid" ]
check "no secret in the daemon's command line" bash -c \
  "[ -n '$m7pid' ] && ! grep -qa '$AWS_SECRET_ACCESS_KEY' /proc/$m7pid/cmdline"

# --- Prune and flatten of a store in object storage --------------------------------------------
psrc=$work/psrc
mkdir -p "$psrc"
# Keys listed percent-encoded (encoding-type=url) must come back exact for prune's deletes.
echo odd >"$psrc/$(printf 'new\nline + 100%% sure.txt')"
for d in 1 2 3 4; do
  head -c 200000 /dev/urandom >>"$psrc/log"
  echo "$d" >"$psrc/day$d"
  base=()
  [ "$d" -gt 1 ] && base=(--base "s3://stitch/pr/d$((d - 1))")
  "$STITCH" backup "$psrc" "s3://stitch/pr/d$d" "${base[@]}" --timestamp "2026-11-0$d 10:00:00" \
    >/dev/null 2>&1 || bad "backup pr/d$d"
  cp -a "$psrc" "$work/pday$d"
done
check "prune an S3 store" "$STITCH" prune s3://stitch/pr --keep-last 2
check "pruned store lists the kept ones" \
  [ "$("$STITCH" log --json s3://stitch/pr | grep -o '"name": *"d[0-9]"' | wc -l)" = 2 ]
check "removed backups leave no object" [ -z "$(keys pr/d1/)$(keys pr/d2/)" ]
check "no prune marker left" [ -z "$(keys pr/ | grep stitch-deleting)" ]
check "the kept base was flattened" bash -c "'$STITCH' info s3://stitch/pr/d3 | grep -q 'chain (1 backup)'"
for d in 3 4; do
  check "kept d$d restores right after prune" bash -c \
    "'$STITCH' restore s3://stitch/pr/d$d '$work/pr$d' && diff -r '$work/pr$d' '$work/pday$d'"
done
# Prune deletes with DeleteObjects (up to 1000 keys a request), not one request per object.
msrc=$work/msrc
mkdir -p "$msrc"
for i in $(seq 1 400); do echo "$i" >"$msrc/f$i"; done
"$STITCH" backup "$msrc" s3://stitch/many/m1 --timestamp "2026-11-01 10:00:00" >/dev/null 2>&1 ||
  bad "backup many/m1"
echo new >"$msrc/f1"
"$STITCH" backup "$msrc" s3://stitch/many/m2 --timestamp "2026-11-02 10:00:00" >/dev/null 2>&1 ||
  bad "backup many/m2"
reqs=$(STITCH_S3_STATS=1 "$STITCH" prune s3://stitch/many --keep-last 1 2>&1 >/dev/null |
  grep -o 'requests [0-9]*' | awk '{s += $2} END {print s}')
check "prune removed 400 objects in a few requests ($reqs)" [ "${reqs:-9999}" -lt 100 ]
check "none of them is left" [ -z "$(keys many/m1/)" ]
check "the kept one restores" bash -c "'$STITCH' restore s3://stitch/many/m2 '$work/many' && diff -r '$work/many' '$msrc'"
check "flatten from S3 to S3" "$STITCH" flatten s3://stitch/pr/d4 s3://stitch/flat/d4
mnt s3://stitch/flat/d4 "$work/m8"
check "flattened copy (diff -r)" diff -r "$work/m8" "$work/pday4"
check "flattened copy has no base" bash -c "'$STITCH' info s3://stitch/flat/d4 | grep -q 'base_backup: *(none)'"

# --- Flatten within the store: whole data objects are copied by the server, not uploaded, then
# read back once to check them ---
stats=$(STITCH_S3_CACHE_MB=0 STITCH_S3_STATS=1 "$STITCH" flatten s3://stitch/store/d2 \
  s3://stitch/flatbig/d2 2>&1)
total_of() { grep -o "$1 [0-9]*" | awk '{s += $2} END {print s}'; }
sent=$(total_of sent <<<"$stats")
recv=$(total_of received <<<"$stats")
bytes=$(du -sb --apparent-size "$work/day2" | cut -f1)
check "flatten copied the 20 MB object server-side (sent $sent bytes)" \
  [ "${sent:-99999999}" -lt 10000000 ]
check "and read the copy back once to check it ($recv bytes received, $bytes in the backup)" \
  [ "${recv:-0}" -ge 20000000 -a "${recv:-0}" -lt $((bytes + 10000000)) ]
check "the server-side flattened copy restores right" bash -c \
  "'$STITCH' restore s3://stitch/flatbig/d2 '$work/fb' && diff -r '$work/fb' '$work/day2'"
check "the server-side flattened copy verifies" "$STITCH" verify s3://stitch/flatbig/d2

# --- ClickHouse locators with and without credentials -----------------------------------------
cp -a "$work/local3" "$work/ch"
rm -rf "$work/ch/.stitchfs"
sed -i "s|<base_backup>[^<]*</base_backup>|<base_backup>S3(\&apos;$URL/stitch/store/d2\&apos;, \&apos;$AWS_ACCESS_KEY_ID\&apos;, \&apos;$AWS_SECRET_ACCESS_KEY\&apos;)</base_backup>|" "$work/ch/.backup"
check "credentials in the locator are used" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
  bash -c "'$STITCH' cat '$work/ch' logs/app.log | cmp - '$work/day3/logs/app.log'"
info=$("$STITCH" info "$work/ch" 2>&1)
case "$info" in *"$AWS_SECRET_ACCESS_KEY"*) bad "stitch info shows the secret" ;; *"[HIDDEN]"*) ok ;; *) bad "info: $info" ;; esac
sed -i "s|<base_backup>[^<]*</base_backup>|<base_backup>S3(\&apos;$URL/stitch/store/d2\&apos;)</base_backup>|" "$work/ch/.backup"
check "S3('url') signs with the configured credentials" \
  bash -c "'$STITCH' cat '$work/ch' logs/app.log | cmp - '$work/day3/logs/app.log'"
expect_exit 15 "ACCESS_DENIED" -- env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
  "$STITCH" cat "$work/ch" logs/app.log

# --- Wrong credentials, missing bucket, missing backup ------------------------------------------
err=$(AWS_SECRET_ACCESS_KEY=wrong-secret-xyz "$STITCH" ls s3://stitch/store/d2 2>&1)
rc=$?
check "wrong secret: exit 15" [ "$rc" = 15 ]
case "$err" in *wrong-secret-xyz*) bad "the secret is in the message" ;; *ACCESS_DENIED*) ok ;; *) bad "$err" ;; esac
expect_exit 10 "no such bucket" -- "$STITCH" ls s3://no-such-bucket/b1
expect_exit 10 "no .backup" -- "$STITCH" ls s3://stitch/store/nothing
mkdir -p "$work/m4"
expect_exit 10 "no such bucket" -- "$STITCHFS" s3://no-such-bucket/x "$work/m4"
expect_exit 10 "no .backup" -- "$STITCH" ls "$URL/stitch/store/nothing"

# --- A lightweight snapshot: its files are objects of the source's bucket, read from there ----
if [ -n "$MAKE_FIXTURE" ]; then
  "$MAKE_FIXTURE" lightweight "$work/lw" "$URL" stitch >/dev/null
  (cd "$work/lw/objects" && find . -type f -printf '%P\n') | while read -r key; do
    curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$work/lw/objects/$key" "$URL/stitch/$key" ||
      bad "upload of $key"
  done
  check "lightweight snapshot: verify" "$STITCH" verify "$work/lw/lw"
  mnt "$work/lw/lw" "$work/m-lw"
  check "lightweight snapshot: mount" diff -r "$work/m-lw" "$work/lw/expected/lw"
  fusermount3 -u "$work/m-lw"
  s3api DELETE "stitch/lw-disk/def/count" >/dev/null
  expect_exit 20 "lw-disk/def/count is missing" -- "$STITCH" cat "$work/lw/lw" data/db/t/all_1_1_0/count.txt
fi

# --- Archive backups that are objects (ClickHouse's BACKUP ... TO S3('.../b.tar.zst')) --------
"$STITCH" backup "$work/day1" "$work/arch-b1" >/dev/null 2>&1
tar --zstd -cf "$work/b1.tar.zst" -C "$work/arch-b1" .
(cd "$work/arch-b1" && zip -qr "$work/b1.zip" .)
for a in b1.tar.zst b1.zip; do
  curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$work/$a" "$URL/stitch/arch/$a" ||
    bad "upload of $a"
  check "S3 $a: verify" "$STITCH" verify "s3://stitch/arch/$a"
  mnt "s3://stitch/arch/$a" "$work/m-arch"
  check "S3 $a: mount" diff -r "$work/m-arch" "$work/day1"
  fusermount3 -u "$work/m-arch"
done
mnt s3://stitch/arch "$work/m-arch-store"
check "S3 store lists archives" diff -r "$work/m-arch-store/b1.tar.zst" "$work/day1"
fusermount3 -u "$work/m-arch-store"
check "S3 archive as a base" "$STITCH" backup "$work/day1" "$work/arch-b2" --base s3://stitch/arch/b1.zip
check "S3 archive base: nothing stored again" bash -c "'$STITCH' info '$work/arch-b2' | grep -q 'size_of_entries: *0 '"
expect_exit 14 "read-only" -- "$STITCH" backup "$work/day1" s3://stitch/arch/b2.tar

# --- Damage: a data object of another length is BACKUP_DAMAGED, never other bytes -----------
"$STITCH" backup "$work/day1" s3://stitch/dmg/b1 >/dev/null 2>&1
printf 'short' >"$work/short"
curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$work/short" "$URL/stitch/dmg/b1/logs/app.log" ||
  bad "could not replace a data object"
expect_exit 20 "BACKUP_DAMAGED" -- "$STITCH" cat s3://stitch/dmg/b1 logs/app.log
mnt s3://stitch/dmg/b1 "$work/m5"
check "a damaged object reads as EIO" bash -c "! cat '$work/m5/logs/app.log' >/dev/null 2>&1"
check "the rest of that mount reads" cmp "$work/m5/db/part 1/data.bin" "$work/day1/db/part 1/data.bin"

# --- The block cache: repeated random reads stay off the network; a replaced object is never
# served from it. Requests are counted in radosgw's log (flushed up to a marker request).
"$STITCH" backup "$work/day1" s3://stitch/cache/b1 >/dev/null 2>&1
LOG=$work/rgw/client.rgw.log
data_gets() { grep -c 'GET /stitch/cache/b1/db/part%201/data.bin ' "$LOG"; }
flush_log() {
  local m=marker-$RANDOM$RANDOM
  s3api GET "stitch/$m" >/dev/null 2>&1
  for _ in $(seq 100); do grep -q "$m" "$LOG" && return; sleep 0.05; done
}
# random_reads DIR: 4 KiB O_DIRECT reads (past the page cache) in 5 different MiB of the file.
random_reads() {
  local k
  for k in 10 700 1500 2900 4500; do
    dd if="$1/db/part 1/data.bin" bs=4096 count=1 skip=$k iflag=direct 2>/dev/null
  done
}
export -f random_reads
flush_log
g0=$(data_gets)
mnt s3://stitch/cache/b1 "$work/m9"
random_reads "$work/m9" >"$work/r1"
fusermount3 -u "$work/m9"
flush_log
g1=$(data_gets)
mnt s3://stitch/cache/b1 "$work/m9"
random_reads "$work/m9" >"$work/r2"
fusermount3 -u "$work/m9"
flush_log
g2=$(data_gets)
check "first random reads GET the data ($((g1 - g0)) GETs)" [ $((g1 - g0)) -ge 5 ]
check "the same reads on a new mount come from the block cache ($((g2 - g1)) GETs)" \
  [ $((g2 - g1)) = 0 ]
check "cached reads are right" bash -c "random_reads '$work/day1' | cmp - '$work/r2'"
head -c 20000000 /dev/urandom >"$work/new.bin"
curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$work/new.bin" \
  "$URL/stitch/cache/b1/db/part%201/data.bin" || bad "could not replace a data object"
mkdir -p "$work/newtree/db/part 1"
cp "$work/new.bin" "$work/newtree/db/part 1/data.bin"
mnt s3://stitch/cache/b1 "$work/m9"
check "an object replaced behind the cache is read anew" \
  bash -c "random_reads '$work/m9' | cmp - <(random_reads '$work/newtree')"
fusermount3 -u "$work/m9"
check "verify finds the replaced object" bash -c "! '$STITCH' verify s3://stitch/cache/b1 >/dev/null 2>&1"

# --- The server killed during reads -------------------------------------------------------------
mnt s3://stitch/store/d2 "$work/m6"
check "listing before" ls -R "$work/m6" >/dev/null
bash "$RGW" kill-rgw "$work/rgw"
check "reads fail with EIO while the server is down" bash -c "! cat '$work/m6/logs/app.log' >/dev/null 2>&1"
check "the tree still lists (it comes from the manifest)" ls -lR "$work/m6" >/dev/null
bash "$RGW" start-rgw "$work/rgw" >/dev/null
check "reads recover when the server is back" cmp "$work/m6/logs/app.log" "$work/day2/logs/app.log"

# --- A backup killed in the middle leaves no .backup; the next one takes over -----------------
big=$work/bigsrc
mkdir -p "$big"
head -c 120000000 /dev/urandom >"$big/huge"
"$STITCH" backup "$big" s3://stitch/killed/b1 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
  s3api GET "stitch?prefix=killed%2F&uploads=" | grep -q UploadId && break
  sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
check "killed backup left no .backup" [ -z "$(keys killed/b1/.backup)" ]
expect_exit 0 "" -- "$STITCH" backup "$big" s3://stitch/killed/b1
check "the next backup took the dead one's place" \
  bash -c "'$STITCH' cat s3://stitch/killed/b1 huge | cmp - '$big/huge'"
check "no multipart upload left" bash -c "! s3api GET 'stitch?prefix=killed%2F&uploads=' | grep -q UploadId"
# --- A stale .lock never costs a whole backup or one nested under it ------------------------
# dead_lock KEY: a .lock of a writer of this machine that is gone (a process that exited).
dead_lock() {
  sh -c 'exit 0' &
  local gone=$!
  wait $gone
  printf 'uuid dead\nhost %s\nboot %s\npid %s\nstart 1\npidns %s\n' "$(hostname)" \
    "$(cat /proc/sys/kernel/random/boot_id)" "$gone" "$(readlink /proc/self/ns/pid)" \
    >"$work/lock.txt"
  s3api PUT "stitch/$1" -T "$work/lock.txt" >/dev/null
}
small=$work/day1
check "a complete backup" "$STITCH" backup "$small" s3://stitch/stale/whole
dead_lock stale/whole/.lock  # Its writer died after its manifest went in.
before=$(keys stale/whole/ | sort)
check "the stale .lock is there" [ -n "$(keys stale/whole/.lock)" ]
expect_exit 13 "its writer died" -- "$STITCH" backup "$small" s3://stitch/stale/whole
check "a complete backup with a stale .lock keeps every object" \
  [ "$before" = "$(keys stale/whole/ | sort)" ]
s3api DELETE stitch/stale/whole/.lock >/dev/null
check "and reads back whole" "$STITCH" verify s3://stitch/stale/whole
check "a backup nested under a partial one" "$STITCH" backup "$small" s3://stitch/stale/outer/inner
echo partial >"$work/partial.bin"
s3api PUT stitch/stale/outer/data/partial.bin -T "$work/partial.bin" >/dev/null
dead_lock stale/outer/.lock
expect_exit 0 "" -- "$STITCH" backup "$small" s3://stitch/stale/outer
check "taking the partial one over removed its objects" [ -z "$(keys stale/outer/data/partial.bin)" ]
check "but not the backup nested under it" "$STITCH" verify s3://stitch/stale/outer/inner
# --- Two writers take one dead writer's lock at once: exactly one wins ---------------------------
# (A takeover creates the lock's next generation, .lock.N, with If-None-Match: one create wins.)
wins=0
for round in 1 2 3 4 5; do
  dead_lock "race$round/b/.lock"
  s3api PUT "stitch/race$round/b/data/partial.bin" -T "$work/partial.bin" >/dev/null
  "$STITCH" backup "$work/day1" "s3://stitch/race$round/b" >"$work/race1.out" 2>&1 &
  p1=$!
  "$STITCH" backup "$work/day2" "s3://stitch/race$round/b" >"$work/race2.out" 2>&1 &
  p2=$!
  wait $p1
  r1=$?
  wait $p2
  r2=$?
  if [ "$r1" = 0 ] && [ "$r2" = 13 ]; then winner=day1; elif [ "$r1" = 13 ] && [ "$r2" = 0 ]; then
    winner=day2; else winner=""; fi
  check "race $round: exactly one writer wins (exits $r1, $r2: $(tail -1 "$work/race1.out") / $(tail -1 "$work/race2.out"))" \
    [ -n "$winner" ]
  [ -n "$winner" ] || continue
  wins=$((wins + 1))
  rm -rf "$work/race-r"
  check "race $round: the survivor verifies" bash -c "'$STITCH' verify 's3://stitch/race$round/b' >/dev/null"
  check "race $round: and holds the winner's files" bash -c "'$STITCH' restore 's3://stitch/race$round/b' '$work/race-r' >/dev/null 2>&1 && diff -r '$work/race-r' '$work/$winner'"
  check "race $round: no lock object is left" [ -z "$(keys "race$round/b/.lock")" ]
done
check "the loser's message says another writer took the lock" \
  bash -c "cat '$work/race1.out' '$work/race2.out' | grep -q 'took the dead writer.s lock first\|is being written\|has a .lock'"
# --- Ctrl-C (SIGINT) or SIGTERM during a backup: it unwinds and leaves nothing -----------------
for sig in INT TERM; do
  "$STITCH" backup "$big" "s3://stitch/stopped-$sig/b1" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 200); do
    s3api GET "stitch?prefix=stopped-$sig%2F&uploads=" | grep -q UploadId && break
    sleep 0.02
  done
  kill -$sig $pid
  wait $pid
  rc=$?
  check "SIG$sig stops the backup with an error (rc $rc)" [ "$rc" != 0 ]
  check "SIG$sig leaves no object" [ -z "$(keys "stopped-$sig/")" ]
  check "SIG$sig leaves no multipart upload" \
    bash -c "! s3api GET 'stitch?prefix=stopped-$sig%2F&uploads=' | grep -q UploadId"
done
finish
