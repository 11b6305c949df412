#!/usr/bin/env bash
# The main job, as a demo: installs dependencies, builds, then
#  1. backs up a small ClickHouse-like tree (full), appends to its logs and DDL, takes an
#     incremental backup that stores only the appended bytes, and shows what it stored;
#  2. mounts the incremental backup with stitchfs and looks at it with ordinary tools;
#  3. opens a chain written in ClickHouse's own format (ClickHouse checksums) and restores it.
# Usage: scripts/demo.sh [DIR]   (default: a new folder under /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
B=$PWD/build
STITCH=$B/cli/stitch
STITCHFS=$B/fs/stitchfs
out=${1:-$(mktemp -d /tmp/stitch-demo.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/src" "$out/store" "$out/ch" "$out/restored"
run() { echo; echo "\$ $*"; "$@"; }
say() { echo; echo "== $*"; }

say "1. A tree like a ClickHouse server's: DDL files, an append-only Log table, immutable parts"
S=$out/src
mkdir -p "$S/metadata/db" "$S/data/db/events/all_1_1_0" "$S/data/db/log"
printf 'CREATE TABLE db.events (ts DateTime, x UInt64) ENGINE = MergeTree ORDER BY ts;\n' > "$S/metadata/db/events.sql"
head -c 4000000 /dev/urandom > "$S/data/db/events/all_1_1_0/x.bin"
printf 'columns format version: 1\n2 columns:\n`ts` DateTime\n`x` UInt64\n' > "$S/data/db/events/all_1_1_0/columns.txt"
for i in $(seq 1 20000); do echo "2026-10-01 00:00:$((i % 60)) event $i"; done > "$S/data/db/log/data.bin"
run "$STITCH" backup "$S" "$out/store/2026-10-01"

say "A day later: the log grew, a statement was appended to the DDL, a part was renamed by a merge"
for i in $(seq 1 500); do echo "2026-10-02 00:00:$((i % 60)) event $i"; done >> "$S/data/db/log/data.bin"
printf 'ALTER TABLE db.events ADD COLUMN y String;\n' >> "$S/metadata/db/events.sql"
mv "$S/data/db/events/all_1_1_0" "$S/data/db/events/all_1_1_1"
run "$STITCH" backup "$S" "$out/store/2026-10-02" --base "$out/store/2026-10-01"
run "$STITCH" ls "$out/store/2026-10-02" -R -l
echo
echo "Bytes actually stored by the incremental backup (data files, without the manifest):"
(cd "$out/store/2026-10-02" && find . -type f ! -name .backup -printf '  %7s  %P\n')

say "2. Mount the incremental backup read-only; every byte is stitched across both backups"
M=$out/mnt
mkdir -p "$M"
run "$STITCHFS" "$out/store/2026-10-02" "$M"
trap 'mountpoint -q "$M" && fusermount3 -u "$M"' EXIT
run ls -l "$M/data/db/log" "$M/metadata/db"
run diff -r "$S" "$M"
echo "(no difference: the mounted backup equals the source tree)"
run tail -c 120 "$M/data/db/log/data.bin"
run getfattr --absolute-names -n user.stitchfs.source "$M/data/db/log/data.bin"
run getfattr --absolute-names -n user.stitchfs.stats "$M"
run fusermount3 -u "$M"

say "3. A chain written in ClickHouse's own format (full + 2 incrementals, ClickHouse checksums)"
./build/tests/make_fixture chain "$out/ch"
run "$STITCH" info "$out/ch/b2"
run "$STITCH" verify "$out/ch/b2"
run "$STITCH" restore "$out/ch/b2" "$out/restored"
run diff -r "$out/restored" "$out/ch/expected/b2"
echo
echo "Everything is in $out."
