#!/usr/bin/env bash
# The demo's part with the real ClickHouse (scripts/demo.sh --clickhouse): ClickHouse 26.7 (the
# library in npm chdb, pinned: scripts/install-clickhouse.sh installs it once, about 550 MB)
# writes a chain of backups with BACKUP, stitch reads it and stitchfs mounts it; then stitch
# writes backups of ClickHouse's files and ClickHouse RESTOREs them, from the folder and through
# a store mount.
# Usage: STITCH=... STITCHFS=... scripts/demo-clickhouse.sh DIR
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$1
CHDB_MODULE=$(bash "$repo/scripts/install-clickhouse.sh")
export CHDB_MODULE
rm -rf "$out"
mkdir -p "$out/bin"
cd "$out"
ln -s "$STITCH" bin/stitch
ln -s "$STITCHFS" bin/stitchfs
export PATH=$out/bin:$PATH STITCH_NO_PROGRESS=1
run() {  # Shows the command (quoting only the words that need it), then runs it.
  local w line='$'
  for w in "$@"; do [[ $w =~ ^[][A-Za-z0-9_./:=@,+-]+$ ]] && line+=" $w" || line+=" '$w'"; done
  echo "$line"
  "$@"
}
say() { echo; echo "== $*"; }
# clickhouse DATA_DIR: runs the statements on stdin in a ClickHouse whose File() backups may be
# anywhere under this folder, showing each statement.
clickhouse() {
  local sql
  sql=$(cat)
  sed 's/^/  clickhouse> /' <<<"$sql"
  node "$repo/tests/clickhouse/chsql.js" "$1" --backups.allowed_path="$out/" <<<"$sql" |
    grep -v 'BACKUP_CREATED\|RESTORED' | tee -a "$out/rows.tsv"
}
mounted=()
trap 'for m in "${mounted[@]}"; do fusermount3 -u "$m" 2>/dev/null || true; done' EXIT
insert() {  # insert FROM: a day of rows in a MergeTree and a Log table
  echo "INSERT INTO shop.events SELECT toDateTime('2026-10-01 00:00:00') + number, number
    FROM numbers($1, 200000);"
  echo "INSERT INTO shop.log SELECT now(), concat('event ', toString(number)) FROM numbers($1, 50000);"
}

say "ClickHouse writes a chain of three backups: a full one, then two incrementals on it"
{
  echo "CREATE DATABASE shop;"
  echo "CREATE TABLE shop.events (ts DateTime, x UInt64) ENGINE = MergeTree ORDER BY ts;"
  echo "CREATE TABLE shop.log (ts DateTime, what String) ENGINE = Log;"
  insert 0
  echo "BACKUP DATABASE shop TO File('$out/ch/b1');"
  insert 200000
  echo "BACKUP DATABASE shop TO File('$out/ch/b2') SETTINGS base_backup = File('$out/ch/b1');"
  echo "SELECT 'rows at b2:', (SELECT count() FROM shop.events), (SELECT count() FROM shop.log);"
  insert 400000
  echo "BACKUP DATABASE shop TO File('$out/ch/b3') SETTINGS base_backup = File('$out/ch/b2');"
  echo "SELECT 'rows at b3:', (SELECT count() FROM shop.events), (SELECT count() FROM shop.log);"
} | clickhouse data
say "stitch reads ClickHouse's chain: its backups, what b3 added, a full check"
run stitch log ch
run stitch diff ch/b2 ch/b3
run stitch verify ch/b3
say "stitchfs mounts it: b3 as a complete tree, its Log column file stitched from three backups"
mkdir -p mnt
mounted+=("$out/mnt")
run stitchfs ch mnt
run ls mnt mnt/latest/data/shop
run getfattr --absolute-names -n user.stitchfs.source mnt/b3/data/shop/log/what.bin

say "stitch writes: the files of b2 and of b3 backed up as a full and an incremental backup"
mkdir -p tree
run stitch restore ch/b2 tree/b2
run stitch restore ch/b3 tree/b3
run stitch backup tree/b2 st/s1 --timestamp '2026-10-02 03:00:00'
run stitch backup tree/b3 st/s2 --base st/s1 --timestamp '2026-10-03 03:00:00'
mkdir -p stmnt
mounted+=("$out/stmnt")
run stitchfs st stmnt
say "ClickHouse RESTOREs stitch's incremental, then the day before through the store mount"
clickhouse restored <<EOF
RESTORE DATABASE shop FROM File('$out/st/s2');
SELECT 'rows restored from st/s2:', (SELECT count() FROM shop.events), (SELECT count() FROM shop.log);
DROP DATABASE shop SYNC;
RESTORE DATABASE shop FROM File('$out/stmnt/at/2026-10-02T12:00');
SELECT 'rows restored from stmnt/at/2026-10-02T12:00:', (SELECT count() FROM shop.events), (SELECT count() FROM shop.log);
EOF
rows() { grep "^rows $1" "$out/rows.tsv" | cut -f2-; }
[ -n "$(rows 'at b3')" ] && [ "$(rows 'restored from st/s2')" = "$(rows 'at b3')" ] &&
  [ "$(rows 'restored from stmnt')" = "$(rows 'at b2')" ] ||
  { echo "ClickHouse restored other rows than it had backed up" >&2; exit 1; }
echo "ClickHouse restored exactly the rows it had at b3, and at b2 through the mount"
