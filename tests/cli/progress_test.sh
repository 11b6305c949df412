#!/usr/bin/env bash
# Progress on a terminal (a pseudo-terminal made by script(1)): backup, restore, verify, flatten
# and prune draw a bar with the rate and the time left; restore, verify and flatten move within
# a large file; nothing is drawn when stderr is not a terminal, with --json or STITCH_NO_PROGRESS.
# Usage: progress_test.sh STITCH
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
command -v script >/dev/null || { echo "SKIP: no script(1)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset STITCH_NO_PROGRESS
S=$work/src
mkdir -p "$S"
head -c 150000000 /dev/urandom >"$S/big.bin"
head -c 1000 /dev/urandom >"$S/small.bin"
# on_tty NAME CMD...: runs CMD with a terminal for stdin, stdout and stderr; its screen output,
# every redraw on a line of its own, in $work/NAME.
on_tty() {
  local name=$1
  shift
  script -qefc "$(printf '%q ' "$@")" /dev/null </dev/null | tr '\r' '\n' >"$work/$name"
  return "${PIPESTATUS[0]}"
}
bar_with_rate() {  # bar_with_rate NAME LABEL: a bar line with a rate and a time left.
  grep -aqE "^$2 \[[# ]{24}\] +[0-9]+% .*[0-9.]+ [KMGT]?i?B/s ETA ([0-9]+[smh]|[0-9]+m[0-9]+s|[0-9]+h[0-9]+m|--)" "$work/$1"
}
on_tty backup "$STITCH" backup "$S" "$work/st/b1"
check "backup: a bar with rate and time left" bar_with_rate backup backup
# From here the bar is redrawn every millisecond: a fast machine reads a large file in less than
# the usual frame of 100 ms, and a bar drawn only before and after it shows no progress within.
export STITCH_PROGRESS_FPS=1000
# A file of 300 MiB of zeros (sparse: fast to make, still read, hashed and written in full).
mkdir -p "$work/zeros"
truncate -s 300M "$work/zeros/big"
echo small >"$work/zeros/small"
on_tty backup_big "$STITCH" backup "$work/zeros" "$work/zst" --jobs 1
check "backup: progress within a large file" \
  grep -aqE '^backup \[.*\] +[0-9]+% [01]/2 files ([0-9]{1,2}|[12][0-9]{2})\.[0-9] MiB/300\.0 MiB' "$work/backup_big"
rm -rf "$work/zst" "$work/zeros"
head -c 1000 /dev/urandom >>"$S/small.bin"
"$STITCH" backup "$S" "$work/st/b2" --base "$work/st/b1" 2>/dev/null
head -c 1000 /dev/urandom >>"$S/small.bin"
"$STITCH" backup "$S" "$work/st/b3" --base "$work/st/b2" 2>/dev/null
on_tty verify "$STITCH" verify "$work/st/b3"
check "verify: a bar with rate and time left" bar_with_rate verify verify
check "verify: progress within a large file (before the first file is done)" \
  grep -aqE '^verify \[.*\] +[0-9]+% 0/2 files [1-9][0-9.]* [KM]iB/' "$work/verify"
on_tty restore "$STITCH" restore "$work/st/b3" "$work/r"
check "restore: a bar with rate and time left" bar_with_rate restore restore
check "restore: progress within a large file" \
  grep -aqE '^restore \[.*\] +[0-9]+% 0/2 files [1-9][0-9.]* [KM]iB/' "$work/restore"
on_tty flatten "$STITCH" flatten "$work/st/b3" "$work/flat"
check "flatten: a bar with rate and time left" bar_with_rate flatten flatten
on_tty prune "$STITCH" prune "$work/st" --keep-last 1
check "prune: a bar for the flattening, with rate and time left" bar_with_rate prune "prune: flatten"
check "prune: the plan printed after it" grep -aq '^flatten b3 (its base b2 goes)' "$work/prune"
check "prune: the bar reaches the end" grep -aqE '^prune: flatten \[#{24}\] 100%' "$work/prune"
# No bar without a terminal, with --json's output, or when turned off.
"$STITCH" verify "$work/st/b3" >"$work/plain" 2>&1
check "not a terminal: no bar" bash -c "! grep -aq 'ETA' '$work/plain'"
on_tty json "$STITCH" verify "$work/st/b3" --json
check "--json: the JSON intact on its own line (the bar cleared first)" \
  grep -aqE $'^(\e\\[K)?\\{"backup":[^\e]*"ok":true[^\e]*\\}$' "$work/json"
on_tty off env STITCH_NO_PROGRESS=1 "$STITCH" verify "$work/st/b3"
check "STITCH_NO_PROGRESS=1: no bar" bash -c "! grep -aq 'ETA' '$work/off'"
finish
