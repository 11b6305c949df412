#!/usr/bin/env bash
# Two builds' cold tree walks, taken in turns: for each of ROUNDS rounds, each build mounts the
# last day of bench/run.sh's chain after the page cache is dropped, `tar -cf - .` of the mount
# goes into /dev/zero (GNU tar skips reading into /dev/null), and the walk's seconds and the
# daemon's peak resident set (VmHWM) are noted; then a native `tar` of the tree, cold. For
# figures that move more with the machine than with the build (the cold walk, the peak RSS):
# only rounds taken side by side compare. Needs root (it drops the page cache). With --dd, the
# cold read is run.sh's `dd bs=1M` of its 317 MiB file instead of the walk (the "tar" figures
# are then that read's).
#
# Usage: bench/walk_ab.sh BUILD_A BUILD_B [--rounds N=6] [--keep DIR] [--dd]
#   BUILD_A, BUILD_B  build folders (their fs/stitchfs); --keep DIR as bench/run.sh's (the chain
#   is built there at scale 1 and 3 days when missing).
# A line per walk goes to stderr; one JSON line with each build's mean and range to stdout.
source "$(dirname "$0")/common.sh"
usage="usage: bench/walk_ab.sh BUILD_A BUILD_B [--rounds N] [--keep DIR] [--dd]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
builds=("$1" "$2")
shift 2
rounds=6 keep="" dd=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --keep) keep=$2; shift ;;
    --dd) dd=1 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
  shift
done
for b in "${builds[@]}"; do
  [ -x "$b/fs/stitchfs" ] || { echo "bench/walk_ab.sh: no $b/fs/stitchfs" >&2; exit 2; }
done
kept_chain_bench bench/walk_ab.sh "$keep"

walk() {
  if [ "$dd" = 1 ]; then
    timed dd if="$1/$big" of=/dev/null bs=1M status=none
  else
    timed sh -c "tar -cf - -C '$1' . >/dev/zero"
  fi
}
# walk_mount BUILD I: "SECONDS PEAK_MIB" of a cold walk through a fresh mount of BUILD, with a
# manifest cache of its own (builds whose cache formats differ would rewrite a shared one at
# every mount, and the writes would land in the next figure).
walk_mount() {
  local pid s hwm
  drop
  STITCH_CACHE_DIR=$work/cache-$2 "$1/fs/stitchfs" "$top" "$M"
  pid=$(pgrep -n -f "$1/fs/stitchfs $top")
  s=$(walk "$M")
  hwm=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status")
  umount_m
  echo "$s $hwm"
}

for i in 0 1; do  # Fills each build's manifest cache once.
  STITCH_CACHE_DIR=$work/cache-$i "${builds[$i]}/fs/stitchfs" "$top" "$M" && umount_m
done
declare -A secs rss
for r in $(seq "$rounds"); do
  for i in 0 1; do
    read -r s h <<<"$(walk_mount "${builds[$i]}" "$i")"
    secs[$i]="${secs[$i]:-} $s" rss[$i]="${rss[$i]:-} $h"
    echo "round $r ${builds[$i]}: tar ${s} s, peak RSS ${h} MiB" >&2
  done
  drop
  n=$(walk "$data/src")
  secs[native]="${secs[native]:-} $n"
  echo "round $r native: tar ${n} s" >&2
done
# stats VALUES: "mean min max".
stats() {
  tr ' ' '\n' <<<"$1" | awk 'NF { s += $1; if (!n || $1 < lo) lo = $1; if (!n || $1 > hi) hi = $1; n++ }
    END { printf "%.3f %.3f %.3f", s / n, lo, hi }'
}
read -r am al ah <<<"$(stats "${secs[0]}")"
read -r bm bl bh <<<"$(stats "${secs[1]}")"
read -r nm nl nh <<<"$(stats "${secs[native]}")"
read -r ar arl arh <<<"$(stats "${rss[0]}")"
read -r br brl brh <<<"$(stats "${rss[1]}")"
fmt='{"bench":"walk_ab","dd":'"$dd"',"rounds":%s,"a":"%s","b":"%s",'
for k in a_tar b_tar native_tar a_rss b_rss; do fmt+="\"${k}_mean\":%s,\"${k}_min\":%s,\"${k}_max\":%s,"; done
# shellcheck disable=SC2059  # (The format is built above.)
printf "${fmt%,}}\n" \
  "$rounds" "${builds[0]}" "${builds[1]}" "$am" "$al" "$ah" "$bm" "$bl" "$bh" "$nm" "$nl" "$nh" \
  "$ar" "$arl" "$arh" "$br" "$brl" "$brh"
