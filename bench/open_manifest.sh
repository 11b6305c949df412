#!/usr/bin/env bash
# Opening (parsing and indexing) a manifest of N entries with ClickHouse-like paths: time and
# peak RSS per entry, best of 3, and the time to merely read the same manifest bytes (`cat`) as
# a baseline. Targets (issue 2): under 1.5 s and under 200 bytes of RSS per entry for 1,000,000.
# Usage: bench/open_manifest.sh [ENTRIES=1000000]
source "$(dirname "$0")/common.sh"
setup
n=${1:-1000000}
"$MAKE_FIXTURE" manifest "$work" "$n"
size=$(stat -c %s "$work/.backup")
cat "$work/.backup" >/dev/null
read_s=$(best_of 3 cat "$work/.backup")
best=""
for _ in 1 2 3; do
  line=$("$BUILD/bench/bench_open" "$work")
  s=$(sed 's/.*"seconds":\([0-9.]*\).*/\1/' <<<"$line")
  if [ -z "$best" ] || awk -v a="$s" -v b="$best_s" 'BEGIN{exit !(a < b)}'; then best=$line; best_s=$s; fi
done
echo "{\"bench\":\"open_manifest\",\"manifest_bytes\":$size,\"cat_manifest_s\":$read_s,\"open\":$best}"
