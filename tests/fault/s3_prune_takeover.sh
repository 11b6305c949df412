#!/usr/bin/env bash
# A prune and a writer at work on one backup's prefix in object storage at the same moment. A
# backup whose writer died before removing its `.lock` (beside its `.backup`) is one a prune
# removes; once its `.backup` is taken out (after prune marked it and proved nothing needs it),
# a writer of this machine may take that dead lock over. One process is held at an exact request by s3_fault_proxy (`hold`) while the other
# runs straight against radosgw:
#  - leftover: a prune killed while removing it; the next prune held at its DeleteObjects of
#    what was left, a writer to the same name meanwhile;
#  - remove: a prune held at its DeleteObjects of the backup it marked, a writer meanwhile;
#  - put back: a prune held while marking a second backup (then failed, so that it unmarks
#    the first one), a writer to the first one's name meanwhile;
#  - rewrite: a prune held while flattening a kept backup in place, a writer to its name
#    meanwhile;
#  - lost lock: a writer held just before its `.backup`, its `.lock` removed meanwhile;
#  - same uuid: the same, its `.lock` rewritten meanwhile by another process with its uuid.
# Whatever each writer answered, the store ends with only good backups: a writer that exited 0
# wrote a backup that verifies and restores exactly; one refused (exit 13) left the other's
# backup as it was, or nothing. The next prune and backup succeed.
# Usage: s3_prune_takeover.sh STITCH S3_FAULT_PROXY RADOSGW_SH
# Exits 77 (skipped) where radosgw cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/fault_lib.sh"
s3_script_start "$@"

# direct ARG...: `stitch ARG...` straight at radosgw (past the proxy and its held request);
# its exit status in direct_rc, its messages in $work/direct.err.
direct() {
  AWS_ENDPOINT_URL=$RGW_URL st "$@" >/dev/null 2>"$work/direct.err"
  direct_rc=$?
}
# q ARG...: `stitch ARG...`, quiet unless it fails.
q() { st "$@" >/dev/null 2>"$work/err" || { sed 's/^/  /' "$work/err"; false; }; }
# dead_lock_backup TREE DEST ARG...: a backup of TREE whose writer was killed after its
# `.backup` went in, before it removed its `.lock`.
dead_lock_backup() {
  faults "DELETE .lock hold 1"
  start_held "$STITCH" backup "$@" && kill_held
  faults
}
# writer_outcome DEST TREE OLD: the writer (direct_rc) either wrote DEST, exactly TREE, or was
# refused (exit 13) and DEST is OLD (a tree), or not a backup (OLD "none").
writer_outcome() {
  case $direct_rc in
    0) exact "$1" "$2" || { echo "  the writer exited 0, but $1 is not its backup"; false; } ;;
    13) if [ "$3" = none ]; then not_a_backup "$1"; else exact "$1" "$3"; fi ;;
    *) echo "  the writer exited $direct_rc: $(cat "$work/direct.err")"; false ;;
  esac
}
# then_usable STORE PREFIX NAME...: the next prune (--keep-last 5) succeeds and the store lists
# exactly NAME..., each good; if d1 is not a backup, nothing of it is left and a backup to its
# name succeeds.
then_usable() {
  local s=$1 p=$2
  shift 2
  check "$p: the next prune succeeds" q prune "$s" --keep-last 5
  check "$p: no prune lock is left" [ -z "$(keys "$p/.stitch-prune.lock")" ]
  check "$p: stitch log lists $*" listed "$s" "$@"
  not_a_backup "$s/d1" || return 0
  check "$p: no object of d1 is left" gone "$p/d1"
  check "$p: a backup to d1's name succeeds" q backup "$C" "$s/d1"
  check "$p: and is exact" exact "$s/d1" "$C"
}
# written: "d1" if the writer wrote it (direct_rc 0).
written() { [ "$direct_rc" != 0 ] || echo d1; }

mk() {  # mk DIR: a tree whose file `f` is read by `exact`.
  mkdir -p "$1/sub" && head -c 200000 /dev/urandom >"$1/f" &&
    head -c 5000 /dev/urandom >"$1/sub/g" && echo "${1##*/}" >"$1/.dot"
}
A=$work/A B=$work/B C=$work/C
mk "$A" && cp -a "$A" "$B" && head -c 3000 /dev/urandom >>"$B/f"
mkdir -p "$C/sub" && head -c 70000 /dev/urandom >"$C/f" && echo c >"$C/sub/c"
DAY0=(--timestamp "2026-10-31 10:00:00")
DAY1=(--timestamp "2026-11-01 10:00:00")
DAY2=(--timestamp "2026-11-02 10:00:00")

# --- leftover: the next prune removing what a killed prune left, a writer meanwhile ---------
p=lo s=s3://stitch/lo
dead_lock_backup "$A" "$s/d1" "${DAY1[@]}"
check "$p: d1 is whole, a dead writer's .lock beside it" \
  [ "$(keys "$p/d1/.backup")$(keys "$p/d1/.lock")" = "$p/d1/.backup$p/d1/.lock" ]
check "$p: d2" q backup "$B" "$s/d2" "${DAY2[@]}"
faults "POST ?delete hold 1"
check "$p: a prune held while removing d1" start_held "$STITCH" prune "$s" --keep-last 1
kill_held
check "$p: d1 is left marked" [ -n "$(keys "$p/d1/.stitch-deleting")" ]
check "$p: d1 is taken out" [ -z "$(keys "$p/d1/.backup")" ]
faults "POST ?delete hold 1"
check "$p: the next prune held while removing the leftover" \
  start_held "$STITCH" prune "$s" --keep-last 1
direct backup "$A" "$s/d1"
release_held 503
check "$p: the prune succeeded (got $held_rc)" [ "$held_rc" = 0 ]
check "$p: the writer's outcome (exit $direct_rc) is a good store" writer_outcome "$s/d1" "$A" none
check "$p: d2 is exact" exact "$s/d2" "$B"
then_usable "$s" "$p" d2 $(written)

# --- remove: a prune removing a backup it set aside, a writer meanwhile ----------------------
p=rm s=s3://stitch/rm
dead_lock_backup "$A" "$s/d1" "${DAY1[@]}"
check "$p: d2" q backup "$B" "$s/d2" "${DAY2[@]}"
faults "POST ?delete hold 1"
check "$p: a prune held while removing d1" start_held "$STITCH" prune "$s" --keep-last 1
direct backup "$A" "$s/d1"
release_held 503
check "$p: the prune succeeded (got $held_rc)" [ "$held_rc" = 0 ]
check "$p: the writer's outcome (exit $direct_rc) is a good store" writer_outcome "$s/d1" "$A" none
then_usable "$s" "$p" d2 $(written)

# --- put back: a prune failing after it marked a backup, a writer meanwhile -------------------
p=pb s=s3://stitch/pb
check "$p: d0" q backup "$B" "$s/d0" "${DAY0[@]}"
dead_lock_backup "$A" "$s/d1" "${DAY1[@]}"
check "$p: d2" q backup "$B" "$s/d2" "${DAY2[@]}"
# Newest first: d1 is marked, then d0's marker is held and refused: d1 is unmarked.
faults "PUT d0/.stitch-deleting hold 1"
check "$p: a prune held setting d0 aside" \
  start_held env STITCH_S3_MAX_ATTEMPTS=1 "$STITCH" prune "$s" --keep-last 1
direct backup "$C" "$s/d1"
release_held 500
check "$p: the prune failed, unmarking d1 (got $held_rc)" [ "$held_rc" = 1 ]
check "$p: the writer's outcome (exit $direct_rc) is a good store" writer_outcome "$s/d1" "$C" "$A"
check "$p: d0 is exact" exact "$s/d0" "$B"
check "$p: stitch log lists d0, d1, d2" listed "$s" d0 d1 d2
then_usable "$s" "$p" d0 d1 d2

# --- rewrite: a prune flattening a kept backup in place, a writer to its name meanwhile -----
p=rw s=s3://stitch/rw
check "$p: d1" q backup "$A" "$s/d1" "${DAY1[@]}"
check "$p: d2 on d1" q backup "$B" "$s/d2" --base "$s/d1" "${DAY2[@]}"
faults "PUT d2/.backup hold 1"
check "$p: a prune held flattening d2" start_held "$STITCH" prune "$s" --keep-last 1
direct backup "$C" "$s/d2"
check "$p: the writer is refused (got $direct_rc)" [ "$direct_rc" = 13 ]
release_held 503
check "$p: the prune succeeded (got $held_rc)" [ "$held_rc" = 0 ]
check "$p: d2 is exact" exact "$s/d2" "$B"
check "$p: nothing of d1 is left" gone "$p/d1"
then_usable "$s" "$p" d2

# --- lost lock: a writer whose .lock goes just before its .backup ---------------------------
p=ll s=s3://stitch/ll
faults "GET stitch/ll/d1/.lock hold 1"
check "$p: a writer held looking at its lock before its .backup" \
  start_held "$STITCH" backup "$A" "$s/d1"
for k in $(keys "$p/d1/.lock"); do s3api DELETE "stitch/$k" >/dev/null; done
release_held 503
direct_rc=$held_rc
cp "$work/held.out" "$work/direct.err"
check "$p: the writer's outcome (exit $direct_rc) is a good store" writer_outcome "$s/d1" "$A" none
check "$p: it wrote no .backup" [ -z "$(keys "$p/d1/.backup")" ]

# --- same uuid, another process: a writer whose .lock another process rewrote with the same
# uuid (as a prune's rewrite of the backup does) just before its .backup ----------------------
p=su s=s3://stitch/su
faults "GET stitch/su/d1/.lock hold 1"
check "$p: a writer held looking at its lock before its .backup" \
  start_held "$STITCH" backup "$A" "$s/d1"
s3api GET "stitch/$p/d1/.lock" | sed 's/^pid .*/pid 1/' >"$work/other.lock"
check "$p: its lock rewritten by another process, same uuid" \
  curl -sf --max-time 60 --aws-sigv4 "aws:amz:us-east-1:s3" \
  --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
  -X PUT --data-binary @"$work/other.lock" "$RGW_URL/stitch/$p/d1/.lock" -o /dev/null
release_held 503
check "$p: the writer is refused (got $held_rc)" [ "$held_rc" = 13 ]
check "$p: it wrote no .backup" [ -z "$(keys "$p/d1/.backup")" ]
check "$p: the other process's lock is left" [ -n "$(keys "$p/d1/.lock")" ]

echo "s3_prune_takeover: $((SECONDS - started)) s"
# shellcheck disable=SC2154  # (lib.sh counts the failures.)
[ "$failed" = 0 ] || { echo "== last lines of the proxy's log"; tail -n 30 "$work/proxy.log"; }
finish
