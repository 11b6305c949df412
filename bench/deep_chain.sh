#!/usr/bin/env bash
# Opening a chain that has no resolved indexes (as ClickHouse writes them) as it gets very deep:
# LEVELS backups, each a manifest only (no data files: nothing is read but manifests), whose
# FILES files each grow by a byte at every level (so the top's files read from every level),
# opened with `stitch ls` and an empty per-user cache; then, with the cache that open left, a
# backup a third of the way down and one 70% down. Prints the seconds of each open and the MB
# the first one wrote to the cache (the indexes kept for later opens), as one JSON line.
# Usage: bench/deep_chain.sh [LEVELS] [FILES]   (defaults 1000 and 100)
source "$(dirname "$0")/common.sh"
levels=${1:-1000}
files=${2:-100}
ensure_built
work=$(mktemp -d /var/tmp/stitch-deep-chain.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 - "$levels" "$files" "$work/chain" <<'PY'
import hashlib, os, sys
levels, files, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def uuid(j): return "%08x-2222-4333-8444-%012x" % (j, j)
def ck(i, j): return hashlib.md5(b"%d-%d" % (i, j)).hexdigest()
for j in range(levels):
    d = os.path.join(out, "l%05d" % j)
    os.makedirs(d)
    rows = []
    for i in range(files):
        f = "<file><name>f%04d</name><size>%d</size><checksum>%s</checksum>" % (i, j + 1, ck(i, j))
        if j:
            f += ("<use_base>true</use_base><base_size>%d</base_size>"
                  "<base_checksum>%s</base_checksum>" % (j, ck(i, j - 1)))
        rows.append(f + "</file>")
    head = ("<version>1</version><timestamp>2026-10-01 12:00:00</timestamp><uuid>%s</uuid>"
            % uuid(j))
    if j:
        head += ("<base_backup>File('l%05d')</base_backup><base_backup_uuid>%s</base_backup_uuid>"
                 % (j - 1, uuid(j - 1)))
    with open(os.path.join(d, ".backup"), "w") as m:
        m.write("<config>" + head + "<contents>" + "".join(rows) + "</contents></config>")
PY
export STITCH_CACHE_DIR=$work/cache
# seconds CMD...: the wall time of one run.
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}'
}
name() { printf 'l%05d' "$1"; }
first=$(seconds "$STITCH" ls "$work/chain/$(name $((levels - 1)))")
cache_mb=$(du -sm "$work/cache" | cut -f1)
third=$(seconds "$STITCH" ls "$work/chain/$(name $((levels * 2 / 3)))")
deep=$(seconds "$STITCH" ls "$work/chain/$(name $((levels * 3 / 10)))")
again=$(seconds "$STITCH" ls "$work/chain/$(name $((levels - 1)))")
printf '{"bench":"deep_chain","levels":%d,"files":%d,"first_open_s":%s,"cache_mb":%s,' \
  "$levels" "$files" "$first" "$cache_mb"
printf '"open_a_third_down_s":%s,"open_70pct_down_s":%s,"top_again_s":%s}\n' "$third" "$deep" "$again"
