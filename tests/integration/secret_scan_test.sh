#!/usr/bin/env bash
# No credential leaves the process: every command runs against a real S3 server (radosgw) whose
# user's secret is a marker, on a chain whose ClickHouse-written level carries that secret in its
# base locator (`S3('url', 'key', 'secret')`, as ClickHouse wrote before mid-2026): backups
# (full, incremental, local and S3), verify, info, ls, cat, restore, diff, log, flatten, prune,
# a store mount and a single mount read through, and the failures (a base locator that does
# not parse, credentials in a URL, an endpoint or a mount option, a presigned query, a refused
# secret). Then every file written (the stores, the S3 objects, the per-user caches, every
# command's stdout and stderr) and the running daemons' /proc/PID/cmdline are searched for the
# marker. Also: the caches' files are 0600 in 0700 folders, a too-open cache folder is
# tightened, one of another user is refused with a message.
# Usage: secret_scan_test.sh STITCH STITCHFS RADOSGW_SH
# Exits 77 (skipped) where FUSE or radosgw cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
STITCHFS=$2
RGW=$3
export STITCH_NO_PROGRESS=1
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null || ! command -v radosgw >/dev/null; then
  echo "SKIP: no /dev/fuse, fusermount3 or radosgw"
  exit 77
fi
work=$(mktemp -d)
mounts=()
pids=()
cleanup() {
  unmount_all "${mounts[@]}"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  bash "$RGW" stop "$work/rgw" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/rgw"
bash "$RGW" start "$work/rgw" >/dev/null || { echo "FAIL: radosgw did not start"; exit 1; }
source "$work/rgw/env"
URL=$AWS_ENDPOINT_URL
HOSTPORT=${URL#http://}
MARKER=SECRETMARKER-q7Zx3
SECRET="$MARKER-$RANDOM$RANDOM"
KEY=MARKERKEY$RANDOM
# A user whose secret is the marker, and a bucket of its own: the environment's secret, a
# locator's secret and a wrong secret all carry the marker, so any of them shown is found.
CEPH_CONF=$STITCH_RGW_DIR/ceph.conf radosgw-admin user create --uid marker --display-name marker \
  --access-key "$KEY" --secret-key "$SECRET" >/dev/null 2>&1 || { echo "FAIL: user create"; exit 1; }
export AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET
s3api() {
  curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$KEY:$SECRET" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X "$1" "$URL/$2" "${@:3}"
}
s3api PUT mkb >/dev/null || { echo "FAIL: bucket mkb"; exit 1; }
export HOME=$work/home STITCH_S3_MAX_ATTEMPTS=2 STITCH_S3_CACHE_MB=64
unset STITCH_CACHE_DIR XDG_CACHE_HOME
mkdir -p "$HOME" "$work/logs" "$work/secret"
CACHE=$HOME/.cache/stitchfs
L=$work/local    # A local store.
L2=$work/local2  # Flattened copies.
mkdir -p "$L" "$L2"

# run NAME CMD...: CMD with its stdout and stderr kept in logs/NAME.{out,err}; its exit code.
run() {
  local name=$1
  shift
  "$@" >"$work/logs/$name.out" 2>"$work/logs/$name.err"
}
# runs NAME CMD...: run, which must succeed.
runs() {
  local name=$1
  run "$@" || bad "$name failed: $(head -c 600 "$work/logs/$name.err")"
}
# refused NAME CODE PART CMD...: run, which must exit CODE with PART on stderr.
refused() {
  local name=$1 code=$2 part=$3 rc
  shift 3
  run "$name" "$@"
  rc=$?
  [ "$rc" = "$code" ] || { bad "$name: exit $rc, not $code: $(head -c 600 "$work/logs/$name.err")"; return; }
  grep -qF -- "$part" "$work/logs/$name.err" ||
    bad "$name: stderr lacks '$part': $(head -c 600 "$work/logs/$name.err")"
  ok
}

# --- A ClickHouse-style level whose base locator carries the secret --------------------------
src=$work/src
mkdir -p "$src/logs" "$src/many"
head -c 300000 /dev/urandom >"$src/logs/app.log"
echo config >"$src/cfg.txt"
runs full_s3 "$STITCH" backup "$src" s3://mkb/store/b1
head -c 1000 /dev/urandom >>"$src/logs/app.log"
long=$(printf 'n%.0s' $(seq 200))
for i in $(seq 3000); do echo "$i" >"$src/many/$long$i"; done  # A manifest over 1 MiB: cached.
runs ch "$STITCH" backup "$src" "$L/ch" --base s3://mkb/store/b1
rm -rf "$L/ch/.stitchfs"
sed -i "s|<base_backup>[^<]*</base_backup>|<base_backup>S3(\&apos;$URL/mkb/store/b1\&apos;, \&apos;$KEY\&apos;, \&apos;$SECRET\&apos;)</base_backup>|" "$L/ch/.backup"
check "the ClickHouse-style level carries the secret" grep -q "$MARKER" "$L/ch/.backup"
check "its manifest is large enough to be cached" [ "$(stat -c %s "$L/ch/.backup")" -gt 1100000 ]
check "the locator's credentials are used" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
  bash -c "'$STITCH' cat '$L/ch' logs/app.log | cmp -s - '$src/logs/app.log'"

# --- Backups on it: full, incremental, local and S3 -------------------------------------------
runs full_local "$STITCH" backup "$src" "$L/full" --timestamp "2026-01-01 00:00:00"
head -c 1000 /dev/urandom >>"$src/logs/app.log"
runs inc_local "$STITCH" backup "$src" "$L/inc" --base "$L/ch"
runs inc_s3 "$STITCH" backup "$src" s3://mkb/st2/inc --base "$L/ch"
cp "$src/logs/app.log" "$work/app.log.inc"
check "inc keeps an index" [ -s "$L/inc/.stitchfs/index" ]
# Opened from its index, which keeps ch's locator without its credentials: they are read again
# from ch's .backup, and b1 (in S3) is read with them alone.
check "a chain opened from its index still signs with the locator's credentials" \
  env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
  bash -c "'$STITCH' cat '$L/inc' logs/app.log | cmp -s - '$work/app.log.inc'"
stats=$(STITCH_S3_STATS=1 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
  "$STITCH" ls "$L/inc" 2>&1 >/dev/null | grep -o 'requests [0-9]*')
check "the index is trusted: one S3 request, b1's HEAD, signed ($stats)" [ "$stats" = "requests 1" ]
head -c 1000 /dev/urandom >>"$src/logs/app.log"
runs inc_s3_2 "$STITCH" backup "$src" s3://mkb/st2/inc2 --base s3://mkb/st2/inc
cp "$src/logs/app.log" "$work/app.log.inc2"
runs user_locator "$STITCH" backup "$src" s3://mkb/st3/u1 \
  --base "S3('$URL/mkb/store/b1', '$KEY', '$SECRET')"

# --- Every reading command, local and S3 -------------------------------------------------------
for b in "$L/inc" "$L/ch" s3://mkb/st2/inc2 s3://mkb/st3/u1; do
  n=$(echo "$b" | tr -c 'a-z0-9\n' _)
  runs "verify$n" "$STITCH" verify "$b"
  runs "info$n" "$STITCH" info "$b"
  runs "infojson$n" "$STITCH" info --json "$b"
  runs "ls$n" "$STITCH" ls -R -l "$b"
  runs "cat$n" "$STITCH" cat "$b" logs/app.log
  runs "restore$n" "$STITCH" restore "$b" "$work/restored$n"
done
check "cat reads the chain" cmp -s "$work/logs/cats3___mkb_st2_inc2.out" "$work/app.log.inc2"
runs diff_local "$STITCH" diff "$L/ch" "$L/inc"
runs diff_s3 "$STITCH" diff "$L/ch" s3://mkb/st2/inc2
runs log_local "$STITCH" log "$L"
runs log_s3 "$STITCH" log --json s3://mkb/st2
runs flatten_local "$STITCH" flatten "$L/inc" "$L2/flat"
runs flatten_s3 "$STITCH" flatten s3://mkb/st2/inc2 s3://mkb/flat/inc2

# --- Mounts: a store and a single backup, read through; their command lines ------------------
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$KEY" "$SECRET" \
  >"$work/secret/creds"
chmod 600 "$work/secret/creds"
# mount_bg NAME DIR CMD...: CMD (a foreground stitchfs on DIR) with its logs kept, in the
# background; waits until DIR is mounted.
mount_bg() {
  local name=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  mounts+=("$dir")
  "$@" >"$work/logs/$name.out" 2>"$work/logs/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do mountpoint -q "$dir" && return 0; sleep 0.1; done
  bad "$name did not mount: $(head -c 600 "$work/logs/$name.err")"
  return 1
}
mount_bg mount_store "$work/m1" "$STITCHFS" "$L" "$work/m1" -f
store_pid=${pids[-1]}
mount_bg mount_single "$work/m2" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
  "$STITCHFS" s3://mkb/st2/inc2 "$work/m2" -f -o "s3_credentials=$work/secret/creds"
single_pid=${pids[-1]}
check "a read through the store mount" cmp -s "$work/m1/inc/logs/app.log" "$work/app.log.inc"
check "a read through the store mount's ClickHouse level" \
  bash -c "head -c 300000 '$work/m1/ch/logs/app.log' | cmp -s - <(head -c 300000 '$src/logs/app.log')"
for skip in 70 3 40 11; do  # Random reads: kept in the S3 block cache.
  dd if="$work/m2/logs/app.log" of=/dev/null bs=4096 skip=$skip count=1 status=none ||
    bad "a random read through the single mount"
done
check "a read through the single mount" cmp -s "$work/m2/logs/app.log" "$work/app.log.inc2"
for p in "$store_pid" "$single_pid"; do
  check "the daemon $p runs" [ -r "/proc/$p/cmdline" ]
  check "no marker in the daemon's command line" bash -c "! grep -qa '$MARKER' /proc/$p/cmdline"
done

# --- Failures ----------------------------------------------------------------------------------
mkdir -p "$work/bad"
cp "$L/ch/.backup" "$work/bad/.backup"
sed -i "s|<base_backup>[^<]*</base_backup>|<base_backup>S3(\&apos;$URL/mkb/store/b1\&apos;, \&apos;$KEY\&apos;, \&apos;$SECRET</base_backup>|" "$work/bad/.backup"
for f in "$L/ch"/*; do [ "$(basename "$f")" = .backup ] || cp -a "$f" "$work/bad/"; done
refused bad_locator 20 "$work/bad" "$STITCH" verify "$work/bad"
refused bad_locator_cat 20 BACKUP_DAMAGED "$STITCH" cat "$work/bad" logs/app.log
refused bad_locator_info 20 "S3(...)" "$STITCH" info "$work/bad"
refused userinfo_http 2 AWS_ACCESS_KEY_ID "$STITCH" ls "http://$KEY:$SECRET@$HOSTPORT/mkb/store/b1"
refused userinfo_s3 2 AWS_ACCESS_KEY_ID "$STITCH" ls "s3://$KEY:$SECRET@mkb/store/b1"
refused userinfo_base 2 AWS_ACCESS_KEY_ID "$STITCH" backup "$src" "$L/x" \
  --base "http://$KEY:$SECRET@$HOSTPORT/mkb/store/b1"
refused userinfo_locator 2 AWS_ACCESS_KEY_ID "$STITCH" ls "S3('http://$KEY:$SECRET@$HOSTPORT/mkb/store/b1')"
refused presigned 2 "query" "$STITCH" ls "$URL/mkb/store/b1?X-Amz-Signature=$SECRET"
refused endpoint_env 2 AWS_ENDPOINT_URL env "AWS_ENDPOINT_URL=http://$KEY:$SECRET@$HOSTPORT" \
  "$STITCH" ls s3://mkb/store/b1
refused access_denied 15 ACCESS_DENIED env "AWS_SECRET_ACCESS_KEY=$SECRET-wrong" \
  "$STITCH" ls s3://mkb/store/b1
mkdir -p "$work/m3" "$work/m4"
refused mount_userinfo 2 AWS_ACCESS_KEY_ID timeout 20 "$STITCHFS" \
  "http://$KEY:$SECRET@$HOSTPORT/mkb/store/b1" "$work/m3" -f
refused mount_endpoint 2 s3_credentials timeout 20 "$STITCHFS" s3://mkb/store/b1 "$work/m4" -f \
  -o "s3_endpoint=http://$KEY:$SECRET@$HOSTPORT"
unmount_all "$work/m3" "$work/m4"

# --- Caches: private, tightened, or refused ------------------------------------------------------
check "cache folders are 0700" [ -z "$(find "$CACHE" -type d ! -perm 700)" ]
check "cache files are 0600" [ -z "$(find "$CACHE" -type f ! -perm 600)" ]
check "the manifest cache was used" [ -n "$(find "$CACHE" -name '*.manifest')" ]
check "the index cache was used" [ -n "$(find "$CACHE" -name '*.index')" ]
check "the S3 block cache was used" [ -n "$(find "$CACHE/s3-blocks" -type f)" ]
open_home=$work/openhome
mkdir -p "$open_home/.cache/stitchfs/s3-blocks"
chmod 755 "$open_home/.cache/stitchfs" "$open_home/.cache/stitchfs/s3-blocks"
runs open_cache env HOME="$open_home" "$STITCH" cat "$L/inc" logs/app.log
check "a too-open cache folder is tightened" \
  [ "$(stat -c %a "$open_home/.cache/stitchfs")" = 700 ]
if [ "$(id -u)" = 0 ]; then
  other_home=$work/otherhome
  mkdir -p "$other_home/.cache/stitchfs"
  chown 65534 "$other_home/.cache/stitchfs"
  runs other_cache env HOME="$other_home" "$STITCH" cat "$L/inc" logs/app.log
  check "a cache folder of another user is refused with a message" \
    grep -q "cache" "$work/logs/other_cache.err"
  check "nothing is written into it" [ -z "$(ls -A "$other_home/.cache/stitchfs")" ]
fi

# dump_s3 DIR: every object of the bucket into DIR, but the data of the many small files (their
# bytes are the source's numbers).
urlencode() {
  local s=$1 out= c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in [a-zA-Z0-9.~_-]) out+=$c ;; *) printf -v c '%%%02X' "'$c"; out+=$c ;; esac
  done
  echo "$out"
}
dump_s3() {
  local token= page
  while :; do  # (The query sorted: curl signs it as written.)
    page=$(s3api GET "mkb?${token:+continuation-token=$(urlencode "$token")&}list-type=2")
    echo "$page" | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g' | grep -v "/many/n" |
      while read -r key; do
        mkdir -p "$(dirname "$1/$key")"
        s3api GET "mkb/$key" -o "$1/$key" || bad "download $key"
      done
    token=$(echo "$page" | grep -o '<NextContinuationToken>[^<]*' | sed 's/.*>//')
    [ -n "$token" ] || break
  done
}

# --- Prune (after the reads: it removes and rewrites; what was there before is kept to search)
unmount_all "${mounts[@]}"
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
cp -a "$L" "$work/before_prune"
dump_s3 "$work/s3dump/before"
check "the S3 indexes were fetched" [ -n "$(find "$work/s3dump" -path '*.stitchfs/index')" ]
check "the local indexes are there" [ -s "$work/before_prune/inc/.stitchfs/index" ]
runs prune_s3 "$STITCH" prune s3://mkb/st2 --keep-last 1
check "the pruned S3 store reads" bash -c \
  "'$STITCH' cat s3://mkb/st2/inc2 logs/app.log | cmp -s - '$work/app.log.inc2'"
runs prune_local "$STITCH" prune "$L" --keep-last 1
check "the pruned local store reads" bash -c \
  "'$STITCH' cat '$L/inc' logs/app.log | cmp -s - '$work/app.log.inc'"

# --- The search --------------------------------------------------------------------------------
dump_s3 "$work/s3dump/after"
check "the S3 objects were fetched" [ -n "$(find "$work/s3dump" -type f)" ]
# The files the test itself wrote with the secret (what ClickHouse would have written).
leaks=$(grep -rlaF "$MARKER" "$L" "$L2" "$work/before_prune" "$HOME" "$open_home" "$work/logs" \
  "$work/s3dump" "$work"/restored* 2>/dev/null |
  grep -vxF -e "$L/ch/.backup" -e "$work/before_prune/ch/.backup" -e "$work/bad/.backup")
if [ -n "$leaks" ]; then
  bad "the marker secret is in: $(echo "$leaks" | tr '\n' ' ')"
  while read -r f; do
    echo "  $f: $(grep -aoE ".{0,60}$MARKER" "$f" | head -1)"
  done <<<"$leaks"
else
  ok
fi
finish
