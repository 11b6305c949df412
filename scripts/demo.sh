#!/usr/bin/env bash
# The demo: what stitchfs is for, in three steps, with ordinary tools.
#  1. a week of daily backups of a growing ClickHouse-like tree, and what each day stored;
#  2. the store of backups mounted once: every day, latest, any point in time, by uuid;
#  3. stitch log, diff, verify, and prune with the mount still open.
# It installs what building and running stitch and stitchfs needs (scripts/install-deps.sh) and
# builds only those two, into build-release/ (Release, unity build).
# Usage: scripts/demo.sh [--clickhouse] [DIR]   (DIR: default a new folder under /tmp)
#   --clickhouse  also the real ClickHouse (scripts/install-clickhouse.sh, once): ClickHouse
#                 writes a chain with BACKUP, it is mounted, and ClickHouse RESTOREs a backup
#                 that stitch wrote (scripts/demo-clickhouse.sh)
# With STITCH and STITCHFS set to built binaries, nothing is installed or built (the test).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
clickhouse=0
if [ "${1:-}" = --clickhouse ]; then clickhouse=1; shift; fi
started=$SECONDS
if [ -z "${STITCH:-}" ] || [ -z "${STITCHFS:-}" ]; then
  bash scripts/install-deps.sh
  echo "building stitch and stitchfs into build-release/ (a minute or two the first time)"
  mkdir -p build-release
  # The compiler's warnings go to a log, shown if the build fails. A unity build (each folder
  # one translation unit: cmake/unity.cmake) takes half the time; should two files' local names
  # ever clash there, the demo builds file by file instead (package_test reports the clash).
  bash scripts/build.sh build-release -DCMAKE_BUILD_TYPE=Release -DSTITCHFS_TESTS=OFF \
    -DCMAKE_UNITY_BUILD=ON -- stitch stitchfs 2>build-release/build.log ||
    { echo "the unity build failed (see build-release/build.log): building file by file"
      bash scripts/build.sh build-release -DCMAKE_UNITY_BUILD=OFF -- stitch stitchfs \
        2>build-release/build.log || { cat build-release/build.log >&2; exit 1; }; }
  STITCH=$repo/build-release/cli/stitch
  STITCHFS=$repo/build-release/fs/stitchfs
  echo "ready in $((SECONDS - started)) s"
fi
out=${1:-$(mktemp -d /tmp/stitch-demo.XXXXXX)}
mkdir -p "$out"
cd "$out"
out=$PWD
rm -rf src store ref copy-day-3 mnt bin
# The commands shown are `stitch` and `stitchfs`, run from DIR with paths relative to it.
mkdir bin
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
more() { echo "   $*"; }  # A second line of what the next step shows.
size() { numfmt --to=iec-i --suffix=B --format=%.1f "$1" | sed 's/\([0-9]\)\([KMGT]*i*B\)$/\1 \2/'; }
json() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }  # json KEY < one line of stitch's --json
fuse=0
[ -c /dev/fuse ] && command -v fusermount3 >/dev/null && fuse=1
trap '[ $fuse = 0 ] || ! mountpoint -q "$out/mnt" || fusermount3 -u "$out/mnt"' EXIT

# --- 1. A week of daily backups ----------------------------------------------------------------
# The tree of a ClickHouse server: DDL in metadata/, an append-only Log table, MergeTree parts
# that arrive daily and merge, and a DDL change or two.
part() {  # part NAME KiB: a MergeTree part with a column file of random bytes
  mkdir -p "src/data/shop/events/$1"
  head -c $(($2 * 1024)) /dev/urandom >"src/data/shop/events/$1/x.bin"
  printf 'columns format version: 1\n2 columns:\n`ts` DateTime\n`x` UInt64\n' \
    >"src/data/shop/events/$1/columns.txt"
}
log_lines() {  # log_lines DAY FROM TO: rows appended to the Log table
  seq "$2" "$3" | sed "s/.*/2026-10-0$1 12:00:00\tevent &\tuser $((RANDOM % 100))/" \
    >>src/data/shop/log/data.bin
}
grow() {  # grow DAY: what happened to the tree during day DAY
  local d=$1
  case $d in
    1)
      mkdir -p src/metadata/shop src/data/shop/log
      echo 'CREATE TABLE shop.events (ts DateTime, x UInt64) ENGINE = MergeTree ORDER BY ts' \
        >src/metadata/shop/events.sql
      echo 'CREATE TABLE shop.log (ts DateTime, what String, who String) ENGINE = Log' \
        >src/metadata/shop/log.sql
      part all_1_1_0 3072
      log_lines 1 1 60000
      ;;
    4)  # A merge: four parts become one (a new part, the old ones go).
      part all_4_4_0 512
      mkdir -p src/data/shop/events/all_1_4_1
      cat src/data/shop/events/all_{1_1,2_2,3_3,4_4}_0/x.bin >src/data/shop/events/all_1_4_1/x.bin
      cp src/data/shop/events/all_1_1_0/columns.txt src/data/shop/events/all_1_4_1/
      rm -r src/data/shop/events/all_{1_1,2_2,3_3,4_4}_0
      ;;
    *) part "all_${d}_${d}_0" 512 ;;
  esac
  [ "$d" = 1 ] || log_lines "$d" $((d * 10000)) $((d * 10000 + 9999))
  [ "$d" = 3 ] && echo 'ALTER TABLE shop.events ADD COLUMN y String' >>src/metadata/shop/events.sql
  [ "$d" = 6 ] && echo 'CREATE TABLE shop.daily (day Date, n UInt64) ENGINE = SummingMergeTree ORDER BY day' \
    >src/metadata/shop/daily.sql
  printf '{"data.bin":%s}\n' "$(stat -c %s src/data/shop/log/data.bin)" >src/data/shop/log/sizes.json
  mkdir -p ref
  cp -a src "ref/day-$d"  # What the tree was, to compare with later.
}

say "1. A week of daily backups of a growing ClickHouse-like tree: each day an incremental"
more "backup on the day before; what each day stored against the size of the whole tree"
echo "\$ stitch backup src store/day-N --base store/day-M --timestamp '2026-10-0N 03:00:00' --json"
printf '%-7s %12s %12s   %s\n' day "tree size" "stored" "what happened"
what=("" "first backup" "appended to the log, new part" "ALTER TABLE, new part"
  "4 parts merged into 1" "appended, new part" "CREATE TABLE, new part" "appended, new part")
for d in 1 2 3 4 5 6 7; do
  grow "$d"
  base=()
  [ "$d" = 1 ] || base=(--base "store/day-$((d - 1))")
  j=$(stitch backup src "store/day-$d" "${base[@]}" --timestamp "2026-10-0$d 03:00:00" --json)
  printf '%-7s %12s %12s   %s\n' "day-$d" "$(size "$(json total_size <<<"$j")")" \
    "$(size "$(json bytes_stored <<<"$j")")" "${what[$d]}"
done
echo "(stored: the bytes written that day: appended bytes only for a file that grew, nothing"
echo " for a file unchanged or renamed; each backup is still a complete point in time)"

# --- 2. The store mounted once ------------------------------------------------------------------
if [ $fuse = 1 ]; then
  say "2. The whole store mounted once, read-only: every day is a folder, plus latest, at/<time>"
  more "and by-uuid/; new backups show up without remounting"
  mkdir -p mnt
  run stitchfs store mnt
  run ls -l mnt
  say "latest/ is the newest day, a complete tree"
  run ls mnt/latest mnt/latest/data/shop/events
  say "at/<any time> is the newest backup not newer than it: noon on the 3rd is day-3"
  run ls -l mnt/at/2026-10-03T12:00
  run ls mnt/at/2026-10-03T12:00/data/shop/events
  say "by-uuid/ names each backup by the uuid ClickHouse knows it by"
  run ls mnt/by-uuid
  say "diff through the mount: what changed between day-2 and day-5"
  run diff -rq mnt/day-2 mnt/day-5 || true
  run diff mnt/day-2/metadata/shop/events.sql mnt/day-5/metadata/shop/events.sql || true
  say "cp -a of one day out of the mount: the tree of day-3 as it was, byte for byte"
  run cp -a mnt/at/2026-10-03T12:00/ copy-day-3
  run diff -r ref/day-3 copy-day-3
  echo "identical to the tree of day-3"
  say "where each byte of a stitched file lives: the log of day-7, built from seven backups"
  run getfattr -d --absolute-names mnt/day-7/data/shop/log/data.bin
else
  say "2. (left out: no /dev/fuse or fusermount3 here, so nothing can be mounted)"
fi

# --- 3. Inspect, check, prune -------------------------------------------------------------------
say "3. The store from the command line: its backups, what changed, a full check"
run stitch log store
run stitch diff store/day-6 store/day-7
run stitch verify store/day-7
say "prune to the last 3 days while the store is mounted: day-5 is flattened (it stops"
more "needing day-4), days 1-4 go"
run stitch prune store --keep-last 3
if [ $fuse = 1 ]; then
  say "the mount follows (within a second), and the kept days still read exactly as they were"
  sleep 1.2
  run ls mnt
  for d in 5 6 7; do
    diff -r "ref/day-$d" "mnt/day-$d"
    echo "day-$d through the mount: identical to the tree of day-$d"
  done
  run fusermount3 -u mnt
fi
if [ $clickhouse = 1 ]; then
  STITCH=$STITCH STITCHFS=$STITCHFS bash "$repo/scripts/demo-clickhouse.sh" "$out/clickhouse"
fi
echo
echo "Everything is in $out. The demo took $((SECONDS - started)) s."
