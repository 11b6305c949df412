#!/usr/bin/env bash
# The backup forms current ClickHouse (25-26) writes, built by make_fixture from the format
# rules with ClickHouse checksums: files named by checksum, ON CLUSTER, plain backups, S3 and
# Azure base locators, lightweight snapshots and the packed version 3; each read, mounted and
# compared with its expected tree, and shown by `stitch info`.
# Usage: layouts_test.sh STITCH STITCHFS MAKE_FIXTURE
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
STITCHFS=$2
MAKE_FIXTURE=$3
export STITCH_NO_PROGRESS=1
fuse=1
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then fuse=0; fi
work=$(mktemp -d)
export STITCH_CACHE_DIR=$work/cache
mounts=()
cleanup() {
  unmount_all "${mounts[@]}"
  rm -rf "$work"
}
trap cleanup EXIT
# same BACKUP NAME [args]: restore and (where FUSE works) mount BACKUP, both equal to
# expected/NAME.
same() {
  local backup=$1 name=$2
  shift 2
  rm -rf "$work/out"
  check "$name restore" "$STITCH" restore "$backup" "$work/out" "$@" >/dev/null
  check "$name restored tree" diff -r "$work/out" "$work/fx/expected/$name"
  check "$name verify" "$STITCH" verify "$backup" "$@" >/dev/null
  [ $fuse = 1 ] || return 0
  local m=$work/m-$name opts=()
  [ $# -ge 2 ] && [ "$1" = --base ] && opts=(-o "base=$2")
  mkdir -p "$m"
  mounts+=("$m")
  "$STITCHFS" "$backup" "$m" "${opts[@]}" && check "$name mount" diff -r "$m" "$work/fx/expected/$name"
  fusermount3 -u "$m"
}
info_says() {  # info_says WHAT PATTERN BACKUP [args]
  local what=$1 pattern=$2
  shift 2
  check "$what" bash -c '"$@" | grep -q -- "$0"' "$pattern" "$STITCH" info "$@"
}

"$MAKE_FIXTURE" layouts "$work/fx" >/dev/null || { echo "make_fixture failed"; exit 1; }
fx=$work/fx
# Files named by their checksums (hex[:3]/hex[3:]), and an incremental on them.
check "checksum-named data files" bash -c "ls '$fx/checksum' | grep -qE '^[0-9a-f]{3}$'"
same "$fx/checksum" checksum
same "$fx/checksum-inc" checksum-inc
info_says "info: generator" "named by checksum (data_file_name_generator)" "$fx/checksum"
info_says "info: backup_id" "backup_id: *nightly-2026-11-01" "$fx/checksum"
check "json: backup_id" bash -c "'$STITCH' info --json '$fx/checksum' | grep -q '\"backup_id\":\"nightly-2026-11-01\"'"
# The same in archives.
(cd "$fx/checksum" && zip -qr "$work/checksum.zip" .)
mkdir -p "$work/fx/expected/checksum-zip" && cp -a "$fx/expected/checksum/." "$work/fx/expected/checksum-zip/"
same "$work/checksum.zip" checksum-zip
# ON CLUSTER: shards/N/replicas/M/, a data file in another host's subtree.
same "$fx/cluster" cluster
info_says "info: on cluster" "on cluster: *2 shard(s), 2 replica(s)" "$fx/cluster"
# Plain: every file under its own name, empty files present.
same "$fx/plain" plain
info_says "info: plain" "deduplicate_files: 0" "$fx/plain"
# S3 base without credentials, with the copy-credentials marker; Azure base; both by --base.
same "$fx/s3base" s3base --base "$fx/checksum"
info_says "info: S3 base shown" "base_backup: *S3('https://backups.s3.eu-west-1.amazonaws.com/ch/nightly-1')" "$fx/s3base" --base "$fx/checksum"
info_says "info: copy credentials" "base credentials: *this backup's" "$fx/s3base" --base "$fx/checksum"
expect_exit 14 "AzureBlobStorage(...)" -- "$STITCH" info "$fx/azure"
same "$fx/azure" azure --base "$fx/checksum"
check "info hides the Azure key" bash -c "! '$STITCH' info '$fx/azure' --base '$fx/checksum' | grep -q c2VjcmV0"
# Version 3 (packed) is refused, saying why.
expect_exit 11 "packed backup" -- "$STITCH" info "$fx/packed"
expect_exit 11 "not in a release yet" -- "$STITCH" ls "$fx/packed"
# A lightweight snapshot whose object storage cannot be reached: listed; reading names it.
export AWS_ACCESS_KEY_ID=k AWS_SECRET_ACCESS_KEY=s STITCH_S3_MAX_ATTEMPTS=1
"$MAKE_FIXTURE" lightweight "$work/lw" "http://127.0.0.1:9" bucket1 >/dev/null
check "lightweight: ls" bash -c "'$STITCH' ls -R '$work/lw/lw' | grep -q count.txt"
info_says "info: lightweight" "2 file(s) in bucket bucket1 at http://127.0.0.1:9" "$work/lw/lw"
check "lightweight: stored file reads" bash -c "'$STITCH' cat '$work/lw/lw' metadata/db/t.sql | cmp -s - '$work/lw/expected/lw/metadata/db/t.sql'"
expect_exit 1 "http://127.0.0.1:9/bucket1" -- "$STITCH" cat "$work/lw/lw" data/db/t/all_1_1_0/count.txt
sed -i 's|<data_file>[^<]*</data_file>||; s|</name><size>|</name><data_file>.stitchfs/object/6869/x</data_file><size>|' "$fx/plain/.backup"
expect_exit 23 "reserves" -- "$STITCH" ls "$fx/plain"
finish
