#!/usr/bin/env bash
# stitch writes, a real ClickHouse (26.7, the library in npm chdb) restores. The source is a
# generated workload (tests/clickhouse/ch_lib.sh: 2 databases, every engine family, appends, a
# merge, a mutation, a lightweight DELETE over 4 rounds); after each round ClickHouse's own full
# BACKUP is restored by stitch into a ClickHouse-shaped tree, and stitch backs that tree up,
# full then incremental: with its default locators (absolute File()) and checksums (ClickHouse's,
# chosen for such a tree), with XXH3, relative to a backups root (--backups-root), and to S3 on a
# throwaway radosgw. ClickHouse then RESTOREs every one with no base_backup override, where
# backups.allowed_path is the store's own folder or a folder above it, and from S3 with the
# credentials given only in the RESTORE statement (none in ClickHouse's environment or home):
# every table's rows (count and a hash of every row) equal the live table's at that round.
# Also: a ClickHouse incremental BACKUP on a stitch base (it reuses the base's files), a stitch
# incremental on a ClickHouse base, a stitch flatten, and a stitch prune of a ClickHouse chain,
# each restored by ClickHouse.
# Through a mount: ClickHouse restores a point in time of a stitch chain (at/<time>, latest, a
# single backup), of an S3 chain and of a ClickHouse chain on a .tar.zst base, and the Backup
# database engine reads one, from the flat manifest the mount offers as `.backup`.
# Usage: ch_restores_test.sh STITCH STITCHFS RADOSGW_SH INSTALL_CLICKHOUSE_SH
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
source "$here/ch_lib.sh"
STITCH=$1
STITCHFS=$2
RGW=$3
INSTALL=$4
SECONDS=0
CHDB_MODULE=$(bash "$INSTALL" --quiet) || { echo "FAIL: ClickHouse (chdb) did not install"; exit 1; }
export CHDB_MODULE
W=$(mktemp -d)
export W
cleanup() {
  bash "$RGW" stop "$W/rgw" >/dev/null 2>&1
  rm -rf "$W"
  echo "ch_restores_test: $SECONDS s in all"
}
trap cleanup EXIT
export HOME=$W/home STITCH_CACHE_DIR=$W/cache STITCH_NO_PROGRESS=1 STITCH_S3_MAX_ATTEMPTS=3
mkdir -p "$HOME" "$W/hash" "$W/got"
bash "$RGW" start "$W/rgw" >/dev/null || { echo "FAIL: radosgw did not start"; exit 1; }
source "$W/rgw/env"
S3URL=$AWS_ENDPOINT_URL
ROUNDS=4
quiet() { "$@" >/dev/null 2>&1; }
TABLES="mt rmt amt lg tl sl mem"  # Set and Join: their data is in no backup (ClickHouse 26.7).

# hash_sql FILE: every table's row count and a hash of all its rows, into FILE.
hash_sql() {
  local db t sep="" q=""
  for db in $CH_DBS; do
    for t in $TABLES; do
      q+="$sep SELECT '$db.$t', count(), sum(cityHash64(*)) FROM $db.$t"
      sep=" UNION ALL"
    done
  done
  echo "SELECT * FROM ($q) ORDER BY 1 INTO OUTFILE '$1' FORMAT TSV;"
}

# The stitch side of round R (a script the workload runs between two statements): ClickHouse's
# full backup of the round restored into a tree, and that tree backed up four ways.
cat >"$W/round.sh" <<EOF
set -e
r=\$1
mkdir -p "$W/tree"
b() { [ "\$r" = 1 ] || echo "--base \$1/s\$((r - 1))"; }
"$STITCH" restore "$W/ch/full\$r" "$W/tree/\$r"
"$STITCH" backup "$W/tree/\$r" "$W/st/s\$r" \$(b "$W/st") --timestamp "2026-01-0\$r 12:00:00" \
  2>>"$W/stitch.log"
"$STITCH" backup "$W/tree/\$r" "$W/stx/s\$r" --checksum xxh3 \$(b "$W/stx") 2>>"$W/stitch.log"
"$STITCH" backup "$W/tree/\$r" "$W/root/st/s\$r" --backups-root "$W/root" \$(b "$W/root/st") \
  2>>"$W/stitch.log"
"$STITCH" backup "$W/tree/\$r" "s3://stitch/st/s\$r" \$(b s3://stitch/st) 2>>"$W/stitch.log"
EOF

# --- The source: ClickHouse's workload, stitch's backups between its statements --------------
{
  for db in $CH_DBS; do ch_create "$db"; done
  for r in $(seq 1 $ROUNDS); do
    for db in $CH_DBS; do ch_append "$db" "$r"; ch_change "$db" "$r"; done
    echo "BACKUP DATABASE d1, DATABASE d2 TO File('$W/ch/full$r');"
    base=""
    [ "$r" = 1 ] || base=" SETTINGS base_backup = File('chst/b$((r - 1))')"
    echo "BACKUP DATABASE d1, DATABASE d2 TO File('chst/b$r')$base;"  # For stitch prune.
    # A chain on an archive base, for the restore through a mount.
    base=""
    [ "$r" = 1 ] || base=" SETTINGS base_backup = File('$W/cha/b$((r - 1))$([ "$r" = 2 ] && echo .tar.zst)')"
    echo "BACKUP DATABASE d1, DATABASE d2 TO File('$W/cha/b$r$([ "$r" = 1 ] && echo .tar.zst)')$base;"
    hash_sql "$W/hash/$r.tsv"
    echo "!bash $W/round.sh $r;"
  done
  # ClickHouse's incremental backup on a base stitch wrote.
  echo "BACKUP DATABASE d1, DATABASE d2 TO File('$W/mixed/c4') SETTINGS base_backup = File('$W/st/s3');"
} >"$W/workload.sql"
t=$SECONDS
if ! node "$here/chsql.js" "$W/src" --backups.allowed_path="$W/" <"$W/workload.sql" \
  >"$W/ch.out" 2>"$W/ch.err"; then
  echo "FAIL: the workload failed:"
  cat "$W/ch.err" "$W/stitch.log"
  exit 1
fi
echo "workload, ClickHouse's backups and stitch's: $((SECONDS - t)) s"

# What stitch wrote: locators ClickHouse resolves without help, never a credential.
manifest() { cat "$W/$1/.backup"; }
check "default locator: the absolute path" grep -qF "<base_backup>File(&apos;$W/st/s1&apos;)" <(manifest st/s2)
check "default checksums for a ClickHouse-shaped tree: ClickHouse's" \
  bash -c "! grep -q '<stitchfs_checksum>' '$W/st/s2/.backup'"
check "--checksum xxh3 is kept" grep -q '<stitchfs_checksum>xxh3_128</stitchfs_checksum>' <(manifest stx/s2)
check "with --backups-root: relative to it" grep -qF "<base_backup>File(&apos;st/s1&apos;)" <(manifest root/st/s2)
s3man=$(curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$S3URL/stitch/st/s2/.backup")
check "S3: the base's URL without credentials" grep -qF "<base_backup>S3(&apos;$S3URL/stitch/st/s1&apos;)" <<<"$s3man"
check "S3: the credentials marker" grep -qF \
  "<base_backup_copy_s3_credentials_from_backup>true</base_backup_copy_s3_credentials_from_backup>" <<<"$s3man"
check "S3: no secret in the manifest" bash -c "! grep -q '$AWS_SECRET_ACCESS_KEY' <<<'$s3man'"
# ClickHouse's incremental on a stitch base reused the base (same checksums) and stitch reads it.
check "ClickHouse's incremental on stitch's base takes files from it" grep -q '<use_base>true</use_base>' <(manifest mixed/c4)
check "stitch verifies ClickHouse's incremental on its base" quiet "$STITCH" verify "$W/mixed/c4"

# --- stitch on ClickHouse's backups -------------------------------------------------------------
"$STITCH" backup "$W/tree/4" "$W/st/x4" --base "$W/ch/full3" 2>>"$W/stitch.log" ||
  bad "stitch incremental on a ClickHouse base"
"$STITCH" flatten "$W/st/s4" "$W/flat/s4" >/dev/null 2>>"$W/stitch.log" || bad "stitch flatten"
out=$("$STITCH" prune "$W/chst" --keep-last 2 2>&1) || bad "stitch prune of a ClickHouse chain: $out"
check "prune: b1, b2 removed, b3 flattened" bash -c "[ ! -e '$W/chst/b1' ] && [ ! -e '$W/chst/b2' ] && grep -q 'flatten b3' <<<'$out'"

# --- ClickHouse restores each, with nothing overridden -----------------------------------------
# restore_sql NAME LOCATOR: restore both databases from LOCATOR into an empty server, their
# hashes into got/NAME.tsv, then drop them.
restore_sql() {
  echo "RESTORE DATABASE d1, DATABASE d2 FROM $2;"
  hash_sql "$W/got/$1.tsv"
  echo "DROP DATABASE d1 SYNC;"
  echo "DROP DATABASE d2 SYNC;"
}
# restore_in ALLOWED_PATH SQL...: a fresh server whose backups root is ALLOWED_PATH runs them,
# with no AWS credentials in its environment (chsql.js drops AWS_* too) and an empty home.
restore_in() {
  local allowed=$1 data
  shift
  data=$(mktemp -d "$W/server.XXXX")
  printf '%s\n' "$@" | env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN \
    node "$here/chsql.js" "$data" --backups.allowed_path="$allowed" >>"$W/restore.out" \
    2>>"$W/restore.err" || bad "restore with allowed_path=$allowed: $(tail -3 "$W/restore.err")"
}
t=$SECONDS
sql=()
for r in $(seq 1 $ROUNDS); do
  sql+=("$(restore_sql "st-s$r" "File('$W/st/s$r')")")
  sql+=("$(restore_sql "s3-s$r" "S3('$S3URL/stitch/st/s$r', '$AWS_ACCESS_KEY_ID', '$AWS_SECRET_ACCESS_KEY')")")
done
restore_in "$W/st/" "${sql[@]}"  # The store's own folder as the backups root.
sql=()
for r in $(seq 1 $ROUNDS); do sql+=("$(restore_sql "root-s$r" "File('st/s$r')")"); done
restore_in "$W/root/" "${sql[@]}"
restore_in "$W/" "$(restore_sql stx-s4 "File('$W/stx/s4')")" "$(restore_sql x4 "File('$W/st/x4')")" \
  "$(restore_sql c4 "File('$W/mixed/c4')")" "$(restore_sql flat4 "File('$W/flat/s4')")" \
  "$(restore_sql chst-b3 "File('chst/b3')")" "$(restore_sql chst-b4 "File('chst/b4')")"
# The control: without the statement's credentials the same restore is refused, so the S3
# restores above were signed with those alone.
data=$(mktemp -d "$W/server.XXXX")
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY node "$here/chsql.js" "$data" \
  -q "RESTORE DATABASE d1 FROM S3('$S3URL/stitch/st/s2')" >/dev/null 2>"$W/unsigned.err"
check "control: an S3 restore without the statement's credentials is refused" \
  grep -qE 'ACCESS_DENIED|403|Access Denied' "$W/unsigned.err"
echo "ClickHouse's restores: $((SECONDS - t)) s"

# --- ClickHouse restores any point in time straight through a mount ---------------------------
# The mount offers each backup's manifest as one full backup (a hidden `.backup`), so RESTORE
# ... FROM File('<mount>/at/<time>') reads a point of a chain of any depth, copied nowhere.
if [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
  M=$W/mnt
  mounted=()
  trap 'unmount_all "${mounted[@]}"; cleanup' EXIT
  mount_at() {  # mount_at NAME BACKUP|STORE [OPTION...]
    mkdir -p "$M/$1"
    mounted+=("$M/$1")
    "$STITCHFS" "${@:2}" "$M/$1" || bad "stitchfs ${*:2} $M/$1"
  }
  mount_at st "$W/st"
  mount_at s3 s3://stitch/st
  mount_at cha "$W/cha"
  mount_at one "$W/st/s3"
  mount_at nm "$W/st/s3" -o nomanifest
  check "the manifest is not listed: diff -r of a mounted backup and its source" diff -r "$M/one" "$W/tree/3"
  check "the manifest is there by name" test -s "$M/one/.backup"
  check "-o nomanifest: no .backup" test ! -e "$M/nm/.backup"
  uuid3=$(sed -n 's/.*<uuid>\([^<]*\)<.*/\1/p' "$W/cha/b3/.backup")
  t=$SECONDS
  restore_in "$M/" "$(restore_sql mnt-at2 "File('$M/st/at/2026-01-02T12:30')")" \
    "$(restore_sql mnt-latest "File('$M/st/latest')")" "$(restore_sql mnt-one "File('$M/one')")" \
    "$(restore_sql mnt-s3 "File('$M/s3/by-uuid/$(sed -n 's/.*<uuid>\([^<]*\)<.*/\1/p' "$M/s3/s2/.backup")')")" \
    "$(restore_sql mnt-cha3 "File('$M/cha/by-uuid/$uuid3')")" \
    "CREATE DATABASE bke ENGINE = Backup('d1', File('$M/st/latest'));" \
    "SELECT name FROM system.tables WHERE database = 'bke' ORDER BY name INTO OUTFILE '$W/got/bke-tables.tsv' FORMAT TSV;" \
    "SELECT 'd1.mt', count(), sum(cityHash64(*)) FROM bke.mt INTO OUTFILE '$W/got/bke-mt.tsv' FORMAT TSV;"
  echo "ClickHouse's restores through mounts: $((SECONDS - t)) s"
  for x in "mnt-at2 2" "mnt-latest 4" "mnt-one 3" "mnt-s3 2" "mnt-cha3 3"; do
    read -r name round <<<"$x"
    check "ClickHouse restores $name (through the mount): every table's rows as at round $round" \
      diff "$W/hash/$round.tsv" "$W/got/$name.tsv"
  done
  # The Backup database engine attaches the MergeTree family only (ClickHouse 26.7).
  check "Backup engine on a mounted backup: its MergeTree tables" \
    test "$(tr '\n' ' ' <"$W/got/bke-tables.tsv")" = "amt mt rmt "
  check "Backup engine on a mounted backup: d1.mt's rows" grep -qxF "$(cat "$W/got/bke-mt.tsv")" "$W/hash/4.tsv"
  unmount_all "${mounted[@]}"
else
  echo "SKIP: no /dev/fuse: the restores through a mount"
fi

same_rows() {  # same_rows NAME ROUND
  check "ClickHouse restores $1: every table's rows as at round $2" diff "$W/hash/$2.tsv" "$W/got/$1.tsv"
}
for r in $(seq 1 $ROUNDS); do
  same_rows "st-s$r" "$r"
  same_rows "s3-s$r" "$r"
  same_rows "root-s$r" "$r"
done
same_rows stx-s4 4
same_rows x4 4
same_rows c4 4
same_rows flat4 4
same_rows chst-b3 3
same_rows chst-b4 4
check "the rows are not trivially equal (round 4 has more than round 1)" \
  bash -c "! diff -q '$W/hash/1.tsv' '$W/hash/4.tsv' >/dev/null"
finish
