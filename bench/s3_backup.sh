#!/usr/bin/env bash
# Backups to S3 (a throwaway Ceph radosgw on 127.0.0.1, scripts/radosgw.sh) of the tree of
# backup_tree.sh (FILES random files, BYTES in all; make_fixture files): a full backup, then a
# daily incremental after appending 1..4 KiB to every tenth file, each with time, requests made
# and bytes uploaded; the same two days through restic (`restic -r s3:...`) and `rclone sync`
# (files as plain objects), where installed (bench/install-peers.sh).
# Requests and bytes come from radosgw's access log (one "beast:" line per request, with the
# body bytes it moved): "bytes_up" sums the PUT and POST lines (request bodies; POSTs start and
# complete multipart uploads and their small XML replies count too). Baselines, same run: the
# appended bytes plus the new manifest (what the incremental needs to store at least), and
# the peers. Targets: day 2 uploads <= 1.1 x (appended + manifest); fewer requests and less
# time than restic.
# Usage: bench/s3_backup.sh [FILES=2000] [BYTES=536870912]
source "$(dirname "$0")/common.sh"
shopt -s inherit_errexit  # A failed check inside $(...) stops the run.
setup
files=${1:-2000}
bytes=${2:-536870912}
cleanup() {
  stop_radosgw
  rm -rf "$work"
}
trap cleanup EXIT
start_radosgw
LOG=$rgw/client.rgw.log

"$MAKE_FIXTURE" files "$work" "$files" "$bytes"
T=$work/tree
find "$T" -type f -exec cat {} + >/dev/null

# The access log's request lines so far (radosgw writes its log a little later: wait until the
# count holds still).
log_lines() {
  local a b
  sleep 0.5
  a=$(grep -c ' beast: ' "$LOG" || true)
  while :; do
    sleep 0.5
    b=$(grep -c ' beast: ' "$LOG" || true)
    [ "$a" = "$b" ] && break
    a=$b
  done
  echo "$a"
}
# measured CMD...: runs CMD; sets $secs and $reqs (a JSON fragment: request counts by kind,
# bytes uploaded) from the request lines it added to the log.
measured() {
  local before t0 t1
  before=$(log_lines)
  t0=$(date +%s.%N)
  "$@" >"$work/out"
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
  reqs=$(grep ' beast: ' "$LOG" | tail -n +$((before + 1)) | head -n $(($(log_lines) - before)) |
    awk '{ for (i = 1; i < NF; i++) if ($i ~ /^"(GET|HEAD|PUT|POST|DELETE)$/) break
           m = substr($i, 2); n++; c[m]++
           if (m == "GET" && $(i + 1) ~ /^\/stitch\/?(\?|$)/) { c[m]--; c["LIST"]++ }
           if (m == "PUT" || m == "POST") up += $(i + 4) }
         END { printf "\"requests\":%d,\"get\":%d,\"head\":%d,\"list\":%d,\"put\":%d,\"post\":%d,\"delete\":%d,\"bytes_up\":%d",
               n, c["GET"], c["HEAD"], c["LIST"], c["PUT"], c["POST"], c["DELETE"], up }')
}
json_num() { grep -o "\"$1\":[0-9]*" "$work/out" | head -1 | cut -d: -f2; }

# Each tool's day N backup: stitch (day 2 on day 1), restic (day 1 on a fresh repository and
# cache, day 2 with day 1 as parent and the cache kept), rclone sync (changed files whole; its
# defaults: modification times read back with a HEAD per object).
export RESTIC_PASSWORD=bench
rclone_s3() {
  env -u AWS_CA_BUNDLE RCLONE_CONFIG="$work/rclone.conf" RCLONE_S3_PROVIDER=Ceph \
    RCLONE_S3_ENDPOINT="$URL" RCLONE_S3_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
    RCLONE_S3_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" RCLONE_S3_REGION=us-east-1 \
    RCLONE_S3_FORCE_PATH_STYLE=true rclone "$@"
}
: >"$work/rclone.conf"
restic_on=$(command -v restic >/dev/null && echo 1 || true)
rclone_on=$(command -v rclone >/dev/null && echo 1 || true)
[ -z "$restic_on" ] || restic -r "s3:$URL/stitch/restic" init -q >/dev/null
declare -A out
day() {  # day N: every tool's backup of the tree as it is
  local n=$1 base=()
  [ "$n" = 1 ] || base=(--base s3://stitch/b/day$((n - 1)))
  measured "$STITCH" backup "$T" "s3://stitch/b/day$n" "${base[@]}" --json
  out[stitch$n]="{\"s\":$secs,$reqs,\"bytes_stored\":$(json_num bytes_stored)}"
  if [ -n "$restic_on" ]; then
    measured restic -r "s3:$URL/stitch/restic" backup -q --json "$T"
    out[restic$n]="{\"s\":$secs,$reqs,\"data_added\":$(json_num data_added)}"
  fi
  if [ -n "$rclone_on" ]; then
    measured rclone_s3 sync "$T" :s3:stitch/rclone
    out[rclone$n]="{\"s\":$secs,$reqs}"
  fi
}
day 1

# Day 2: append 1..4 KiB to every tenth file (as backup_tree.sh does).
append_every_tenth "$T"
day 2

manifest=$(curl -sfI "${SIGN[@]}" "$URL/stitch/b/day2/.backup" | tr -d '\r' |
  awk 'tolower($1) == "content-length:" { print $2 }')
up() { echo "${out[$1]}" | grep -o '"bytes_up":[0-9]*' | cut -d: -f2; }
field() { echo "${out[$1]}" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2; }
# The bytes: a full check of day 2 (every object read back and hashed) and one appended file.
"$STITCH" verify s3://stitch/b/day2 >/dev/null
probe=$(cd "$T" && find . -type f | sort | sed -n 10p)
"$STITCH" cat s3://stitch/b/day2 "${probe#./}" | cmp - "$T/$probe"
peers=""
for p in restic rclone; do
  [ -n "${out[${p}1]:-}" ] || continue
  peers="$peers,\"$p\":{\"day1\":${out[${p}1]},\"day2\":${out[${p}2]},\"day2_s_ratio\":$(ratio "$(field stitch2 s)" "$(field ${p}2 s)"),\"day2_requests_ratio\":$(ratio "$(field stitch2 requests)" "$(field ${p}2 requests)"),\"day2_bytes_up_ratio\":$(ratio "$(up stitch2)" "$(up ${p}2)")}"
done
echo "{\"bench\":\"s3_backup\",\"files\":$files,\"bytes\":$bytes,\"day1\":${out[stitch1]},\"appended_bytes\":$appended,\"day2\":${out[stitch2]},\"day2_manifest_bytes\":$manifest,\"day2_up_over_appended_plus_manifest\":$(ratio "$(up stitch2)" $((appended + manifest)))$peers}"
