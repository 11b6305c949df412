#!/usr/bin/env bash
# Proof that a full backup, an incremental backup, `prune` and `flatten` interrupted at any
# destination call (failed with ENOSPC, EIO or EDQUOT, once or from then on, or killed there)
# leave either a complete backup or nothing that opens as one, and change nothing else.
# Usage: dest_faults.sh STITCH FAULT_INJECT_SO
#   STITCHFS_FAULT_FULL=1   the ~20-file tree and a store of 4 backups (CI: 9 files, 3 backups)
#   STITCHFS_FAULT_ONLY='OP KIND N ERRNO'  only that case (e.g. 'incr write 3 EIO'); shows the
#                           command's output and keeps the work folder
#   STITCHFS_FAULT_OPS='full incr prune flatten'  the operations swept
# Exits 77 when the fault-injection library cannot be loaded.
set -uo pipefail
shopt -s nullglob dotglob
here=$(cd "$(dirname "$0")" && pwd)
source "$here/fault_lib.sh"
STITCH=$1
SHIM=$2
need_shim "$SHIM"
export STITCH_NO_PROGRESS=1 STITCH_CACHE_DIR=off
FULL=${STITCHFS_FAULT_FULL:-0}
ONLY=${STITCHFS_FAULT_ONLY:-}
read -r -a OPS <<<"${STITCHFS_FAULT_OPS:-full incr prune flatten}"
KINDS=(open write sync rename mkdir unlink close any)
ERRNOS=(ENOSPC EIO EDQUOT)
LAST=$([ "$FULL" = 1 ] && echo 3 || echo 2)  # The store to prune holds b0..b$LAST.
# On a tmpfs where there is one: syncs cost nothing there, and the calls made are the same.
tmp_root=$([ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")
work=$(realpath "$(mktemp -d -p "$tmp_root")")
cleanup() { if [ -z "$ONLY" ]; then rm -rf "$work"; else echo "work folder kept: $work"; fi; }
trap cleanup EXIT
started=$SECONDS

# --- fixtures: states s0..s3 of a source tree, a base chain b0 <- b1, a store to prune --------
setup() {
  local i prev=""
  make_state0 "$work/states/s0" "$FULL"
  for i in 1 2 3; do
    cp -a "$work/states/s$((i - 1))" "$work/states/s$i"
    next_state "$work/states/s$i" "$i" "$FULL"
  done
  cp -a "$work/states/s2" "$work/src"
  "$STITCH" backup "$work/states/s0" "$work/base/b0" >/dev/null 2>&1 &&
    "$STITCH" backup "$work/states/s1" "$work/base/b1" --base "$work/base/b0" >/dev/null 2>&1 ||
    { echo "FAIL: cannot make the base backups"; exit 1; }
  for ((i = 0; i <= LAST; i++)); do
    "$STITCH" backup "$work/states/s$i" "$work/pstore/b$i" ${prev:+--base "$prev"} \
      --timestamp "2026-03-0$((i + 1)) 03:00:00" >/dev/null 2>&1 ||
      { echo "FAIL: cannot make the store to prune"; exit 1; }
    prev=$work/pstore/b$i
  done
  OUTSIDE=("$work/states" "$work/src" "$work/base" "$work/pstore")
  tar -C "$work" -cf "$work/pristine.tar" states src base pstore
  PRISTINE=$(fingerprint "${OUTSIDE[@]}")
  mark_outside
}

# A marker newer than every change outside the destination: a run that changes anything there
# (content, mode, owner, name, link) gives it a newer ctime, seen by find -cnewer.
mark_outside() {
  sleep 0.05
  touch "$work/marker"
}

# Puts back everything outside the destination after a run that changed it.
restore_outside() {
  rm -rf "${OUTSIDE[@]}"
  tar -C "$work" -xpf "$work/pristine.tar"
  mark_outside
}

# prepare OP: a fresh destination in a folder of its own; sets DEST, CMD and EXPECTED.
RUN=0
prepare() {
  RUN=$((RUN + 1))
  OUT=$work/runs/$RUN
  DEST=$OUT/dest
  case $1 in
    full) CMD=("$STITCH" backup "$work/src" "$DEST") EXPECTED=$work/states/s2 ;;
    incr) CMD=("$STITCH" backup "$work/src" "$DEST" --base "$work/base/b1") EXPECTED=$work/states/s2 ;;
    flatten) CMD=("$STITCH" flatten "$work/base/b1" "$DEST") EXPECTED=$work/states/s1 ;;
    prune)
      DEST=$OUT/store
      mkdir -p "$OUT" && cp -a "$work/pstore" "$DEST"
      CMD=("$STITCH" prune "$DEST" --keep-last 1) EXPECTED=$work/states/s$LAST
      ;;
  esac
}

# --- checks of one run: each problem found is appended to PROBLEMS, each remark to NOTES -------
# check_backup B EXPECTED: B verifies, restores byte-exact, and holds no .stitch-tmp.
check_backup() {
  "$STITCH" verify "$1" >/dev/null 2>&1 || PROBLEMS+=("${1##*/} does not verify")
  rm -rf "$work/r"
  if ! "$STITCH" restore "$1" "$work/r" >/dev/null 2>&1; then
    PROBLEMS+=("restore of ${1##*/} fails")
  elif ! same_tree "$work/r" "$2"; then
    PROBLEMS+=("restore of ${1##*/} differs from the expected tree")
  fi
  no_tmp "$1"
}

# no_tmp B: B, which opens as a backup, holds no .stitch-tmp.
no_tmp() {
  local found=("$1"/.stitch-tmp* "$1"/*/.stitch-tmp*)
  [ ${#found[@]} = 0 ] || PROBLEMS+=(".stitch-tmp left in ${1##*/}, which opens as a backup")
}

# residue DIR: what a failed run left in a folder that does not open as a backup.
residue() {
  local all=("$1"/*)
  if [ ${#all[@]} = 0 ]; then
    echo "an empty folder"
  elif [ -e "$1/.lock" ]; then
    echo "a folder with .lock (a later run takes it over)"
  else
    echo "a folder without .lock: a later run to it is refused (${all[*]##*/})"
  fi
}

# check_new RC: the destination of a backup or flatten holds a complete backup or nothing.
check_new() {
  local rc=$1 irc
  OUTCOME=nothing
  if [ -e "$DEST" ]; then
    "$STITCH" info "$DEST" >/dev/null 2>&1
    irc=$?
    if [ "$irc" = 0 ]; then
      OUTCOME=complete
      check_backup "$DEST" "$EXPECTED"
      [ "$rc" = 0 ] || NOTES+=("failed (exit $rc) but left a backup that opens")
    elif [ "$irc" = 10 ]; then
      NOTES+=("left DEST $(residue "$DEST")")
    else
      PROBLEMS+=("DEST is neither a backup nor absent: stitch info exits $irc")
    fi
  fi
  [ "$rc" != 0 ] || [ "$OUTCOME" = complete ] || PROBLEMS+=("exit 0 without a complete backup")
}

# store_names STORE: the backups a store lists (dot-names are work folders).
store_names() {
  local all=() d
  for d in "$1"/*; do [[ ${d##*/} == .* ]] || all+=("${d##*/}"); done
  echo "${all[*]}"
}

# check_store RC: after prune, the kept backup restores byte-exact, every backup that opens
# verifies, and a prune that succeeded left only the kept backup, flattened.
check_store() {
  local rc=$1 b irc kept=b$LAST
  for ((b = 0; b <= LAST; b++)); do
    [ -e "$DEST/b$b" ] || continue
    "$STITCH" info "$DEST/b$b" >/dev/null 2>&1
    irc=$?
    if [ "b$b" = "$kept" ]; then
      check_backup "$DEST/$kept" "$EXPECTED"
    elif [ "$irc" = 0 ]; then
      "$STITCH" verify "$DEST/b$b" >/dev/null 2>&1 || PROBLEMS+=("b$b opens but does not verify")
      no_tmp "$DEST/b$b"
    else  # Not kept: it may be half-way out.
      NOTES+=("left b$b (to be removed) that no longer opens (stitch info exits $irc)")
    fi
  done
  [ -e "$DEST/$kept" ] || PROBLEMS+=("the kept backup $kept is gone")
  OUTCOME=nothing
  [ "$rc" = 0 ] || return 0
  OUTCOME=complete
  # A backup prune could not read is kept (stitch(1)), and so is its chain: a remark only.
  [ "$(store_names "$DEST")" = "$kept" ] || NOTES+=("exit 0 but the store still lists more than $kept")
  "$STITCH" info "$DEST/$kept" 2>/dev/null | grep -q "chain (1 backup)" ||
    NOTES+=("exit 0 but $kept still has a base")
}

# rerun_prune: running the same prune again, without faults, finishes the job.
rerun_prune() {
  local rc
  timeout -k 5 60 "${CMD[@]}" >/dev/null 2>&1
  rc=$?
  if [ "$rc" != 0 ]; then PROBLEMS+=("prune run again exits $rc"); return; fi
  [ "$(store_names "$DEST")" = "b$LAST" ] || PROBLEMS+=("prune run again leaves: $(store_names "$DEST")")
  check_backup "$DEST/b$LAST" "$EXPECTED"
}

# rerun_backup: after a kill, the next run to the same DEST takes it over and succeeds.
rerun_backup() {
  [ -e "$DEST" ] && ! "$STITCH" info "$DEST" >/dev/null 2>&1 || return 0
  local rc
  timeout -k 5 60 "${CMD[@]}" >/dev/null 2>&1
  rc=$?
  if [ "$rc" != 0 ]; then PROBLEMS+=("the next run to the killed DEST exits $rc"); return; fi
  check_backup "$DEST" "$EXPECTED"
}

# check_outside: nothing outside the destination changed (see mark_outside); on a change, the
# checksums and `stitch verify` of the other backups say what.
check_outside() {
  local f
  for f in "$OUT"/*; do [ "$f" = "$DEST" ] || PROBLEMS+=("left beside DEST: ${f##*/}"); done
  [ -z "$(find "${OUTSIDE[@]}" -cnewer "$work/marker" -print -quit)" ] && return 0
  PROBLEMS+=("something outside DEST changed (source or other backups)")
  [ "$(fingerprint "${OUTSIDE[@]}")" = "$PRISTINE" ] || PROBLEMS+=("their checksums changed")
  for f in "$work"/base/* "$work"/pstore/*; do
    "$STITCH" verify "$f" >/dev/null 2>&1 || PROBLEMS+=("existing backup ${f##*/} no longer verifies")
  done
  restore_outside
}

# check_run OP RC ERRNO: every check of a run whose count file is in COUNTS.
check_run() {
  local op=$1 rc=$2 err=$3
  if [ "$rc" = 142 ] || [ "$rc" = 124 ]; then PROBLEMS+=("hung (killed after 60 s)"); fi
  if [ "$rc" -gt 128 ] && [ "$rc" != 142 ] && { [ "$rc" != 137 ] || [ "$err" != KILL ]; }; then
    PROBLEMS+=("died of signal $((rc - 128))")
  fi
  [ -n "${COUNTS[any]:-}" ] || PROBLEMS+=("no count file: the command did not exit normally")
  [ "${COUNTS[injected]:-0}" != 0 ] || [ "$rc" = 0 ] || PROBLEMS+=("failed (exit $rc) with no fault injected")
  if [ "$op" = prune ]; then check_store "$rc"; else check_new "$rc"; fi
  check_outside
  if [ "$op" = prune ]; then rerun_prune; elif [ "$err" = KILL ]; then rerun_backup; fi
  [ "${COUNTS[injected]:-0}" = 0 ] || [ "$rc" != 0 ] || NOTES+=("a fault was injected but the command succeeded")
}

# --- one run --------------------------------------------------------------------------------
declare -A RUNS=() FIRED=() FAILED_CALLS=() COMPLETE=() NOTHING=() BAD=() NOTED=() NOTED_KINDS=()
VIOLATIONS=()

# run_case OP KIND N ERRNO STICKY
run_case() {
  local op=$1 kind=$2 n=$3 err=$4 sticky=$5
  local id="$op $kind $n $err"
  [ -z "$ONLY" ] || [ "$ONLY" = "$id" ] || return 0
  prepare "$op"
  rm -f "$work/count"
  local env=(LD_PRELOAD="$SHIM" STITCH_FAULT_DEST="$DEST" STITCH_FAULT_KIND="$kind"
    STITCH_FAULT_N="$n" STITCH_FAULT_ERRNO="$err" STITCH_FAULT_STICKY="$sticky"
    STITCH_FAULT_TIMEOUT=60 STITCH_FAULT_COUNT_FILE="$work/count")
  { (export "${env[@]}" && exec "${CMD[@]}") >"$work/log" 2>&1; } 2>/dev/null
  local rc=$?
  [ -z "$ONLY" ] || { echo "exit $rc:"; cat "$work/log"; }
  read_counts "$work/count"
  PROBLEMS=() NOTES=() OUTCOME=""
  check_run "$op" "$rc" "$err"
  local mode=error
  [ "$err" != KILL ] || mode=kill
  record "$op" "$id" "$rc" "$mode" "$kind" "${env[@]}" "${CMD[@]}"
  [ -n "$ONLY" ] || [ $((RUN % 50)) != 0 ] || rm -rf "$work/runs"
}

# record OP ID RC MODE KIND COMMAND...: tallies the outcome of the run just checked.
record() {
  local op=$1 id=$2 rc=$3 mode=$4 kind=$5 p
  shift 5
  RUNS[$op]=$((${RUNS[$op]:-0} + 1))
  [ "${COUNTS[injected]:-0}" = 0 ] || FIRED[$op]=$((${FIRED[$op]:-0} + 1))
  FAILED_CALLS[$op]=$((${FAILED_CALLS[$op]:-0} + ${COUNTS[injected]:-0}))
  if [ ${#PROBLEMS[@]} -gt 0 ]; then
    BAD[$op]=$((${BAD[$op]:-0} + 1))
    local what="" nl=$'\n'
    for p in "${PROBLEMS[@]}"; do what+="$p; "; done
    VIOLATIONS+=("[$id] exit $rc: ${what%; }$nl    rerun: STITCHFS_FAULT_ONLY='$id'$([ "$FULL" = 1 ] && echo " STITCHFS_FAULT_FULL=1") bash tests/fault/dest_faults.sh STITCH SO$nl    command: $(show_cmd "$@")")
  elif [ "$OUTCOME" = complete ]; then
    COMPLETE[$op]=$((${COMPLETE[$op]:-0} + 1))
  else
    NOTHING[$op]=$((${NOTHING[$op]:-0} + 1))
  fi
  for p in "${NOTES[@]}"; do
    p="$op ($mode): $p"
    NOTED[$p]=$((${NOTED[$p]:-0} + 1))
    [[ " ${NOTED_KINDS[$p]:-} " == *" $kind "* ]] || NOTED_KINDS[$p]+=" $kind"
  done
}

# count_calls OP: how many destination calls of each kind a run of OP makes without faults.
declare -A CALLS=()
count_calls() {
  local op=$1 k line="$1: destination calls:"
  prepare "$op"
  (export LD_PRELOAD="$SHIM" STITCH_FAULT_DEST="$DEST" STITCH_FAULT_COUNT_FILE="$work/count" &&
    exec "${CMD[@]}") >/dev/null 2>&1 || echo "FAIL: $op fails without faults"
  read_counts "$work/count"
  for k in "${KINDS[@]}"; do
    CALLS[$op.$k]=${COUNTS[$k]:-0}
    line+=" $k ${CALLS[$op.$k]}"
  done
  echo "$line"
}

# sweep OP: every kind and every N, errnos and sticky/once cycled; then a kill at every call.
sweep() {
  local op=$1 ki n i k
  count_calls "$op"
  for ki in "${!KINDS[@]}"; do
    k=${KINDS[$ki]}
    for ((n = 1; n <= CALLS[$op.$k]; n++)); do
      i=$((n - 1 + ki))
      run_case "$op" "$k" "$n" "${ERRNOS[i % 3]}" $((i % 2))
    done
  done
  for ((n = 1; n <= CALLS[$op.any]; n++)); do run_case "$op" any "$n" KILL 0; done
}

report() {
  local op p
  echo "== fault sweep: $((SECONDS - started)) s, $([ "$FULL" = 1 ] && echo "full tree" || echo "CI tree")"
  for op in "${OPS[@]}"; do
    printf '%-8s runs %4d  with a fault injected %4d (%5d calls failed)  complete %4d  nothing left %4d  violations %4d\n' \
      "$op" "${RUNS[$op]:-0}" "${FIRED[$op]:-0}" "${FAILED_CALLS[$op]:-0}" "${COMPLETE[$op]:-0}" \
      "${NOTHING[$op]:-0}" "${BAD[$op]:-0}"
  done
  if [ ${#NOTED[@]} -gt 0 ]; then
    echo "== remarks (not violations)"
    for p in "${!NOTED[@]}"; do
      printf '  %s [%d runs; kinds:%s]\n' "$p" "${NOTED[$p]}" "${NOTED_KINDS[$p]}"
    done | LC_ALL=C sort
  fi
  if [ ${#VIOLATIONS[@]} -gt 0 ]; then
    echo "== violations"
    for p in "${VIOLATIONS[@]}"; do echo "  $p"; done
  fi
  echo "${#VIOLATIONS[@]} violations"
}

setup
for op in "${OPS[@]}"; do sweep "$op"; done
[ "$(fingerprint "${OUTSIDE[@]}")" = "$PRISTINE" ] || VIOLATIONS+=("the source or the other backups changed during the sweep")
report
[ ${#VIOLATIONS[@]} = 0 ]
