#!/usr/bin/env bash
# DeleteObjects cut short. S3 applies the keys of one DeleteObjects in no particular order, so a
# process killed during one, or a request that fails midway, leaves ANY subset of its keys
# deleted. Each batch stitch sends is held by s3_fault_proxy (`hold`); a subset of exactly its
# keys is deleted straight at radosgw (only the guards: .backup, .lock, .stitch-deleting; all but
# the guards; random halves), then the process is killed, or its request answered 500 (with
# STITCH_S3_MAX_ATTEMPTS=1, so that it goes on with the failure). The batches:
#  - prune removing a backup (one whose writer died before removing its .lock);
#  - prune flattening a kept backup in place (the old objects deleted after the new .backup);
#  - a writer taking over a dead writer's partial backup;
#  - a failed writer taking back what it wrote.
# After each: every kept backup verifies and restores to its source, `stitch log` lists exactly
# the good backups, the next prune and backup succeed and leave no object of what was removed,
# and no command runs for more than $T seconds.
# Usage: s3_batch_deletes.sh STITCH S3_FAULT_PROXY RADOSGW_SH
# Exits 77 (skipped) where radosgw cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/fault_lib.sh"
s3_script_start "$@"

# backup ARG... / prune ARG...: stitch backup / prune, quiet unless they fail.
backup() { st backup "$@" >/dev/null 2>"$work/err" || { sed 's/^/  /' "$work/err"; false; }; }
prune() { st prune "$@" >/dev/null 2>"$work/err" || { sed 's/^/  /' "$work/err"; false; }; }

# --- A request held while the test acts (start_held, fault_lib.sh) --------------------------
# held ARG...: `stitch ARG...` (one try per request: a failed one fails) until its request is held.
held() { start_held env STITCH_S3_MAX_ATTEMPTS=1 "$STITCH" "$@"; }
# batch: the keys of the held DeleteObjects, one a line.
batch() {
  grep -o '<Key>[^<]*</Key>' "$rules.held" |
    sed "s/<[^>]*>//g; s/&lt;/</g; s/&gt;/>/g; s/&quot;/\"/g; s/&apos;/'/g; s/&amp;/\\&/g"
}
GUARD='/\.(backup|lock(\.[1-9][0-9]*)?|stitch-deleting)$'
# subset MODE: the keys of the held batch that a cut-short DeleteObjects deleted: its guards
# only (MODE guards), all but them (data), or a random half (MODE a seed).
subset() {
  case $1 in
    guards) batch | grep -E "$GUARD" ;;
    data) batch | grep -vE "$GUARD" ;;
    *) batch | awk -v seed="$1" 'BEGIN { srand(seed) } rand() < 0.5' ;;
  esac
}
# cut MODE HOW: the held DeleteObjects cut short: the keys `subset MODE` gives deleted, and its
# process killed (HOW kill) or its request answered 500 (HOW fail: it goes on, and must end
# within $T seconds). Its exit status in held_rc; no faults afterwards.
cut() {
  [ "$2" = kill ] && kill -9 "$(cat "$work/held.pid")"
  local k
  subset "$1" | while read -r k; do s3api DELETE "stitch/$k" >/dev/null; done
  if [ "$2" = fail ]; then
    release_held 500
  else
    await "$held_pid"
    held_rc=$?
    held_pid=
  fi
  faults
}

# ended HOW: the process of the cut batch was killed (HOW kill), or failed with exit 1 (fail).
ended() { if [ "$1" = kill ]; then [ "$held_rc" = 137 ]; else [ "$held_rc" = 1 ]; fi; }

# --- What is checked after each cut --------------------------------------------------------
# same_objects PREFIX REF: the objects under PREFIX/ are named as those under REF/.
same_objects() {
  [ "$(keys "$1/" | sed "s|^$1/||" | sort)" = "$(keys "$2/" | sed "s|^$2/||" | sort)" ] ||
    { echo "  $1 holds: $(keys "$1/" | paste -sd' ')"; return 1; }
}
# no_guard: the held batch holds no .backup, .lock or marker (they go in requests of their own).
no_guard() { [ -z "$(batch | grep -E "$GUARD")" ]; }

# --- Sources: A, B (A changed: an incremental on A stores little), C (other names) ----------
mk() {  # mk DIR: a tree whose file `f` is read by `exact`.
  mkdir -p "$1/sub" && head -c 200000 /dev/urandom >"$1/f" &&
    head -c 5000 /dev/urandom >"$1/sub/g" && echo "${1##*/}" >"$1/.dot" && : >"$1/empty"
}
A=$work/A B=$work/B C=$work/C
mk "$A" && cp -a "$A" "$B" && head -c 3000 /dev/urandom >>"$B/f" && echo new >"$B/sub/new"
mkdir -p "$C/sub" && head -c 70000 /dev/urandom >"$C/f" && echo c >"$C/sub/c"
check "reference backup of C" backup "$C" s3://stitch/ref/c
DAY1=(--timestamp "2026-11-01 10:00:00")
DAY2=(--timestamp "2026-11-02 10:00:00")

# --- prune removing a backup ---------------------------------------------------------------
# Its writer was killed before it removed its .lock: a dead writer's lock beside a .backup.
for cut_as in guards:kill data:kill 1:kill 2:fail 3:kill; do
  mode=${cut_as%:*} how=${cut_as#*:} p=rm-$mode s=s3://stitch/rm-$mode
  faults "DELETE .lock hold 1"
  start_held "$STITCH" backup "$A" "$s/d1" "${DAY1[@]}" && kill_held
  faults
  check "$p: d1 is whole, a dead writer's .lock beside it" \
    [ "$(keys "$p/d1/.backup")$(keys "$p/d1/.lock")" = "$p/d1/.backup$p/d1/.lock" ]
  check "$p: d2" backup "$B" "$s/d2" "${DAY2[@]}"
  faults "POST ?delete hold 1"
  check "$p: prune's removal of d1 held" held prune "$s" --keep-last 1
  check "$p: the batch holds no guard" no_guard
  cut "$mode" "$how"
  check "$p ($how): the cut prune ended as it should (got $held_rc)" ended "$how"
  check "$p: the kept d2 is exact" exact "$s/d2" "$B"
  check "$p: stitch log lists d2 alone" listed "$s" d2
  check "$p: d1 is not a backup" not_a_backup "$s/d1"
  check "$p: the next prune succeeds" prune "$s" --keep-last 1
  check "$p: it left no object of d1" gone "$p/d1"
  check "$p: no prune lock is left" [ -z "$(keys "$p/.stitch-prune.lock")" ]
  check "$p: d2 is still exact" exact "$s/d2" "$B"
  check "$p: a backup to d1's name succeeds" backup "$C" "$s/d1"
  check "$p: and is exact" exact "$s/d1" "$C"
  check "$p: stitch log lists d1 and d2" listed "$s" d1 d2
done

# --- prune flattening a kept backup in place: its old objects deleted after its new .backup --
for cut_as in guards:kill data:kill 1:kill 2:fail 3:kill; do
  mode=${cut_as%:*} how=${cut_as#*:} p=fl-$mode s=s3://stitch/fl-$mode
  check "$p: d1" backup "$A" "$s/d1" "${DAY1[@]}"
  check "$p: d2 on d1" backup "$B" "$s/d2" --base "$s/d1" "${DAY2[@]}"
  faults "POST ?delete hold 1"
  check "$p: the rewrite's deletes held" held prune "$s" --keep-last 1
  check "$p: the batch holds no guard" no_guard
  check "$p: they are d2's old objects" [ -z "$(batch | grep -v "^$p/d2/")" ]
  cut "$mode" "$how"
  check "$p ($how): the cut prune ended as it should (got $held_rc)" ended "$how"
  check "$p: the flattened d2 is exact" exact "$s/d2" "$B"
  check "$p: d1 is exact" exact "$s/d1" "$A"
  check "$p: stitch log lists d1 and d2" listed "$s" d1 d2
  check "$p: the next prune succeeds" prune "$s" --keep-last 1
  check "$p: it left no object of d1" gone "$p/d1"
  check "$p: d2 is still exact" exact "$s/d2" "$B"
  check "$p: an incremental on d2 succeeds" backup "$A" "$s/d3" --base "$s/d2"
  check "$p: and is exact" exact "$s/d3" "$A"
  check "$p: stitch log lists d2 and d3" listed "$s" d2 d3
done

# --- a writer taking over a dead writer's partial backup ------------------------------------
for cut_as in guards:kill data:kill 1:kill 2:fail 3:kill; do
  mode=${cut_as%:*} how=${cut_as#*:} p=to-$mode s=s3://stitch/to-$mode
  check "$p: k" backup "$A" "$s/k"
  faults "PUT .backup hold 1"
  start_held "$STITCH" backup "$B" "$s/b" && kill_held
  faults "POST ?delete hold 1"
  check "$p: the takeover's deletes held" held backup "$C" "$s/b"
  check "$p: the batch holds no guard" no_guard
  cut "$mode" "$how"
  check "$p ($how): the cut backup ended as it should (got $held_rc)" ended "$how"
  check "$p: b is not a backup" not_a_backup "$s/b"
  check "$p: stitch log lists k alone" listed "$s" k
  check "$p: k is exact" exact "$s/k" "$A"
  check "$p: the next prune succeeds" prune "$s" --keep-last 5
  check "$p: the next backup to b succeeds" backup "$C" "$s/b"
  check "$p: and is exact" exact "$s/b" "$C"
  check "$p: no object of the dead writers is left" same_objects "$p/b" ref/c
  check "$p: stitch log lists b and k" listed "$s" b k
done

# --- a failed writer taking back what it wrote (its manifest's PUT refused) -----------------
for cut_as in guards:fail data:fail 1:fail 2:fail 3:kill; do
  mode=${cut_as%:*} how=${cut_as#*:} p=ab-$mode s=s3://stitch/ab-$mode
  check "$p: k" backup "$A" "$s/k"
  faults "PUT .backup 503" "POST ?delete hold 1"
  check "$p: the failed writer's deletes held" held backup "$B" "$s/b"
  check "$p: the batch holds no guard" no_guard
  cut "$mode" "$how"
  check "$p ($how): the failed backup ended as it should (got $held_rc)" ended "$how"
  check "$p: b is not a backup" not_a_backup "$s/b"
  check "$p: stitch log lists k alone" listed "$s" k
  check "$p: the next prune succeeds" prune "$s" --keep-last 5
  check "$p: the next backup to b succeeds" backup "$C" "$s/b"
  check "$p: and is exact" exact "$s/b" "$C"
  check "$p: no object of the failed writer is left" same_objects "$p/b" ref/c
  check "$p: k is exact" exact "$s/k" "$A"
done

echo "s3_batch_deletes: $((SECONDS - started)) s"
# shellcheck disable=SC2154  # (lib.sh counts the failures.)
[ "$failed" = 0 ] || { echo "== last lines of the proxy's log"; tail -n 30 "$work/proxy.log"; }
finish
