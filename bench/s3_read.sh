#!/usr/bin/env bash
# Reads through a stitchfs mount of a backup in S3 (a throwaway Ceph radosgw on 127.0.0.1,
# scripts/radosgw.sh) vs the same objects fetched with curl, in one run:
#  - a file of BYTES grown over N days, each day backed up to s3://stitch/chain/bNNN with
#    `stitch backup --base` the day before (so the top backup's file is stitched from N objects,
#    checked with `stitch info`);
#  - mount time: `stitchfs` until a stat through the mount returns, first (empty manifest cache)
#    and the best of three later ones;
#  - sequential `cat` of the file through a fresh mount (best of 3) vs one `curl` fetching the
#    N data objects in sequence to /dev/null (best of 3): ratio = curl / mount (target >= 0.8);
#    and, for reference, vs the same curl piping the bytes into `cat` (a reader that takes them);
#    with the CPU seconds each side and the server spent (on a small machine the server shares
#    its cores with the reader, and both are CPU-bound);
#  - random 4 KiB preads (readahead off) through a fresh mount, 1 and 4 threads, then the
#    1-thread run again on the same mount (the same offsets: the kernel's page cache, the mount
#    keeps it), vs one `curl` making the same number of 4 KiB ranged GETs one after the other;
#  - the same bytes stored as ONE plain object read through `rclone mount` and `s3fs`, where
#    installed (bench/install-peers.sh): first and second sequential read, random 4 KiB reads.
# radosgw keeps objects in RAM (memstore, 3 GiB at most): the chain and the plain object must
# fit, so BYTES is scaled down when memory is short ("bytes_requested" in the JSON then).
# STITCH_BENCH_PIN_SERVER=1: radosgw and its OSD run on CPU 0 only, and the readers (curl, the
# mount's daemon, cat) on the other CPUs, as if the server were another machine; without it all
# share every core (a reader's CPU is then taken from the server).
# Usage: bench/s3_read.sh [BACKUPS=30] [BYTES=1073741824]
source "$(dirname "$0")/common.sh"
shopt -s inherit_errexit  # A failed check inside $(...) stops the run.
setup
n=${1:-30}
bytes=${2:-1073741824}
requested=$bytes
STITCHFS=$BUILD/fs/stitchfs
PREAD=$BUILD/bench/pread_bench
RANDOM_READS=2000
# Memory: radosgw holds the chain and the plain object (2 x BYTES, and its memstore device is
# 3 GiB), the page cache wants the local copy and the mount's pages; keep 1.5 GiB spare.
avail=$(awk '/MemAvailable/ {print $2 * 1024}' /proc/meminfo)
fit=$(awk -v a="$avail" 'BEGIN{ x = (a - 1.5 * 2^30) / 3; if (x > 1.35 * 2^30) x = 1.35 * 2^30;
  printf "%d", int(x / 2^20) * 2^20 }')
if [ "$bytes" -gt "$fit" ]; then
  bytes=$fit
  echo "s3_read: $((avail >> 20)) MiB available: BYTES scaled down to $bytes" >&2
  [ "$bytes" -ge $((64 << 20)) ] || { echo "s3_read: not enough memory" >&2; exit 1; }
fi

M=$work/mnt
mkdir -p "$M" "$work/rm" "$work/sm"
cleanup() {
  for m in "$M" "$work/rm" "$work/sm"; do
    mountpoint -q "$m" && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
  stop_radosgw
  rm -rf "$work"
}
trap cleanup EXIT
start_radosgw
CLIENT=()  # The prefix that runs a reader (on the readers' CPUs when the server is pinned).
if [ "${STITCH_BENCH_PIN_SERVER:-0}" = 1 ]; then
  [ "$(nproc)" -ge 2 ] || { echo "s3_read: pinning needs 2 CPUs" >&2; exit 1; }
  for pid in $(cat "$rgw"/run/*.pid); do taskset -a -p -c 0 "$pid" >/dev/null; done
  CLIENT=(taskset -c "1-$(($(nproc) - 1))")
fi
export STITCH_CACHE_DIR=$work/cache
# Keys and sizes under a prefix ("KEY SIZE" lines; fewer than 1,000 here, one page).
list() {
  curl -sf "${SIGN[@]}" "$URL/stitch?list-type=2&prefix=${1//\//%2F}" | sed 's/<Contents>/\n/g' |
    sed -n 's|^<Key>\([^<]*\)</Key>.*<Size>\([0-9]*\)</Size>.*|\1 \2|p'
}

# The chain: day i's source is the file grown by that day's append (make_fixture's pieces).
"$MAKE_FIXTURE" grow "$work/fx" "$n" "$bytes"
mv "$work/fx/original" "$work/original"
mkdir "$work/src"
: >"$work/src/grow.bin"
t0=$(date +%s.%N)
for i in $(seq 0 $((n - 1))); do
  day=$(printf "b%03d" "$i")
  cat "$work/fx/$day/grow.bin" >>"$work/src/grow.bin"
  rm -rf "$work/fx/$day"
  base=()
  [ "$i" = 0 ] || base=(--base "$(printf "s3://stitch/chain/b%03d" $((i - 1)))")
  "$STITCH" backup "$work/src" "s3://stitch/chain/$day" "${base[@]}" --json >/dev/null
done
t1=$(date +%s.%N)
chain_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
cmp "$work/src/grow.bin" "$work/original"
rm -rf "$work/src" "$work/fx"
top=$(printf "s3://stitch/chain/b%03d" $((n - 1)))
levels=$("$STITCH" info --json "$top" | grep -o '"bytes_provided":[1-9][0-9]*' | wc -l)
[ "$levels" = "$n" ] || { echo "s3_read: the file spans $levels backups, not $n" >&2; exit 1; }
list chain/ | grep '/grow\.bin ' >"$work/objects"
[ "$(wc -l <"$work/objects")" = "$n" ] || { echo "s3_read: not $n data objects" >&2; exit 1; }
[ "$(awk '{ s += $2 } END { print s }' "$work/objects")" = "$bytes" ]

# Baseline: one curl GETs the N objects in order (one connection), to /dev/null.
curl_args=()
while read -r key _; do curl_args+=(-o /dev/null "$URL/stitch/$key"); done <"$work/objects"
fetch_all() { "${CLIENT[@]}" curl -sf "${SIGN[@]}" "${curl_args[@]}"; }
# Reference: the same GETs with the bytes handed to a reading process (`cat`, as through a
# mount), not dropped by curl itself; on a small machine that reader takes CPU from the server.
urls=()
while read -r key _; do urls+=("$URL/stitch/$key"); done <"$work/objects"
fetch_to_reader() { "${CLIENT[@]}" curl -sf "${SIGN[@]}" "${urls[@]}" | "${CLIENT[@]}" cat >/dev/null; }
awk '{ print "url = \"'"$URL"'/stitch/" $1 "\"" }' "$work/objects" |
  curl -sf "${SIGN[@]}" -K - | cmp - "$work/original"  # The objects are the file's pieces.

# Mount time: stitchfs until a stat through it returns; the first one fills the manifest cache.
mount_stat() { "${CLIENT[@]}" "$STITCHFS" "$top" "$M" && stat "$M/grow.bin" >/dev/null; }
mount_first=$(timed mount_stat)
fusermount3 -u "$M"
mount_s=""
for _ in 1 2 3; do
  mount_s=$(min "$mount_s" "$(timed mount_stat)")
  fusermount3 -u "$M"
done

# Sequential reads, alternated with curl's so that both see the same machine; best of 3. CPU
# seconds (least of 3) of each side: curl, or the stitchfs daemon and `cat` (the kernel's FUSE
# page cache work), and the server (radosgw and its OSD) during each, as the server shares the
# machine's cores with the reader.
tck=$(getconf CLK_TCK)
cpu_of() { awk -v t="$tck" '{ print ($14 + $15) / t }' "/proc/$1/stat"; }
server_cpu() { awk -v a="$(cpu_of "$(cat "$rgw/run/client.rgw.pid")")" \
  -v b="$(cpu_of "$(cat "$rgw/run/osd.0.pid")")" 'BEGIN{ print a + b }'; }
since() { awk -v a="$1" -v b="$2" 'BEGIN{ print b - a }'; }
cpu_timed() {  # "real user+sys" of CMD
  local TIMEFORMAT='%R %U %S' r
  r=$({ time "$@" >/dev/null 2>&1; } 2>&1)
  echo "$r" | awk '{ print $1, $2 + $3 }'
}
curl_s="" curl_reader_s="" read_s="" cpu_curl="" cpu_daemon="" cpu_cat="" cpu_srv_curl="" cpu_srv_mount=""
for _ in 1 2 3; do
  s0=$(server_cpu)
  set -- $(cpu_timed fetch_all)
  curl_s=$(min "$curl_s" "$1")
  cpu_curl=$(min "$cpu_curl" "$2")
  cpu_srv_curl=$(min "$cpu_srv_curl" "$(since "$s0" "$(server_cpu)")")
  curl_reader_s=$(min "$curl_reader_s" "$(timed fetch_to_reader)")
  "${CLIENT[@]}" "$STITCHFS" "$top" "$M"
  pid=$(pgrep -n -f "$top $M")
  d0=$(cpu_of "$pid")
  s0=$(server_cpu)
  set -- $(cpu_timed "${CLIENT[@]}" cat "$M/grow.bin")
  read_s=$(min "$read_s" "$1")
  cpu_cat=$(min "$cpu_cat" "$2")
  cpu_srv_mount=$(min "$cpu_srv_mount" "$(since "$s0" "$(server_cpu)")")
  cpu_daemon=$(min "$cpu_daemon" "$(since "$d0" "$(cpu_of "$pid")")")
  fusermount3 -u "$M"
done
"${CLIENT[@]}" "$STITCHFS" "$top" "$M"
cmp "$M/grow.bin" "$work/original"  # A fresh mount's first read returns the right bytes.
fusermount3 -u "$M"

# The same bytes as one plain object, for the curl ranged GETs and the peers' mounts.
curl -sf "${SIGN[@]}" -T "$work/original" "$URL/stitch/plain/grow.bin" >/dev/null
# Baseline of random reads: the same count of 4 KiB ranged GETs, one after the other, one curl.
awk -v n="$RANDOM_READS" -v blocks=$((bytes / 4096)) -v url="$URL/stitch/plain/grow.bin" \
  -v user="$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" 'BEGIN { srand(7); for (i = 0; i < n; i++) {
    o = int(rand() * blocks) * 4096
    printf "url = \"%s\"\nrange = \"%d-%d\"\noutput = \"/dev/null\"\nsilent\nfail\n", url, o, o + 4095
    printf "aws-sigv4 = \"aws:amz:us-east-1:s3\"\nuser = \"%s\"\n", user
    printf "header = \"x-amz-content-sha256: UNSIGNED-PAYLOAD\"\n"
    if (i < n - 1) print "next" } }' >"$work/ranges.curl"
curl_rand_s=$(timed "${CLIENT[@]}" curl -K "$work/ranges.curl")
curl_rand=$(awk -v n="$RANDOM_READS" -v s="$curl_rand_s" 'BEGIN{printf "%.0f", n / s}')
"${CLIENT[@]}" "$STITCHFS" "$top" "$M"
rand1=$("${CLIENT[@]}" "$PREAD" "$M/grow.bin" 1 "$RANDOM_READS")
rand_warm=$("${CLIENT[@]}" "$PREAD" "$M/grow.bin" 1 "$RANDOM_READS")  # Same offsets: the kept page cache.
fusermount3 -u "$M"
# The same offsets through a fresh mount (no page cache): from stitch's on-disk block cache.
"${CLIENT[@]}" "$STITCHFS" "$top" "$M"
rand_block=$("${CLIENT[@]}" "$PREAD" "$M/grow.bin" 1 "$RANDOM_READS")
fusermount3 -u "$M"
"${CLIENT[@]}" "$STITCHFS" "$top" "$M"
rand4=$("${CLIENT[@]}" "$PREAD" "$M/grow.bin" 4 $((RANDOM_READS / 4)))
fusermount3 -u "$M"

# Peers: the plain object through rclone mount and s3fs (first read on a fresh mount, second
# read on the same mount, best of 3; random reads on a fresh mount).
wait_for_file() { for _ in $(seq 600); do [ -r "$1" ] && return 0; sleep 0.1; done; return 1; }
wait_unmounted() { for _ in $(seq 100); do mountpoint -q "$1" || return 0; sleep 0.1; done; }
peer_reads() {  # peer_reads FILE MOUNTPOINT MOUNT_CMD...: a JSON object, or fails
  local file=$1 mnt=$2 first second r1
  shift 2
  "$@" && wait_for_file "$file" || return 1
  first=$(timed cat "$file") && second=$(best_of 3 cat "$file") || return 1
  cmp -s "$file" "$work/original" || { echo "s3_read: $file: wrong bytes" >&2; return 1; }
  fusermount3 -u "$mnt" && wait_unmounted "$mnt" || return 1
  "$@" && wait_for_file "$file" && r1=$("$PREAD" "$file" 1 "$RANDOM_READS") || return 1
  fusermount3 -u "$mnt" && wait_unmounted "$mnt" || return 1
  echo "{\"first_read_s\":$first,\"first_ratio\":$(ratio "$curl_s" "$first"),\"second_read_s\":$second,\"rand4k_1t_per_s\":$r1,\"rand4k_1t_ratio\":$(ratio "$r1" "$curl_rand")}"
}
peer() {  # peer NAME FILE MOUNTPOINT MOUNT_CMD...: the JSON member, {"error"} if it failed
  local name=$1 r
  shift
  if r=$(peer_reads "$@"); then
    peers="$peers,\"$name\":$r"
  else
    mountpoint -q "$2" && fusermount3 -uz "$2"
    peers="$peers,\"$name\":{\"error\":\"failed, see stderr\"}"
  fi
}
peers=""
if command -v rclone >/dev/null; then
  # On-the-fly remote :s3: from RCLONE_S3_* (path-style, the local endpoint); no CA bundle
  # (rclone cannot load AWS_CA_BUNDLE into its transport, and the endpoint is plain http).
  rclone_mount() {
    env -u AWS_CA_BUNDLE RCLONE_CONFIG="$work/rclone.conf" RCLONE_S3_PROVIDER=Ceph \
      RCLONE_S3_ENDPOINT="$URL" RCLONE_S3_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
      RCLONE_S3_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" RCLONE_S3_REGION=us-east-1 \
      RCLONE_S3_FORCE_PATH_STYLE=true \
      rclone mount :s3:stitch/plain "$work/rm" --read-only >>"$work/rclone.log" 2>&1 &
  }
  : >"$work/rclone.conf"
  peer rclone_mount "$work/rm/grow.bin" "$work/rm" rclone_mount
fi
if command -v s3fs >/dev/null; then
  echo "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" >"$work/s3fs.passwd"
  chmod 600 "$work/s3fs.passwd"
  s3fs_mount() {
    s3fs stitch:/plain "$work/sm" -o "url=$URL,use_path_request_style,endpoint=us-east-1" \
      -o "passwd_file=$work/s3fs.passwd,ro"
  }
  peer s3fs "$work/sm/grow.bin" "$work/sm" s3fs_mount
fi

scaled=""
[ -z "${CLIENT[*]}" ] || scaled=",\"server_pinned_to_cpu0\":true"
[ "$bytes" = "$requested" ] || scaled="$scaled,\"bytes_requested\":$requested,\"mem_available_mb\":$((avail >> 20))"
echo "{\"bench\":\"s3_read\",\"backups\":$n,\"bytes\":$bytes$scaled,\"data_objects\":$n,\"chain_backup_s\":$chain_s,\"first_mount_s\":$mount_first,\"mount_s\":$mount_s,\"curl_s\":$curl_s,\"read_s\":$read_s,\"read_ratio\":$(ratio "$curl_s" "$read_s"),\"curl_to_reader_s\":$curl_reader_s,\"read_ratio_to_reader\":$(ratio "$curl_reader_s" "$read_s"),\"cpu_s\":{\"curl\":$cpu_curl,\"server_during_curl\":$cpu_srv_curl,\"stitchfs\":$cpu_daemon,\"cat\":$cpu_cat,\"server_during_mount\":$cpu_srv_mount},\"rand4k_curl_per_s\":$curl_rand,\"rand4k_mount_1t_per_s\":$rand1,\"rand4k_1t_ratio\":$(ratio "$rand1" "$curl_rand"),\"rand4k_mount_4t_per_s\":$rand4,\"rand4k_mount_cached_1t_per_s\":$rand_warm,\"rand4k_block_cache_1t_per_s\":$rand_block$peers}"
