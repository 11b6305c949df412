#!/usr/bin/env bash
# Helpers of ch_writes_test.sh (sourced; `bash ch_lib.sh snapshot ...` runs ch_snapshot, which
# the workload calls between two statements). Everything lives under $W:
#   $W/cfg.xml   the ClickHouse configuration: disk `backups` at $W/disk/, File() under $W/bk/
#   $W/data      ClickHouse's data folder          $W/ref/N   the live files at backup N
#   $W/bk/...    File() backups                    $W/disk/st/bN   Disk('backups', 'st/bN')
CH_DBS="d1 d2"
CH_FORMS="abs rel daily disk tar tgz tzst s3"

# ch_config FILE: ClickHouse's configuration (the one stitch is given by --clickhouse-config).
ch_config() {
  cat >"$1" <<EOF
<clickhouse>
  <storage_configuration><disks><backups><type>local</type><path>$W/disk/</path></backups></disks></storage_configuration>
  <backups><allowed_disk>backups</allowed_disk><allowed_path>$W/bk/</allowed_path></backups>
</clickhouse>
EOF
}

# ch_dest FORM N: where backup N of FORM goes, as ClickHouse's BACKUP ... TO takes it.
# $S3URL is radosgw's address (http://127.0.0.1:PORT).
ch_dest() {
  local n=$2 arch=""
  case $1 in
    abs) echo "File('$W/bk/abs/b$n')" ;;
    rel) echo "File('b$n')" ;;
    daily) echo "File('daily/b$n')" ;;
    disk) echo "Disk('backups', 'st/b$n')" ;;
    tar | tgz | tzst)
      [ "$n" = 1 ] && arch=$(ch_archive_ext "$1")
      echo "File('$W/bk/$1/b$n$arch')" ;;
    s3) echo "S3('$S3URL/stitch/ch/b$n', 'stitchtest', 'stitchtestsecret')" ;;
  esac
}
ch_archive_ext() { case $1 in tar) echo .tar ;; tgz) echo .tar.gz ;; tzst) echo .tar.zst ;; esac; }

# ch_path FORM N: the same backup as stitch names it.
ch_path() {
  local n=$2
  case $1 in
    rel) echo "$W/bk/b$n" ;;
    disk) echo "$W/disk/st/b$n" ;;
    s3) echo "s3://stitch/ch/b$n" ;;
    tar | tgz | tzst) [ "$n" = 1 ] && echo "$W/bk/$1/b1$(ch_archive_ext "$1")" || echo "$W/bk/$1/b$n" ;;
    *) echo "$W/bk/$1/b$n" ;;
  esac
}
# ch_store FORM: the folder (or S3 prefix) that holds FORM's backups.
ch_store() { local p; p=$(ch_path "$1" 2); echo "${p%/b2}"; }

# ch_stitch_opts FORM / ch_mount_opts FORM: how stitch is told where bases are. The Disk form
# and the root-relative File('bN') form get ClickHouse's configuration; the others nothing (the
# subfolder form File('daily/bN') must be found by searching the folders above the backup).
ch_stitch_opts() { case $1 in disk | rel) echo "--clickhouse-config $W/cfg.xml" ;; esac; }
ch_mount_opts() { case $1 in disk | rel) echo "-o clickhouse_config=$W/cfg.xml" ;; esac; }

# --- The workload -------------------------------------------------------------------------------
# Merge-family tables have their background merges stopped, so that the parts a snapshot copies
# are the parts the next BACKUP takes; a merge or mutation is run with merges started.
CH_MERGING="mt rmt amt"

ch_create() {  # ch_create DB
  local db=$1
  cat <<EOF
CREATE DATABASE $db;
CREATE TABLE $db.mt (k UInt64, p UInt8, v UInt64, s String,
  PROJECTION by_p (SELECT p, sum(v) GROUP BY p))
  ENGINE = MergeTree PARTITION BY p ORDER BY k
  SETTINGS lightweight_mutation_projection_mode = 'rebuild';
CREATE TABLE $db.rmt (k UInt64, ver UInt32, s String) ENGINE = ReplacingMergeTree(ver) ORDER BY k;
CREATE TABLE $db.amt (g UInt16, c AggregateFunction(count), sv AggregateFunction(sum, UInt64))
  ENGINE = AggregatingMergeTree ORDER BY g;
CREATE TABLE $db.lg (k UInt64, s String, f Float64) ENGINE = Log;
CREATE TABLE $db.tl (k UInt64, s String, f Float64) ENGINE = TinyLog;
CREATE TABLE $db.sl (k UInt64, s String, f Float64) ENGINE = StripeLog;
CREATE TABLE $db.st (k UInt64) ENGINE = Set;
CREATE TABLE $db.jn (k UInt64, s String) ENGINE = Join(ANY, LEFT, k);
CREATE TABLE $db.mem (k UInt64, s String) ENGINE = Memory;
EOF
  for t in $CH_MERGING; do echo "SYSTEM STOP MERGES $db.$t;"; done
}

# ch_append DB ROUND: rows into every table, random-ish but the same on every run (cityHash64
# of numbers() with a seed from the database and the round).
ch_append() {
  local db=$1 r=$2 seed=$((${1#d} * 1000 + $2)) rows=$((1500 + $2 * 300))
  local n="FROM numbers($rows)" k="number + $r * 1000000" h="cityHash64(number, $seed)"
  cat <<EOF
INSERT INTO $db.mt SELECT $k, $h % 4, $h % 100000, hex($h) $n;
INSERT INTO $db.rmt SELECT $h % 3000, $r, hex($h) $n;
INSERT INTO $db.amt SELECT $h % 200 AS g, countState(), sumState(number) $n GROUP BY g;
INSERT INTO $db.lg SELECT $k, repeat(hex($h), 1 + $h % 4), $h / 7 $n;
INSERT INTO $db.tl SELECT $k, hex($h), $h / 3 $n;
INSERT INTO $db.sl SELECT $k, hex($h), $h / 5 $n;
INSERT INTO $db.st SELECT $h % 50000 $n;
INSERT INTO $db.jn SELECT $k, hex($h) $n;
INSERT INTO $db.mem SELECT $k, hex($h) $n;
EOF
}
ch_merges() {  # ch_merges START|STOP DB
  for t in $CH_MERGING; do echo "SYSTEM $1 MERGES $2.$t;"; done
}

# ch_change DB ROUND: what happens to DB in a round besides the appends: round 3 a merge,
# round 4 a mutation, round 5 a lightweight DELETE.
ch_change() {
  local db=$1
  case $2 in
    3) ch_merges START "$db"
       for t in $CH_MERGING; do echo "OPTIMIZE TABLE $db.$t FINAL;"; done
       ch_merges STOP "$db" ;;
    4) ch_merges START "$db"
       echo "ALTER TABLE $db.mt UPDATE s = concat(s, 'u') WHERE k % 7 = 0 SETTINGS mutations_sync = 2;"
       ch_merges STOP "$db" ;;
    5) ch_merges START "$db"
       echo "DELETE FROM $db.mt WHERE k % 11 = 0;"
       echo "DELETE FROM $db.rmt WHERE k % 13 = 0;"
       ch_merges STOP "$db" ;;
  esac
}

# ch_snapshot_sql ROUND: the live files of every table copied into $W/ref/ROUND (ch_snapshot).
ch_snapshot_sql() {
  local dbs="'d1', 'd2'" lib
  lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ch_lib.sh
  cat <<EOF
SELECT * FROM (SELECT database, table, 'part', path FROM system.parts
                 WHERE active AND database IN ($dbs)
               UNION ALL SELECT database, name, engine,
                   arrayJoin(if(empty(data_paths), [''], data_paths)) FROM system.tables
                 WHERE database IN ($dbs))
  INTO OUTFILE '$W/snap/r$1.tsv' FORMAT TSV;
!W=$W bash $lib snapshot $W/snap/r$1.tsv $W/ref/$1;
EOF
}

# ch_workload ROUNDS: the whole workload, one statement per line group, for one chsql.js run.
# After each round's changes: a snapshot, then one BACKUP to every form (both databases).
ch_workload() {
  local r f db base
  for db in $CH_DBS; do ch_create "$db"; done
  for r in $(seq 1 "$1"); do
    [ "$r" = 1 ] || echo "!sleep 1;"  # Manifest times have one-second resolution.
    for db in $CH_DBS; do ch_append "$db" "$r"; ch_change "$db" "$r"; done
    ch_snapshot_sql "$r"
    for f in $CH_FORMS; do
      base=""
      [ "$r" = 1 ] || base=" SETTINGS base_backup = $(ch_dest "$f" $((r - 1)))"
      echo "BACKUP DATABASE d1, DATABASE d2 TO $(ch_dest "$f" "$r")$base;"
    done
  done
}

# ch_snapshot TSV REF: copies what TSV lists (database, table, 'part' or the engine, path) into
# REF/data/<db>/<table>/: each active part whole, and the top-level files of each table's
# folder (a relative path is relative to the data folder $W/data; no path: only the folder).
ch_snapshot() {
  local tsv=$1 ref=$2 db t kind p
  while IFS=$'\t' read -r db t kind p; do
    mkdir -p "$ref/data/$db/$t"
    [ -n "$p" ] || continue  # Memory: no files
    [[ $p = /* ]] || p=$W/data/$p
    if [ "$kind" = part ]; then
      cp -a "${p%/}" "$ref/data/$db/$t/" || return 1
    else
      find "$p" -maxdepth 1 -type f -exec cp -a {} "$ref/data/$db/$t/" \; || return 1
    fi
  done <"$tsv"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cmd=$1
  shift
  "ch_$cmd" "$@"
fi
