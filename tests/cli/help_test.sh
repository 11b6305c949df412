#!/usr/bin/env bash
# stitch --help and stitch COMMAND --help: every command has a description and an example that
# parses, the exit codes are listed once (those of the manual page), and --help after "--" is
# an argument.
# Usage: help_test.sh STITCH MAN_DIR
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
MAN=$2  # stitch.1 and stitchfs.1: the exit codes of both.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
no_codes() { ! grep -qE '^ +[0-9]+  ' <<<"$1"; }
commands="backup cat diff flatten info log ls prune restore verify"

"$STITCH" --help >"$work/help" 2>&1
check "stitch --help exits 0" test $? = 0
for c in $commands; do
  check "stitch --help lists $c" grep -q "^  stitch $c " "$work/help"
done
# The codes of the manual pages' EXIT STATUS, each listed once.
codes=$(for m in "$MAN/stitch.1" "$MAN/stitchfs.1"; do
  sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$m" | sed -n 's/^\.B \([0-9][0-9]*\)$/\1/p'
done | sort -nu)
check "the manual page lists exit codes" test "$(wc -w <<<"$codes")" -ge 10
for code in $codes; do
  check "exit code $code listed once" test "$(grep -cE "^ +$code  " "$work/help")" = 1
done
check "no other exit code listed" test "$(grep -cE '^ +[0-9]+  ' "$work/help")" = "$(wc -w <<<"$codes")"

for c in $commands; do
  out=$("$STITCH" "$c" --help 2>&1)
  check "stitch $c --help exits 0" test $? = 0
  check "stitch $c --help: usage" grep -q "^usage: stitch $c " <<<"$out"
  check "stitch $c --help: an example" grep -qA1 '^example:$' <<<"$out"
  example=$(grep -A1 '^example:$' <<<"$out" | tail -1)
  check "stitch $c --help: the example runs $c" grep -q "^  stitch $c " <<<"$example"
  check "stitch $c --help: exit codes only in stitch --help" no_codes "$out"
  check "stitch -h works too" test "$("$STITCH" "$c" -h 2>&1)" = "$out"
  # The example's arguments parse (its paths, moved under a scratch folder, do not exist: any
  # exit but 2, a bad command line).
  read -ra words <<<"${example//\/srv/$work/srv}"
  words=("${words[@]//\/backups/$work/backups}")
  words=("${words[@]//\/archive/$work/archive}")
  "$STITCH" "${words[@]:1}" >/dev/null 2>&1
  rc=$?
  check "stitch $c: the example is a valid command line (exit $rc)" test "$rc" != 2
done
expect_exit 10 BACKUP_NOT_FOUND -- "$STITCH" cat "$work/none" -- --help
expect_exit 2 "unknown option" -- "$STITCH" verify "$work/none" --helpme
finish
