#!/usr/bin/env bash
# Opening (parsing and indexing) a manifest of N entries with ClickHouse-like paths: time and
# peak RSS per entry, best of 3, and the time to merely read the same manifest bytes (`cat`) as
# a baseline. Targets (issue 2): under 1.5 s and under 200 bytes of RSS per entry for 1,000,000.
# "open" parses the XML (manifest cache off); "cached_open" loads the flat form from the
# manifest cache (stitch(1), MANIFEST CACHE), as every open after the first one does.
# Usage: bench/open_manifest.sh [ENTRIES=1000000]
source "$(dirname "$0")/common.sh"
setup
n=${1:-1000000}
"$MAKE_FIXTURE" manifest "$work" "$n"
size=$(stat -c %s "$work/.backup")
cat "$work/.backup" >/dev/null
read_s=$(best_of 3 cat "$work/.backup")
# best_open CACHE_DIR: the fastest of three opens, as bench_open's JSON line.
best_open() {
  local best="" best_s="" line s
  for _ in 1 2 3; do
    line=$(STITCH_CACHE_DIR=$1 "$BUILD/bench/bench_open" "$work")
    s=$(sed 's/.*"seconds":\([0-9.]*\).*/\1/' <<<"$line")
    if [ -z "$best" ] || awk -v a="$s" -v b="$best_s" 'BEGIN{exit !(a < b)}'; then best=$line; best_s=$s; fi
  done
  echo "$best"
}
parsed=$(best_open off)
STITCH_CACHE_DIR=$work/cache "$BUILD/bench/bench_open" "$work" >/dev/null  # fills the cache
cached=$(best_open "$work/cache")
echo "{\"bench\":\"open_manifest\",\"manifest_bytes\":$size,\"cat_manifest_s\":$read_s,\"open\":$parsed,\"cached_open\":$cached}"
