#!/usr/bin/env bash
# Source-side races of `stitch backup`, each made deterministic by a hook of the fault_inject
# library (a command run right before a chosen open or read of a source file), each checked
# against its intended outcome: growth, shrinking, log rotation, a file replaced by a fifo,
# socket, symlink or folder, an unreadable or vanished file, a folder swapped for a symlink,
# fifos and sockets, and hard links that change between the reads of their names; the base of
# an incremental pruned, removed or replaced while it runs.
# Usage: source_faults.sh STITCH STITCHFS FAULT_INJECT_SO
#   STITCHFS_FAULT_CASES='rotation replaced:fifo ...'  only these cases (names as in ALL below)
#   STITCHFS_FAULT_KEEP=1  keep the work folder
# Exits 77 when the fault-injection library cannot be loaded. Mount checks are skipped without
# /dev/fuse.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
source "$here/fault_lib.sh"
STITCH=$1
STITCHFS=$2
SHIM=$3
need_shim "$SHIM"
export STITCH_NO_PROGRESS=1 STITCH_CACHE_DIR=off
work=$(realpath "$(mktemp -d)")
mounts=()
cleanup() {
  local m
  for m in "${mounts[@]}"; do mountpoint -q "$m" 2>/dev/null && fusermount3 -uz "$m"; done
  if [ "${STITCHFS_FAULT_KEEP:-0}" = 1 ]; then echo "work folder kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
can_mount=0
[ -c /dev/fuse ] && command -v fusermount3 >/dev/null && can_mount=1
MARKER="SECRET-$RANDOM-$RANDOM-MARKER"
mkdir -p "$work/outside/dir"
printf '%s\n' "$MARKER" >"$work/outside/secret.txt"
printf '%s\n' "$MARKER" >"$work/outside/dir/inner.dat"

# backup CASE [VAR=VALUE...] -- [stitch backup options]: backs up $work/CASE/src into
# $work/CASE/dest under the library (timeout 30 s); sets RC, LOG and COUNTS (hooks run).
backup() {
  local c=$1 vars=()
  shift
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  SRC=$work/$c/src DEST=$work/$c/dest
  rm -f "$work/count"
  timeout -k 5 30 env LD_PRELOAD="$SHIM" STITCH_FAULT_COUNT_FILE="$work/count" "${vars[@]}" \
    "$STITCH" backup "$SRC" "$DEST" "$@" >"$work/$c/log" 2>&1
  RC=$?
  LOG=$(cat "$work/$c/log")
  read_counts "$work/count"
  REPRO="env LD_PRELOAD=SO $(show_cmd "${vars[@]}") stitch backup $SRC $DEST $*"
}

# expect CASE WHAT CMD...: a check whose failure prints how to reproduce the run.
expect() {
  local c=$1 what=$2
  shift 2
  local out=${LOG//$'\n'/ | }
  local nl=$'\n'
  if "$@"; then ok; else
    bad "[$c] $what${nl}    rerun: STITCHFS_FAULT_CASES=$CASE_ID STITCHFS_FAULT_KEEP=1 bash tests/fault/source_faults.sh STITCH STITCHFS SO${nl}    command: $REPRO${nl}    exit $RC: ${out:0:300}"
  fi
}

hook_ran() { [ "${COUNTS[hooks]:-0}" -ge 1 ]; }
exit_is() { [ "$RC" = "$1" ]; }
no_marker() { ! grep -rqs "$MARKER" "$1"; }
nothing_at() { [ ! -e "$1" ] || [ -z "$(ls -A "$1")" ]; }

# listed_missing DEST NAME: `stitch info` says the backup is incomplete and names NAME on that
# line, and --json has "incomplete": true and NAME (with a reason) in "missing".
listed_missing() {
  local text
  text=$("$STITCH" info "$1" 2>/dev/null) || return 1
  grep -qi "incomplete" <<<"$text" && grep -qF "$2" <<<"$text" || return 1
  "$STITCH" info "$1" --json >"$work/info.json" 2>/dev/null || return 1
  python3 - "$work/info.json" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ok = d.get("incomplete") is True and any(
    isinstance(m, dict) and m.get("name") == sys.argv[2] and m.get("reason")
    for m in d.get("missing", []))
sys.exit(0 if ok else 1)
EOF
}

# mount_at BACKUP DIR: a stitchfs mount (returns once mounted).
mount_at() {
  mkdir -p "$2"
  mounts+=("$2")
  "$STITCHFS" "$1" "$2"
}

# one_inode A B: the same inode with link count 2; two_inodes A B: different, link count 1 each.
one_inode() { [ "$(stat -c '%i %h' "$1")" = "$(stat -c '%i' "$2") 2" ] && [ "$(stat -c %h "$2")" = 2 ]; }
two_inodes() { [ "$(stat -c %i "$1")" != "$(stat -c %i "$2")" ] && [ "$(stat -c %h "$1")" = 1 ] && [ "$(stat -c %h "$2")" = 1 ]; }

# new_src CASE: an empty source folder with one unrelated file.
new_src() {
  rm -rf "${work:?}/$1"
  mkdir -p "$work/$1/src"
  printf 'unrelated\n' >"$work/$1/src/keep.txt"
}

source "$here/source_cases.sh"

ALL="growth growth_immutable stop_reading shrink_once shrink_always rotation replaced:fifo replaced:socket
  replaced:symlink replaced:folder unreadable vanished folder_swapped:open_folder
  folder_swapped:open_file special_files hard_links hard_links_changing base_pruned base_removed
  base_replaced"
for CASE_ID in ${STITCHFS_FAULT_CASES:-$ALL}; do
  c=$CASE_ID
  if [[ $c == *:* ]]; then "case_${c%%:*}" "${c#*:}"; else "case_$c"; fi
done
finish
