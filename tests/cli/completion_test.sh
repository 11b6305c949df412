#!/usr/bin/env bash
# The bash completion (completion/stitch.bash), called as bash calls it: COMP_WORDS split as
# bash splits a line (at spaces, '=' and ':'), COMP_CWORD the word completed. Its options are
# checked against `stitch COMMAND --help` and `stitchfs --help`, so neither can drift.
# Usage: completion_test.sh STITCH STITCHFS COMPLETION_FILE
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$(realpath "$1")
STITCHFS=$(realpath "$2")
source "$3"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/cwd"
cd "$work/cwd"  # What is completed: the files here.
mkdir -p store/b1 src/sub
touch store/b1/.backup notes.txt chain.tar.zst cfg.xml

# comp FUNCTION WORD...: the candidates for the last WORD, sorted, on one line.
comp() {
  local f=$1
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  "$f"
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
same() {  # same WHAT WANT GOT
  if [ "$2" = "$3" ]; then ok; else bad "$1: wanted '$2', got '$3'"; fi
}

same "commands" "--help --version backup cat diff flatten info log ls prune restore verify" \
  "$(comp _stitch stitch "")"
same "a command by its start" "prune" "$(comp _stitch stitch pr)"
same "a backup: folders and archives, not other files" "chain.tar.zst src store" \
  "$(comp _stitch stitch verify "")"
same "inside a folder" "store/b1" "$(comp _stitch stitch info store/)"
same "backup's source and destination: folders" "src store" "$(comp _stitch stitch backup --json "")"
same "after SOURCE DEST: nothing (no third argument)" "" "$(comp _stitch stitch backup src store/b2 "")"
same "an option's value is skipped when counting arguments" "src store" \
  "$(comp _stitch stitch backup --jobs 4 src "")"
same "--checksum's values" "clickhouse xxh3" "$(comp _stitch stitch backup --checksum "")"
same "a count is typed" "" "$(comp _stitch stitch prune --keep-last "")"
same "--base: a backup" "store/b1" "$(comp _stitch stitch verify --base store/)"
same "--base=VALUE, split at '=' by bash" "store/b1" "$(comp _stitch stitch verify --base = store/)"
same "--disk NAME=DIR: the folder" "src store" "$(comp _stitch stitch info --disk backups = "")"
same "--clickhouse-config: a file" "cfg.xml" "$(comp _stitch stitch log --clickhouse-config cf)"
same "a path inside a backup is not guessed" "" "$(comp _stitch stitch cat store/b1 "")"

# Object storage is never completed, and nothing is run or read to try: a stitch, aws or curl
# on PATH and a credentials file would each leave a mark.
mkdir -p "$work/fakebin" "$work/home/.aws"
for tool in stitch aws curl; do
  printf '#!/bin/sh\ntouch %s/ran-%s\n' "$work" "$tool" >"$work/fakebin/$tool"
done
chmod +x "$work"/fakebin/*
printf '[default]\naws_access_key_id = AKIA\naws_secret_access_key = SECRET\n' \
  >"$work/home/.aws/credentials"
mkdir -p "s3:/bucket/x" "http:/127.0.0.1:9000/b"  # Local folders that look like URLs, to be sure.
for words in "verify s3 : //" "verify s3 : //bucket/" "log http : //127.0.0.1:9000/b" "verify --base s3 : //b"; do
  # shellcheck disable=SC2086
  got=$(PATH="$work/fakebin:$PATH" HOME="$work/home" AWS_ACCESS_KEY_ID=AKIA comp _stitch stitch $words)
  same "s3/http not completed: stitch $words" "" "$got"
  got=$(PATH="$work/fakebin:$PATH" HOME="$work/home" comp _stitchfs stitchfs ${words#verify })
  same "s3/http not completed: stitchfs ${words#verify }" "" "$got"
done
rm -r "s3:" "http:"
check "nothing was run to complete object storage" test -z "$(ls "$work" | grep '^ran-')"

# Every option of every command, as `stitch COMMAND --help` lists them (usage, common options,
# example), is completed, and nothing else.
for cmd in backup cat diff flatten info log ls prune restore verify; do
  want=$("$STITCH" "$cmd" --help | grep -oE '(^|[][ (,])--?[a-zA-Z][a-zA-Z-]*' | sed 's/^[][ (,]//' |
    sort -u | tr '\n' ' ' | sed 's/ $//')
  same "stitch $cmd: options as --help lists them" "$want" "$(comp _stitch stitch "$cmd" -)"
done

# stitchfs: options, and -o's mount options as `stitchfs --help` lists them.
same "stitchfs options" "--help --version -V -d -f -h -o -s" "$(comp _stitchfs stitchfs -)"
same "stitchfs: the backup or store, then the mount point" "src store" "$(comp _stitchfs stitchfs -f store "")"
usage=$("$STITCHFS" --help | sed -n '/-o OPT/,/-h, --help/p' | sed '1d;$d' | tr '\n' ' ')
while [[ $usage =~ \([^\(\)]*\) ]]; do usage=${usage//"${BASH_REMATCH[0]}"/}; done  # No (...).
want=$(tr ',' '\n' <<<"$usage" | sed 's/^ *//' | grep -oE '^[a-z][a-z0-9_]*=?' | sort | tr '\n' ' ' | sed 's/ $//')
same "-o: every mount option of stitchfs --help" "$want" "$(comp _stitchfs stitchfs -o "")"
check "-o: the list is not empty" test "$(wc -w <<<"$want")" -gt 20
same "-o: after a comma, the rest of the list is kept" \
  "ro,noatime ro,nodev ro,noexec ro,nomanifest ro,nosuid ro,noverify ro,noxattr" \
  "$(comp _stitchfs stitchfs -o ro,no)"
same "-o base=DIR: a folder" "src store" "$(comp _stitchfs stitchfs -o base = "")"
same "-o uid=N: typed" "" "$(comp _stitchfs stitchfs -o uid = "")"
finish
