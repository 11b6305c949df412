#!/usr/bin/env bash
# What opening one backup costs as its chain gets deeper. A daily chain of DAYS backups (taken
# with --files-cache and --timestamp, one day apart) of a ClickHouse-like tree of FILES files:
# each day most files are unchanged, a few hundred column files of Log tables are appended to
# (and their sizes.json rewritten), three new MergeTree parts appear, yesterday's temporary part
# and one table's .sql are renamed, the server log grows, and every 7th day it is rotated.
# Then, for the backups at depth 1, 30 and DAYS (day 1 is the full backup):
#  - mount:  `stitchfs BACKUP MNT` until a `stat` of one file through it returns; peak RSS of
#            the process that opens the backup (it exits once the daemon it forks serves) and
#            of the daemon (VmHWM after reading that file);
#  - cat:    `stitch cat BACKUP FILE` of a file appended to on many days: wall time, peak RSS;
#  - store:  a fresh `stitchfs STORE MNT` of the whole store until one file of that day has been
#            read (the store mount's own time, then that day's open); the daemon's peak RSS;
# each first with an empty manifest cache (STITCH_CACHE_DIR in the work folder, emptied before
# each such open: it parses and caches every manifest of the chain), then RUNS times with the
# cache filled (best and median), depths interleaved. Last, one store mount reads a file in each
# of 30 days spread over the chain: time, daemon RSS at the end and peak.
# Target (the read-model issue): at depth DAYS at most 1.5x the time of depth 1 for each of the
# three. Baselines, same run: `stat` and `cat` of the same file on the local disk, and the same
# mount, cat and store visit of a backup holding one small file (what any open costs: process
# start, FUSE mount).
#
# Usage: bench/open_depth.sh [--quick] [--keep DIR] [--build DIR] [--runs N] [DAYS] [FILES]
#   DAYS=365 FILES=50000 (--quick: 60 and 10000, 3 runs). RUNS defaults to 5.
#   --keep DIR  build the chain under DIR/<parameters>/ and keep it; a later run with the same
#               DIR and parameters reuses it (the folder's name and a key file inside it carry
#               the parameters and the generator's version, so another chain is never reused).
#               Without --keep the chain is built under /var/tmp and removed at the end.
#   --build DIR the stitch and stitchfs of that build folder, used as they are (not rebuilt),
#               e.g. to measure a build of another commit against the same kept chain. Without
#               it, build/ is built first, as the other benchmarks do.
# A human-readable table goes to stderr, one JSON line to stdout.
set -euo pipefail
shopt -s inherit_errexit  # a failing open inside $(...) stops the run
here=$(cd "$(dirname "$0")" && pwd)
days="" files="" runs="" keep="" build_dir="" quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --keep|--build|--runs)
      [ $# -ge 2 ] || { echo "open_depth.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in --keep) keep=$2 ;; --build) build_dir=$2 ;; --runs) runs=$2 ;; esac
      shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "open_depth.sh: unknown option $1" >&2; exit 2 ;;
    *) if [ -z "$days" ]; then days=$1; elif [ -z "$files" ]; then files=$1; else
         echo "open_depth.sh: too many arguments" >&2; exit 2; fi ;;
  esac
  shift
done
if [ "$quick" = 1 ]; then days=${days:-60} files=${files:-10000} runs=${runs:-3}; fi
days=${days:-365} files=${files:-50000} runs=${runs:-5}
case "$days$files$runs" in *[!0-9]*) echo "open_depth.sh: DAYS, FILES, RUNS are numbers" >&2; exit 2 ;; esac
[ "$days" -ge 2 ] && [ "$files" -ge 1000 ] && [ "$runs" -ge 1 ] ||
  { echo "open_depth.sh: DAYS >= 2, FILES >= 1000, RUNS >= 1" >&2; exit 2; }
[ -n "$build_dir" ] && BUILD=$(cd "$build_dir" && pwd)
source "$here/common.sh"
STITCHFS=$BUILD/fs/stitchfs
if [ -n "$build_dir" ]; then
  for b in "$STITCH" "$STITCHFS"; do
    [ -x "$b" ] || { echo "open_depth.sh: no $b" >&2; exit 2; }
  done
else
  ensure_built
fi
# /usr/bin/time (Debian's `time` package) gives a process's peak RSS; without it, /proc is
# polled.
GNU_TIME=""
[ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1 && GNU_TIME=/usr/bin/time

# Depths measured: 1, 30 and DAYS (fewer when DAYS <= 30).
depths=$(printf '%s\n' 1 $((days < 30 ? days : 30)) "$days" | sort -nu | tr '\n' ' ')
deepest=$days
day_name() { printf 'day-%03d' "$1"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.4f", b - a}'; }
mb() { awk -v k="$1" 'BEGIN{printf "%.1f", k / 1024}'; }

# ---------------------------------------------------------------------------------------------
# The chain. Everything in it is a function of (DAYS, FILES, GEN_VERSION): bump the version
# whenever the generator changes, so that no kept chain of an older generator is reused.
GEN_VERSION=1
key="open_depth-v$GEN_VERSION-days$days-files$files"
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d /var/tmp/stitch-bench.XXXXXX)
fi
chain=$work/$key
run=$(mktemp -d "$work/run.XXXXXX")
M=$run/mnt
mkdir -p "$M"
cleanup() {
  # A mount still busy (something reading under $M) is detached lazily; rm never enters a mount.
  if mountpoint -q "$M" 2>/dev/null; then fusermount3 -u "$M" 2>/dev/null || fusermount3 -u -z "$M" || true; fi
  rm -rf --one-file-system "$run"
  if [ -z "$keep" ]; then rm -rf --one-file-system "$work"; fi
}
trap cleanup EXIT

# Layout (ClickHouse-like): FILES/10 files in Log tables (8 column .bin files, __marks.mrk,
# sizes.json each), MergeTree parts of 10 files each in 40 tables, one .sql per table, a server
# log. Sizes and contents are arithmetic functions of the names' numbers (no randomness).
log_tables=$((files / 100))
mt_tables=40
touched=$((log_tables < 35 ? log_tables : 35))  # Log tables written to each day
parts=$(((files - log_tables * 10 - log_tables - mt_tables - 1) / 10))
# The files of every MergeTree part.
PART_FILES="checksums.txt columns.txt count.txt primary.idx id.bin id.mrk2 ts.bin ts.mrk2 value.bin value.mrk2"
log_dir() { echo "store/db_$(($1 % 5))/log_$1"; }
# Day D's new parts are block new_block+D, above every part of day 1 (all_1_1_0 up to
# all_N_N_0, N = parts / mt_tables + 1): 1000+D unless FILES is in the hundreds of thousands.
new_block=$((parts / mt_tables + 1 > 1000 ? parts / mt_tables + 1 : 1000))
# The file read at every depth: a column of the Log table written to on the last day (written
# to every log_tables/touched days before that, and present since day 1).
probe_table=$(((deepest * touched) % log_tables))
FILE=$(log_dir "$probe_table")/c0.bin

# awk program shared by the generator's steps: writes the files listed on stdin, one per line
# as "MODE SIZE SEED PATH" (MODE w: create or truncate, a: append).
# shellcheck disable=SC2016
WRITE_AWK='
BEGIN { for (k = 0; k < 8192; k++) blk = blk sprintf("%c", 33 + (k * 7919 + int(k / 94)) % 94) }
{
  path = $4; for (f = 5; f <= NF; f++) path = path " " $f
  n = $2; s = $3
  out = sprintf("%s %d\n", path, s)
  while (length(out) < n) out = out substr(blk, 1 + (s * 131 + length(out)) % 4096, 4096)
  out = substr(out, 1, n)
  if ($1 == "w") printf "%s", out > path; else printf "%s", out >> path
  close(path)
}'

# The full tree of day 1 in $chain/src.
make_tree() {
  local S=$chain/src
  mkdir -p "$S/logs"
  (
    cd "$S"
    for t in $(seq 0 $((log_tables - 1))); do log_dir "$t"; echo "metadata/db_$((t % 5))"; done
    for p in $(seq 0 $((parts - 1))); do
      echo "store/db_$((p % mt_tables % 5))/mt_$((p % mt_tables))/all_$((p / mt_tables + 1))_$((p / mt_tables + 1))_0"
    done | sort -u
  ) | sort -u | (cd "$S" && xargs mkdir -p)
  {
    for t in $(seq 0 $((log_tables - 1))); do
      d=$(log_dir "$t")
      for c in 0 1 2 3 4 5 6 7; do echo "w $((512 + (t * 37 + c * 101) % 3000)) $((t * 8 + c)) $d/c$c.bin"; done
      echo "w $((96 + t % 64)) $t $d/__marks.mrk"
      echo "w 120 $t $d/sizes.json"
      echo "w 300 $t metadata/db_$((t % 5))/log_$t.sql"
    done
    for m in $(seq 0 $((mt_tables - 1))); do
      mkdir -p "$S/metadata/db_$((m % 5))"
      echo "w 400 $m metadata/db_$((m % 5))/mt_$m.sql"
    done
    for p in $(seq 0 $((parts - 1))); do
      d="store/db_$((p % mt_tables % 5))/mt_$((p % mt_tables))/all_$((p / mt_tables + 1))_$((p / mt_tables + 1))_0"
      i=0
      for f in $PART_FILES; do
        echo "w $((64 + (p * 97 + i * 389) % 2400)) $((p * 10 + i)) $d/$f"
        i=$((i + 1))
      done
    done
    echo "w 4096 1 logs/clickhouse-server.log"
  } | (cd "$S" && awk "$WRITE_AWK")
}

# The source's changes on day D (2..DAYS).
change_day() {
  local d=$1 S=$chain/src j t c m p dir
  {
    for j in $(seq 0 $((touched - 1))); do
      t=$(((d * touched + j) % log_tables))
      dir=$(log_dir "$t")
      for c in 0 1 2 3 4 5 6 7; do echo "a $((64 + (d * 53 + t * 7 + c * 211) % 1900)) $((d * 1000 + t + c)) $dir/c$c.bin"; done
      echo "a 16 $((d + t)) $dir/__marks.mrk"
      echo "w 120 $((d * 7 + t)) $dir/sizes.json"
    done
    # Three new parts a day, one of them under a temporary name until the next day.
    for j in 0 1 2; do
      m=$(((d * 3 + j) % mt_tables))
      p="store/db_$((m % 5))/mt_$m/all_$((new_block + d))_$((new_block + d))_$j"
      [ "$j" = 2 ] && p="store/db_$((m % 5))/mt_$m/tmp_insert_all_$((new_block + d))_$((new_block + d))_$j"
      mkdir -p "$S/$p"
      c=0
      for f in $PART_FILES; do
        echo "w $((64 + (d * 31 + j * 977 + c * 389) % 2400)) $((d * 100 + j * 10 + c)) $p/$f"
        c=$((c + 1))
      done
    done
    echo "a $((8192 + d % 4096)) $d logs/clickhouse-server.log"
  } | (cd "$S" && awk "$WRITE_AWK")
  # Renames: yesterday's temporary part gets its final name; one table's .sql is renamed.
  m=$((((d - 1) * 3 + 2) % mt_tables))
  p="$S/store/db_$((m % 5))/mt_$m"
  if [ -d "$p/tmp_insert_all_$((new_block + d - 1))_$((new_block + d - 1))_2" ]; then
    mv "$p/tmp_insert_all_$((new_block + d - 1))_$((new_block + d - 1))_2" \
      "$p/all_$((new_block + d - 1))_$((new_block + d - 1))_2"
  fi
  m=$((d % mt_tables))
  if [ -e "$S/metadata/db_$((m % 5))/mt_$m.sql" ]; then
    mv "$S/metadata/db_$((m % 5))/mt_$m.sql" "$S/metadata/db_$((m % 5))/mt_${m}_old.sql"
  else
    mv "$S/metadata/db_$((m % 5))/mt_${m}_old.sql" "$S/metadata/db_$((m % 5))/mt_$m.sql"
  fi
  # Log rotation every 7th day: .log -> .log.1 -> .log.2 -> .log.3 -> gone.
  if [ $((d % 7)) = 0 ]; then
    rm -f "$S/logs/clickhouse-server.log.3"
    for j in 2 1; do
      [ -e "$S/logs/clickhouse-server.log.$j" ] && mv "$S/logs/clickhouse-server.log.$j" "$S/logs/clickhouse-server.log.$((j + 1))"
    done
    mv "$S/logs/clickhouse-server.log" "$S/logs/clickhouse-server.log.1"
    printf 'rotated on day %d\n' "$d" >"$S/logs/clickhouse-server.log"
  fi
}

build_chain() {
  rm -rf "$chain"
  mkdir -p "$chain/store"
  echo "open_depth: building a chain of $days daily backups of $files files in $chain" >&2
  local t0 t1 d ts base prev="" progress=$((days / 10 > 0 ? days / 10 : 1))
  t0=$(now)
  make_tree
  # The backups' own opens of their bases use a manifest cache of their own, removed after.
  : >"$chain/backup-times"
  for d in $(seq 1 "$days"); do
    # (Not `[ ... ] && change_day`: errexit is off in a function called from an && list.)
    if [ "$d" -gt 1 ]; then change_day "$d"; fi
    ts=$(date -u -d "2025-01-01 +$((d - 1)) days" '+%F 03:00:00')
    base=()
    [ -n "$prev" ] && base=(--base "$chain/store/$prev" --files-cache)
    t1=$(now)
    STITCH_CACHE_DIR=$chain/build-cache STITCH_CACHE_MB=65536 "$STITCH" backup "$chain/src" "$chain/store/$(day_name "$d")" \
      "${base[@]}" --timestamp "$ts" >"$chain/backup.log" 2>&1 || { cat "$chain/backup.log" >&2; exit 1; }
    last_s=$(since "$t1")
    prev=$(day_name "$d")
    echo "$d $last_s $(since "$t0")" >>"$chain/backup-times"  # day, its backup, elapsed (s)
    if [ $((d % progress)) = 0 ] || [ "$d" = "$days" ]; then
      echo "open_depth:   day $d of $days, $(since "$t0") s (that day's backup: $last_s s)" >&2
    fi
  done
  rm -rf "$chain/build-cache"
  {
    echo "key=$key"
    echo "days=$days"
    echo "files=$files"
    echo "generator=$GEN_VERSION"
    echo "built_by=$("$STITCH" --version 2>&1 | head -1)"
    echo "build_s=$(since "$t0")"
    echo "last_backup_s=$last_s"
    echo "probe=$FILE"
  } >"$chain/key.tmp"
  mv "$chain/key.tmp" "$chain/key"  # written last: a chain without it is rebuilt
}

reused=false
if [ -f "$chain/key" ] && grep -qx "key=$key" "$chain/key" &&
   [ -f "$chain/store/$(day_name "$days")/.backup" ]; then
  reused=true
  echo "open_depth: reusing the chain in $chain" >&2
else
  build_chain
fi
build_s=$(sed -n 's/^build_s=//p' "$chain/key")
last_backup_s=$(sed -n 's/^last_backup_s=//p' "$chain/key")
last_backup_s=${last_backup_s:-null}  # chains kept by earlier versions of this script
S=$chain/src
STORE=$chain/store
files_last=$(find "$S" -type f | wc -l)
manifest_mb=$(stat -c %s "$STORE/$(day_name "$days")/.backup" | awk '{printf "%.1f", $1 / 1048576}')
store_mb=$(du -sm "$STORE" | cut -f1)

# ---------------------------------------------------------------------------------------------
# Measuring.
export STITCH_CACHE_DIR=$run/cache
# Large enough that the cache keeps every manifest of the chain (the default is 4096 MiB).
export STITCH_CACHE_MB=${STITCH_CACHE_MB:-65536}
# Before each first open: no cache, and no writeback of earlier runs' files under way.
empty_cache() { rm -rf "$STITCH_CACHE_DIR"; sync -f "$work"; }

daemon_pid() { pgrep -n -x -f "$STITCHFS $1 $M"; }
state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo X; }
# unmount PID: unmounts $M and waits for the daemon to end (gone, or a zombie: whatever reaps
# orphans here may take its time).
unmount() {
  local i
  for i in $(seq 50); do  # (busy for a moment at most: only this script reads under $M)
    fusermount3 -u "$M" 2>/dev/null && break
    [ "$i" -lt 50 ] || { echo "open_depth.sh: cannot unmount $M (busy: is a process reading there?)" >&2; return 1; }
    sleep 0.1
  done
  for _ in $(seq 1000); do
    case $(state "$1") in Z|X) return 0 ;; esac
    sleep 0.01
  done
}
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
max() { awk -v a="$1" -v b="$2" 'BEGIN{print (a > b) ? a : b}'; }

# peak_run CMD...: runs CMD (stdout to /dev/null), prints "SECONDS PEAK_KB". For stitchfs, the
# process measured is the one that opens the backup and exits once the daemon it forked serves.
peak_run() {
  local t0 s kb k pid
  t0=$(now)
  if [ -n "$GNU_TIME" ]; then
    "$GNU_TIME" -f %M -o "$run/time.out" "$@" >/dev/null
    s=$(since "$t0")
    kb=$(tail -1 "$run/time.out")
  else
    "$@" >/dev/null &
    pid=$!
    kb=0
    while [ "$(state "$pid")" != Z ] && [ -d "/proc/$pid" ]; do
      k=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$k" ] && [ "$k" -gt "$kb" ] && kb=$k
      sleep 0.002
    done
    wait "$pid"
    s=$(since "$t0")
  fi
  echo "$s $kb"
}

# Each measurement prints "SECONDS PEAK_KB DAEMON_KB MOUNT_SECONDS": PEAK_KB the highest of the
# process that opened the backup and the daemon; DAEMON_KB the daemon's VmHWM after reading the
# file (0 for stitch cat); MOUNT_SECONDS the store mount's own part (0 otherwise).
# mount_open BACKUP FILE: mount, stat the file (SECONDS ends here), then read it.
mount_open() {
  local t0 s open_kb pid kb
  t0=$(now)
  open_kb=$(peak_run "$STITCHFS" "$1" "$M")
  open_kb=${open_kb#* }
  stat "$M/$2" >/dev/null
  s=$(since "$t0")
  pid=$(daemon_pid "$1")
  cat "$M/$2" >/dev/null
  kb=$(hwm_kb "$pid")
  unmount "$pid"
  echo "$s $(max "$open_kb" "$kb") $kb 0"
}
# cat_open BACKUP FILE: stitch cat.
cat_open() { echo "$(peak_run "$STITCH" cat "$1" "$2") 0 0"; }
# store_open STORE NAME FILE: a fresh store mount, then the file of that backup read (SECONDS
# from the mount's start to the end of the read).
store_open() {
  local t0 ms s open_kb pid kb
  t0=$(now)
  open_kb=$(peak_run "$STITCHFS" "$1" "$M")
  open_kb=${open_kb#* }
  ms=$(since "$t0")
  cat "$M/$2/$3" >/dev/null
  s=$(since "$t0")
  pid=$(daemon_pid "$1")
  kb=$(hwm_kb "$pid")
  unmount "$pid"
  echo "$s $(max "$open_kb" "$kb") $kb $ms"
}
native_stat() { echo "$(peak_run stat "$S/$FILE") 0 0"; }
native_cat() { echo "$(peak_run cat "$S/$FILE") 0 0"; }

# One small backup: the floor of any open (process start, FUSE mount, a one-entry manifest).
tiny=$run/tiny-store
mkdir -p "$run/tiny-src/$(dirname "$FILE")" "$tiny"
cp "$S/$FILE" "$run/tiny-src/$FILE"
"$STITCH" backup "$run/tiny-src" "$tiny/day-001" --timestamp '2025-01-01 03:00:00' >/dev/null 2>&1

# The bytes are right: at the last day the backup's file is the source's; at every depth the
# mount and stitch cat agree.
for d in $depths; do
  b=$STORE/$(day_name "$d")
  "$STITCH" cat "$b" "$FILE" >"$run/cat.out"
  "$STITCHFS" "$b" "$M"
  cmp "$M/$FILE" "$run/cat.out"
  [ "$d" = "$deepest" ] && segments=$(getfattr --absolute-names --only-values -n user.stitchfs.source "$M/$FILE" | grep -o '"level"' | wc -l)
  unmount "$(daemon_pid "$b")"
done
cmp "$run/cat.out" "$S/$FILE"

# Results, keyed "WHAT,DEPTH" (WHAT: mount, cat, store; DEPTH: a depth, or tiny) or "native_*".
declare -A first first_kb first_dkb secs kbs dkbs mount_secs
# record KEY first|later SECONDS PEAK_KB DAEMON_KB MOUNT_SECONDS
record() {
  local s=$3 kb=$4 dkb=$5 ms=$6
  if [ "$2" = first ]; then
    first[$1]=$s first_kb[$1]=$kb first_dkb[$1]=$dkb
  else
    secs[$1]="${secs[$1]:-} $s" kbs[$1]="${kbs[$1]:-} $kb" dkbs[$1]="${dkbs[$1]:-} $dkb"
    mount_secs[$1]="${mount_secs[$1]:-} $ms"
  fi
}
measure() {  # measure WHAT DEPTH|tiny: one open, as its function prints it
  local store=$STORE name
  if [ "$2" = tiny ]; then store=$tiny name=day-001; else name=$(day_name "$2"); fi
  case $1 in
    mount) mount_open "$store/$name" "$FILE" ;;
    cat) cat_open "$store/$name" "$FILE" ;;
    store) store_open "$store" "$name" "$FILE" ;;
  esac
}

t_start=$(now)
echo "open_depth: first opens (manifest cache emptied before each)" >&2
for d in $depths; do
  for what in mount cat store; do
    empty_cache
    out=$(measure "$what" "$d")
    record "$what,$d" first $out
  done
done
# Every manifest of the chain in the cache, then the later opens, interleaved.
"$STITCH" cat "$STORE/$(day_name "$deepest")" "$FILE" >/dev/null
cache_mb=0  # (a chain of small manifests may leave no cache folder at all)
[ -d "$STITCH_CACHE_DIR" ] && cache_mb=$(du -sm "$STITCH_CACHE_DIR" | cut -f1)
echo "open_depth: later opens (manifest cache filled), $runs runs" >&2
for _ in $(seq "$runs"); do
  for d in $depths tiny; do
    for what in mount cat store; do
      out=$(measure "$what" "$d")
      record "$what,$d" later $out
    done
  done
  out=$(native_stat)
  record native_stat later $out
  out=$(native_cat)
  record native_cat later $out
done

# A store mount visiting 30 days spread over the chain (the first and the last among them),
# one file read in each: the daemon's RSS at the end, and its peak.
visit_n=$((days < 30 ? days : 30))
visit_days=$(awk -v n="$visit_n" -v d="$days" 'BEGIN{for (i = 0; i < n; i++) print 1 + int(i * (d - 1) / (n - 1) + 0.5)}' | tr '\n' ' ')
echo "open_depth: a store mount visiting $visit_n days" >&2
t0=$(now)
"$STITCHFS" "$STORE" "$M"
pid=$(daemon_pid "$STORE")
for d in $visit_days; do cat "$M/$(day_name "$d")/$FILE" >/dev/null; done
visit_s=$(since "$t0")
visit_rss=$(rss_kb "$pid") visit_hwm=$(hwm_kb "$pid")
unmount "$pid"
measure_s=$(since "$t_start")

# ---------------------------------------------------------------------------------------------
# Report: a table on stderr, one JSON line on stdout.
best() { tr ' ' '\n' <<<"$1" | grep . | sort -g | head -1; }
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
maxv() { tr ' ' '\n' <<<"$1" | grep . | sort -g | tail -1; }
r2() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a / b}'; }
mbx() { if [ "${1:-0}" = 0 ]; then echo -; else mb "$1"; fi; }  # MB, or - for none
row() {  # row LABEL DEPTH KEY
  local k=$3
  if [ -n "${first[$k]:-}" ]; then
    printf '%-24s %5s | %7.3f %7s %7s |' "$1" "$2" "${first[$k]}" "$(mbx "${first_kb[$k]}")" "$(mbx "${first_dkb[$k]}")"
  else
    printf '%-24s %5s | %7s %7s %7s |' "$1" "$2" "" "" ""
  fi
  printf ' %7.3f %8.3f %7s %7s\n' "$(best "${secs[$k]}")" "$(median "${secs[$k]}")" \
    "$(mbx "$(maxv "${kbs[$k]}")")" "$(mbx "$(maxv "${dkbs[$k]}")")"
}
ratio_of() { r2 "$(median "${secs[$1,$deepest]}")" "$(median "${secs[$1,1]}")"; }
first_ratio_of() { r2 "${first[$1,$deepest]}" "${first[$1,1]}"; }
{
  printf '\nopen_depth: %d daily backups of %d files (%d at the last day, its manifest %s MB; store %d MB)\n' \
    "$days" "$files" "$files_last" "$manifest_mb" "$store_mb"
  printf 'chain built in %s s%s (its last backup: %s s); measured in %s s\n' "$build_s" \
    "$([ "$reused" = true ] && echo ' by an earlier run, reused')" "$last_backup_s" "$measure_s"
  printf 'file: %s, %s bytes at depth %s in %s pieces; manifest cache of the chain: %s MB\n' \
    "$FILE" "$(stat -c %s "$S/$FILE")" "$deepest" "$segments" "$cache_mb"
  printf 'binaries: %s (%s)\n\n' "$BUILD" "$("$STITCH" --version 2>&1 | head -1)"
  printf '%-24s %5s | %-23s | %-33s\n' "" "" "first open (no cache)" "later opens, $runs runs (cache filled)"
  printf '%-24s %5s | %7s %7s %7s | %7s %8s %7s %7s\n' "seconds, peak RSS MB" "depth" "s" "peak" "daemon" \
    "best s" "median s" "peak" "daemon"
  for what in mount cat store; do
    case $what in
      mount) label="stitchfs BACKUP + stat" ;;
      cat) label="stitch cat BACKUP FILE" ;;
      store) label="store mount + read day" ;;
    esac
    for d in $depths; do row "$label" "$d" "$what,$d"; done
    row "  one-file backup" 1 "$what,tiny"
  done
  row "native stat FILE" "" native_stat
  row "native cat FILE" "" native_cat
  printf '(of the store rows, the store mount itself: %s s median at depth 1, %s s at depth %s)\n' \
    "$(median "${mount_secs[store,1]}")" "$(median "${mount_secs[store,$deepest]}")" "$deepest"
  printf '\nstore mount visiting %d days (%s ... %s): %.2f s; daemon RSS at the end %s MB, peak %s MB\n' \
    "$visit_n" "$(echo "$visit_days" | cut -d' ' -f1-3)" "$(echo "$visit_days" | awk '{print $NF}')" \
    "$visit_s" "$(mb "$visit_rss")" "$(mb "$visit_hwm")"
  printf '\ndepth %s / depth 1, later opens, median (target <= 1.5):' "$deepest"
  for what in mount cat store; do printf '  %s %sx' "$what" "$(ratio_of "$what")"; done
  printf '\ndepth %s / depth 1, first opens:' "$deepest"
  for what in mount cat store; do printf '  %s %sx' "$what" "$(first_ratio_of "$what")"; done
  printf '\ndepth 1 / one-file backup, median:'
  for what in mount cat store; do printf '  %s %sx' "$what" "$(r2 "$(median "${secs[$what,1]}")" "$(median "${secs[$what,tiny]}")")"; done
  printf '\nmount at depth 1 / native stat: %sx; cat at depth 1 / native cat: %sx\n\n' \
    "$(r2 "$(median "${secs[mount,1]}")" "$(median "${secs[native_stat]}")")" \
    "$(r2 "$(median "${secs[cat,1]}")" "$(median "${secs[native_cat]}")")"
} >&2

json_key() {  # json_key KEY: {"first_s":..,...} of one row
  local k=$1
  if [ -n "${first[$k]:-}" ]; then
    printf '{"first_s":%s,"first_peak_rss_mb":%s,' "${first[$k]}" "$(mb "${first_kb[$k]}")"
    [ "${first_dkb[$k]}" = 0 ] || printf '"first_daemon_peak_rss_mb":%s,' "$(mb "${first_dkb[$k]}")"
  else
    printf '{'
  fi
  printf '"best_s":%s,"median_s":%s,"peak_rss_mb":%s' "$(best "${secs[$k]}")" "$(median "${secs[$k]}")" \
    "$(mb "$(maxv "${kbs[$k]}")")"
  [ "$(maxv "${dkbs[$k]}")" = 0 ] || printf ',"daemon_peak_rss_mb":%s' "$(mb "$(maxv "${dkbs[$k]}")")"
  printf '}'
}
json_what() {  # json_what WHAT: {"depth_1":{...},...,"one_file_backup":{...}}
  local d
  printf '{'
  for d in $depths; do printf '"depth_%s":%s,' "$d" "$(json_key "$1,$d")"; done
  printf '"one_file_backup":%s}' "$(json_key "$1,tiny")"
}
echo "{\"bench\":\"open_depth\",\"days\":$days,\"files\":$files,\"files_last_day\":$files_last,\"runs\":$runs,\"manifest_mb_last_day\":$manifest_mb,\"store_mb\":$store_mb,\"manifest_cache_mb\":$cache_mb,\"file_pieces_at_depth_$deepest\":$segments,\"chain_reused\":$reused,\"chain_build_s\":$build_s,\"chain_last_backup_s\":$last_backup_s,\"measure_s\":$measure_s,\"mount\":$(json_what mount),\"cat\":$(json_what cat),\"store\":$(json_what store),\"store_mount_only_median_s\":{\"depth_1\":$(median "${mount_secs[store,1]}"),\"depth_$deepest\":$(median "${mount_secs[store,$deepest]}")},\"native_stat\":$(json_key native_stat),\"native_cat\":$(json_key native_cat),\"store_visit\":{\"days\":$visit_n,\"s\":$visit_s,\"rss_mb_end\":$(mb "$visit_rss"),\"peak_rss_mb\":$(mb "$visit_hwm")},\"mount_ratio\":$(ratio_of mount),\"cat_ratio\":$(ratio_of cat),\"store_ratio\":$(ratio_of store),\"first_mount_ratio\":$(first_ratio_of mount),\"first_cat_ratio\":$(first_ratio_of cat),\"first_store_ratio\":$(first_ratio_of store),\"target_ratio\":1.5}"
