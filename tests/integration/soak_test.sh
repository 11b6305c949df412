#!/usr/bin/env bash
# Soak test of a live store mount: for a set time, a writer keeps adding daily backups to a store,
# a pruner prunes it (kept backups whose base goes are flattened in place), a replacer swaps
# backup folders for different backups under the same name, 8 readers compare every byte of
# backups read through the mount (by name, latest, at/ and by-uuid/) with exact reference trees,
# and 2 walkers run find and ls -lR over the whole mount, all at once, on one mount that stays up
# for the whole run. Then the store is mounted afresh and every kept backup compared once more.
#
# Usage: soak_test.sh STITCH STITCHFS [SECONDS | --long]
#   SECONDS: from the argument, else $STITCHFS_SOAK_SECONDS, else 45 (CI). --long: 3600.
#   STITCHFS_SOAK_KEEP=1 keeps the work folder (events, logs, failures) for a look afterwards.
#   STITCHFS_SOAK_PRUNE_EVERY / _REPLACE_EVERY (seconds between prunes / replacements, default
#   4 and 5; 0 turns that process off, to see which change a failure comes from).
# Exits 77 (skipped) where FUSE is unusable. Details of the design: tests/integration/soak/*.
#
# Hard failures (exit 1): wrong bytes (a file whose content is not exactly that of the backup the
# mount showed, or of a generation other than the one the store held), any error reading a
# backup the store kept unchanged during the read (EIO or ENOENT on a kept backup: flattening
# in place must be invisible), a backup served with another uuid or timestamp than its folder
# holds, latest/at/by-uuid leading elsewhere than the store's state says, a listing that differs
# from the backup's tree, a removed backup still shown, a read or walk hanging, a failed backup,
# prune or replacement, the daemon dying or not unmounting, and the daemon's RSS going over
# STITCHFS_SOAK_RSS_MB (default 320 MiB: the mount's cache_mb 64 + manifest_cache_mb 16 + 240
# for threads, FUSE buffers and allocator slack; measured around 30 MiB; 1300 under ASan).
# The mount may be up to 3 s behind the store (re-read once a second, 1 s entry timeout): reads
# that overlap a change by less than that are judged against every state of that window.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
STITCHFS=$2
SECS=${3:-${STITCHFS_SOAK_SECONDS:-45}}
[ "$SECS" = --long ] && SECS=3600
case $SECS in '' | *[!0-9]*) echo "usage: soak_test.sh STITCH STITCHFS [SECONDS | --long]"; exit 2 ;; esac
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  echo "SKIP: no /dev/fuse or fusermount3"
  exit 77
fi
READERS=${STITCHFS_SOAK_READERS:-8}
MOUNT_OPTS=max_backups=8,cache_mb=64,manifest_cache_mb=16
RSS_MB=${STITCHFS_SOAK_RSS_MB:-320}
# An AddressSanitizer build (gcc links libasan, clang links its runtime in: both name __asan_init).
nm -D "$STITCHFS" 2>/dev/null | grep ' __asan_init$' >/dev/null && RSS_MB=${STITCHFS_SOAK_RSS_MB:-1300}
export STITCH STITCHFS START_US=${EPOCHREALTIME/./}
W=$(mktemp -d)
export W
export KEEP_LAST=4 KEEP_DAILY=8 PACE=0.3
export PRUNE_EVERY=${STITCHFS_SOAK_PRUNE_EVERY:-4} REPLACE_EVERY=${STITCHFS_SOAK_REPLACE_EVERY:-5}
SOAK_SHM=$(mktemp -d /dev/shm/stitchfs-soak.XXXXXX 2>/dev/null) || SOAK_SHM=$W/tmp
export SOAK_SHM                    # where readers copy files out of the mount
here=$(cd "$(dirname "$0")" && pwd)/soak
source "$here/common.sh"
mkdir -p "$STORE" "$M" "$REFS" "$W/log" "$W/stats" "$W/tmp" "$W/mnt2"
touch "$EVENTS" "$FAILS"
workers=() dpid=""

stop_workers() {
  local p deadline=$(($(now_us) + ${1:-0}))
  touch "$W/stop"
  for p in "${workers[@]}"; do
    while kill -0 "$p" 2>/dev/null && [ "$(now_us)" -lt "$deadline" ]; do sleep 0.2; done
    kill -0 "$p" 2>/dev/null && { echo "worker $p did not stop: killed"; kill -TERM -- "-$p" 2>/dev/null; }
  done
  sleep 0.5
  for p in "${workers[@]}"; do kill -KILL -- "-$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  workers=()
}
cleanup() {
  stop_workers 0
  for m in "$M" "$W/mnt2"; do
    mountpoint -q "$m" 2>/dev/null && { T 30 fusermount3 -u "$m" || fusermount3 -uz "$m"; }
  done
  [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null && kill -KILL "$dpid"
  [[ "$SOAK_SHM" == /dev/shm/* ]] && rm -rf "$SOAK_SHM"
  if [ "${STITCHFS_SOAK_KEEP:-0}" = 1 ]; then echo "work folder kept: $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# wait_until SECONDS CMD...: polls a readiness check.
wait_until() {
  local end=$(($(now_us) + $1 * 1000000)); shift
  until "$@"; do [ "$(now_us)" -gt "$end" ] && return 1; sleep 0.1; done
}
spawn() { setsid bash "$here/$1" "${@:2}" </dev/null >>"$W/log/workers.out" 2>&1 & workers+=($!); }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
total() { cat "$W"/stats/* 2>/dev/null | awk -F= -v k="$1" '$1 == k { s += $2 } END { printf "%.0f", s }'; }

echo "soak: $SECS s, $READERS readers, store $STORE, mount -o $MOUNT_OPTS, RSS bound $RSS_MB MiB"
# The writer starts the store; the store is mounted once it holds a backup.
spawn store_ops.sh writer
if ! wait_until 300 grep -q ' E w1 ' "$EVENTS" || ! grep -q ' E w1 add ' "$EVENTS"; then
  bad "the first backup was not made: $(cat "$FAILS")"; finish; exit 1
fi
"$STITCHFS" -f "$STORE" "$M" -o "$MOUNT_OPTS" >"$W/log/daemon.out" 2>"$W/log/daemon.err" &
dpid=$!
wait_until 30 mountpoint -q "$M" || { bad "the store did not mount: $(tail -3 "$W/log/daemon.err")"; finish; exit 1; }
[ "$PRUNE_EVERY" != 0 ] && spawn store_ops.sh pruner
[ "$REPLACE_EVERY" != 0 ] && spawn store_ops.sh replacer
for i in $(seq 1 "$READERS"); do spawn reader.sh reader "$i"; done
spawn reader.sh walker 1
spawn reader.sh walker 2

end=$(($(now_us) + SECS * 1000000))
max_rss=0 daemon_died=0 rss_over=0 next_print=$(($(now_us) + 15000000)) rss_q=""
quarter=$(($(now_us) + SECS * 250000))
while [ "$(now_us)" -lt "$end" ]; do
  kb=$(rss_kb "$dpid")
  if [ -z "$kb" ]; then daemon_died=1; fail daemon "the stitchfs daemon died: $(tail -3 "$W/log/daemon.err")"; break; fi
  [ "$kb" -gt "$max_rss" ] && max_rss=$kb
  [ -z "$rss_q" ] && [ "$(now_us)" -gt "$quarter" ] && rss_q=$kb     # to show growth, if any
  [ "$kb" -gt $((RSS_MB * 1024)) ] && [ "$rss_over" = 0 ] && { rss_over=1; fail rss "daemon RSS $((kb / 1024)) MiB > $RSS_MB MiB"; }
  for p in "${workers[@]}"; do kill -0 "$p" 2>/dev/null || fail harness "worker $p exited early"; done
  [ "$(now_us)" -gt "$next_print" ] && next_print=$((next_print + 15000000)) &&
    echo "  $(rel): $(total backups) backups, $(total prunes) prunes, $(total replacements) replacements, $(total files_ok) files compared, $(grep -c . "$FAILS") failures, RSS $((kb / 1024)) MiB"
  sleep 1
done
echo "stopping the workers (each finishes what it is doing)"
stop_workers 180000000
secs_run=$((($(now_us) - START_US) / 1000000))
kb=$(rss_kb "$dpid"); [ -n "$kb" ] && [ "$kb" -gt "$max_rss" ] && max_rss=$kb

# The mount must go away cleanly, and the daemon with it.
if [ "$daemon_died" = 0 ]; then
  T 60 fusermount3 -u "$M" 2>"$W/tmp/umount.err" || fail unmount "fusermount3 -u failed: $(cat "$W/tmp/umount.err")"
  if wait_until 30 bash -c "! kill -0 $dpid 2>/dev/null"; then
    wait "$dpid"; rc=$?
    [ "$rc" = 0 ] || fail unmount "the daemon exited $rc after the unmount"
  else
    fail unmount "the daemon did not exit within 30 s of the unmount"
  fi
fi

grep -E 'Sanitizer|runtime error' "$W/log/daemon.err" >"$W/tmp/san" &&
  fail daemon "the daemon's sanitizers reported: $(head -3 "$W/tmp/san")"

# A fresh mount of what the store holds now: every backup equals its tree, and verifies.
WHO=final
if T 60 "$STITCHFS" "$STORE" "$W/mnt2" 2>"$W/tmp/mount2.err"; then
  for b in "$STORE"/*/; do
    name=$(basename "$b")
    u=$(T 30 getfattr --only-values -n user.stitchfs.uuid "$W/mnt2/$name/" 2>/dev/null)
    if [ ! -d "$REFS/$u" ]; then fail final "$name: uuid $u has no reference tree"; continue; fi
    T 300 diff -r --no-dereference "$REFS/$u/tree" "$W/mnt2/$name" >"$W/tmp/final.diff" 2>&1 ||
      fail final "a fresh mount of $name (uuid $u) differs from its tree: $(head -3 "$W/tmp/final.diff" | tr '\n' ' ')"
    T 300 "$STITCH" verify "$b" >/dev/null 2>"$W/tmp/verify.err" ||
      fail final "stitch verify $name: $(head -2 "$W/tmp/verify.err" | tr '\n' ' ')"
  done
  T 60 fusermount3 -u "$W/mnt2" || fail unmount "fusermount3 -u of the fresh mount failed"
else
  fail final "the store does not mount afresh: $(cat "$W/tmp/mount2.err")"
fi
final_backups=$(find "$STORE" -mindepth 1 -maxdepth 1 -name '[!.]*' | wc -l)

cnt() { grep -c "^FAIL $1 " "$FAILS"; }
echo "--- failures by kind (sessions or operations):"
awk '{ n[$2]++ } END { for (k in n) printf "  %s: %d\n", k, n[k] }' "$FAILS" | sort
echo "--- first failures of each kind:"
awk '{ if (n[$2]++ < 4) print }' "$FAILS" | cut -c1-900
echo "--- store changes: $(grep -c ' E ' "$EVENTS") ($(grep -c ' E [^ ]* flat ' "$EVENTS") in-place flattenings); $(grep -h 'allowed' "$W"/log/reader* "$W"/log/walker* 2>/dev/null | wc -l) reads with allowed errors or generation switches"
summary="soak: ${secs_run} s, $(total backups) backups ($final_backups kept at the end), $(total prunes) prunes ($(total flattened) flattened in place, $(total removed) removed), $(total replacements) replacements; $(total sessions) reads by $READERS readers: $(total files_ok) files / $(($(total bytes_ok) / 1048576)) MiB compared, wrong bytes $(total wrong_bytes) ($(total wrong_files) files), errors (EIO, ENOENT, ...) on kept backups $(total eio_kept) files in reads, $(total walk_errors_kept) in walks, EIO allowed $(($(total eio_allowed) + $(total walk_errors_allowed))) (removed/replaced), generation switches $(total gen_switch); stale identity $(cnt stale_identity), wrong resolution $(cnt wrong_resolution), wrong listing $(cnt wrong_listing), ghosts $(cnt ghost); $(total walks) walks ($(total walk_entries) entries); max RSS $((max_rss / 1024)) MiB (bound $RSS_MB; $((${rss_q:-0} / 1024)) MiB at a quarter of the run, $((${kb:-0} / 1024)) at the end)"
echo "$summary"
check "no wrong bytes" test "$(total wrong_bytes)$(cnt wrong_bytes)" = 00
check "no error reading a kept backup" test "$(cnt eio_kept)" = 0
check "every backup served with its own uuid and time" test "$(cnt stale_identity)" = 0
check "latest, at/ and by-uuid/ resolve as the store says" test "$(cnt wrong_resolution)" = 0
check "listings equal the trees" test "$(cnt wrong_listing)$(cnt ghost)" = 00
check "nothing hung" test "$(cnt hang)" = 0
check "every backup, prune and replacement succeeded, the store stayed sound" test "$(cnt op_failed)$(cnt store_damaged)" = 00
check "the daemon stayed up and unmounted cleanly" test "$(cnt daemon)$(cnt unmount)" = 00
check "daemon RSS within $RSS_MB MiB (max $((max_rss / 1024)) MiB)" test "$(cnt rss)" = 0
check "a fresh mount shows every kept backup exactly" test "$(cnt final)" = 0
check "the test itself ran as designed" test "$(cnt harness)$(cnt walk_error)" = 00
check "the run made backups, prunes and replacements" test "$(total backups)" -gt 3 -a \
  "$(total prunes)" -gt "$([ "$PRUNE_EVERY" = 0 ] && echo -1 || echo 0)" -a \
  "$(total replacements)" -gt "$([ "$REPLACE_EVERY" = 0 ] && echo -1 || echo 0)"
check "the readers compared files" test "$(total files_ok)" -gt 0
finish
