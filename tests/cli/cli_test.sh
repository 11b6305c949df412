#!/usr/bin/env bash
# End-to-end tests of the `stitch` read commands on fixture backups, including every exit code
# the read side can produce. Usage: cli_test.sh STITCH MAKE_FIXTURE
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
MAKE_FIXTURE=$2
export STITCH_NO_PROGRESS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }


"$MAKE_FIXTURE" chain "$work/s" || { echo "fixture failed"; exit 1; }
S=$work/s

# The archive codecs and libcurl are loaded when first needed, not linked: every start pays for
# each linked library (ms from a cold disk).
check "no archive codec or libcurl linked" bash -c "! ldd '$STITCH' | grep -qE 'libzstd|liblzma|libbz2|libz\.so|libcurl'"
check "stitch --version" grep -qE '^stitch [0-9]+\.[0-9]+\.[0-9]+$' <<<"$("$STITCH" --version)"

# --- reading -----------------------------------------------------------------------------
for b in b0 b1 b2; do
  rm -rf "$work/r"
  check "restore $b" "$STITCH" restore "$S/$b" "$work/r"
  check "restore $b equals the expected tree" diff -r "$work/r" "$S/expected/$b"
  check "verify $b" "$STITCH" verify "$S/$b"
done
check "cat of a 3-segment stitched file" cmp <("$STITCH" cat "$S/b2" data/db/log/data.bin) "$S/expected/b2/data/db/log/data.bin"
check "cat of a renamed file from the base of the base" cmp <("$STITCH" cat "$S/b2" data/db/t/all_1_3_1/x.bin) "$S/expected/b2/data/db/t/all_1_3_1/x.bin"
check "cat of a name with XML specials" cmp <("$STITCH" cat "$S/b2" "store/new & <odd> name.txt") "$S/expected/b2/store/new & <odd> name.txt"
check "cat of an empty file" test -z "$("$STITCH" cat "$S/b1" data/db/t/all_1_1_0/empty.idx)"

rm -rf "$work/part"
check "restore of named paths" "$STITCH" restore "$S/b2" "$work/part" metadata data/db/log/data.bin
check "restore of named paths wrote them" cmp "$work/part/metadata/db/t.sql" "$S/expected/b2/metadata/db/t.sql"
check "restore of named paths wrote only them" test ! -e "$work/part/store"
check "restore leaves no temp files" test -z "$(find "$work/part" -name '.stitch-restore-*')"

info=$("$STITCH" info "$S/b2" --json)
check "info --json figures" grep -q '"num_files":5,"total_size":78160,"num_entries":2,"size_of_entries":28' <<<"$info"
check "info --json chain" grep -q '"level":2' <<<"$info"
check "info text" grep -q "chain (3 backups)" <<<"$("$STITCH" info "$S/b2")"
ls_out=$("$STITCH" ls "$S/b2" -R -l)
check "ls -l stitched" grep -qE '^stitched +8067 +8045  data/db/log/data.bin$' <<<"$ls_out"
check "ls -l dedup" grep -qE '^dedup +6 +0  store/copy.txt$' <<<"$ls_out"
check "ls folder" test "$("$STITCH" ls "$S/b2" data/db)" = "$(printf 'log/\nt/')"
check "ls --json" grep -q '"provenance":"base"' <<<"$("$STITCH" ls "$S/b2" data/db/t/all_1_3_1 --json)"
check "verify --json" grep -q '"ok":true' <<<"$("$STITCH" verify "$S/b2" --json)"

# --- exit codes (man/stitch.1, EXIT STATUS) ------------------------------------------------
expect_exit 2 "unknown option" -- "$STITCH" info "$S/b2" --bogus
expect_exit 2 "unknown command" -- "$STITCH" frobnicate
expect_exit 10 "BACKUP_NOT_FOUND" -- "$STITCH" info "$work/nowhere"
expect_exit 12 "BACKUP_ENTRY_NOT_FOUND" -- "$STITCH" cat "$S/b2" no/such/file
expect_exit 12 "BACKUP_ENTRY_NOT_FOUND" -- "$STITCH" restore "$S/b2" "$work/x" no/such
expect_exit 1 "IO_ERROR" -- "$STITCH" restore "$S/b2" /proc/version/x
# Never into a folder of the chain being read (its data files would be overwritten).
expect_exit 2 "which the restore reads" -- "$STITCH" restore "$S/b2" "$S/b1"
expect_exit 2 "which the restore reads" -- "$STITCH" restore "$S/b2" "$S/b2"
ln -s "$S/b0" "$work/via-link"
expect_exit 2 "which the restore reads" -- "$STITCH" restore "$S/b2" "$work/via-link/sub"
# Nor into another backup, nor through a bind mount (folders compared by identity).
expect_exit 2 "is a backup (it holds a .backup)" -- "$STITCH" restore "$S/b0" "$S/b2"
if mkdir -p "$work/bind" && mount --bind "$S" "$work/bind" 2>/dev/null; then
  expect_exit 2 "a folder of the backup being read" -- "$STITCH" restore "$S/b2" "$work/bind/b1"
  expect_exit 2 "inside a folder of the backup being read" -- "$STITCH" restore "$S/b2" "$work/bind/b0/sub"
  umount "$work/bind"
  # A sub-folder of a backup of the chain bind-mounted as the target, or inside it: its `..` is
  # not where it lies, its real place is (/proc/self/mountinfo).
  mkdir -p "$work/bt/data/db" "$work/bt2"
  if mount --bind "$S/b2/data/db" "$work/bt/data/db"; then
    expect_exit 2 "inside a folder of the backup being read" -- "$STITCH" restore "$S/b2" "$work/bt"
    umount "$work/bt/data/db"
  fi
  if mount --bind "$S/b1/data" "$work/bt2"; then
    expect_exit 2 "inside a folder of the backup being read" -- "$STITCH" restore "$S/b2" "$work/bt2"
    umount "$work/bt2"
  fi
fi
check "refused restores left the chain whole" "$STITCH" verify "$S/b2"
check "and created nothing in it" test ! -e "$S/b0/sub"

cp -r "$S" "$work/v"
sed -i 's|<version>1</version>|<version>3</version>|' "$work/v/b0/.backup"
expect_exit 11 "Version 3 (a packed backup" -- "$STITCH" info "$work/v/b0"
expect_exit 11 "Version 3 (a packed backup" -- "$STITCH" info "$work/v/b2"

cp -r "$S" "$work/d"
sed -i 's|<size>6</size>|<size>5</size>|' "$work/d/b2/.backup"
expect_exit 20 "has 6 bytes, the manifest declares 5" -- "$STITCH" cat "$work/d/b2" "store/new & <odd> name.txt"
printf '<config><version>1</version>' > "$work/d/b1/.backup"
expect_exit 20 "line 1" -- "$STITCH" ls "$work/d/b1"

cp -r "$S" "$work/n"
rm -rf "$work/n/b1"
expect_exit 21 "NO_BASE_BACKUP" -- "$STITCH" info "$work/n/b2"
check "--base override" "$STITCH" verify "$work/n/b2" --base "$S/b1"

cp -r "$S" "$work/w"
sed -i 's|<base_backup_uuid>[^<]*<|<base_backup_uuid>00000000-0000-4000-8000-000000000000<|' "$work/w/b2/.backup"
expect_exit 22 "has different UUID" -- "$STITCH" info "$work/w/b2"

cp -r "$S" "$work/i"
sed -i 's|<name>store/copy.txt</name>|<name>../../etc/passwd</name>|' "$work/i/b2/.backup"
expect_exit 23 "INSECURE_PATH" -- "$STITCH" restore "$work/i/b2" "$work/i/out"
check "nothing written outside the target" test ! -e "$work/etc/passwd"

# A path named twice, or under a file: refused at open, naming both entries (ClickHouse never
# writes either; a mount used to show the folder and warn).
cp -r "$S" "$work/c"
sed -i 's|<name>store/copy.txt</name>|<name>data/db/log/data.bin/x</name>|' "$work/c/b2/.backup"
expect_exit 20 'file "data/db/log/data.bin/x" (<file> number 5) is under file "data/db/log/data.bin"' -- "$STITCH" verify "$work/c/b2"
sed -i 's|<name>data/db/log/data.bin/x</name>|<name>metadata/db/t.sql</name>|' "$work/c/b2/.backup"
expect_exit 20 'file "metadata/db/t.sql" (<file> number 1) and file "metadata/db/t.sql" (<file> number 5) have one name' -- "$STITCH" ls "$work/c/b2"

cp -r "$S" "$work/s3"
sed -i "s|<base_backup>[^<]*<|<base_backup>S3(\&apos;https://s3/bucket/b1\&apos;)<|" "$work/s3/b2/.backup"
# An S3 base on a host that does not resolve: an I/O error naming it, after one attempt here.
expect_exit 1 "https://s3/bucket/b1" -- env STITCH_S3_MAX_ATTEMPTS=1 "$STITCH" info "$work/s3/b2"
sed -i "s|<base_backup>[^<]*<|<base_backup>AzureBlobStorage(\&apos;conn\&apos;, \&apos;c\&apos;, \&apos;b1\&apos;)<|" "$work/s3/b2/.backup"
expect_exit 14 "AzureBlobStorage(...)" -- "$STITCH" info "$work/s3/b2"

# Damage that only reading finds: verify reports every problem, with the backup at fault.
cp -r "$S" "$work/t"
truncate -s 100 "$work/t/b0/data/db/log/data.bin"
echo "corrupt" > "$work/t/b2/store/new & <odd> name.txt"
out=$("$STITCH" verify "$work/t/b2" 2>&1)
code=$?
check "verify exits 20 on damage" test "$code" = 20
check "verify names the truncated base data file" grep -q "b0.*data/db/log/data.bin" <<<"$out"
check "verify reports both problems" grep -q "3 problems" <<<"$out"
check "verify reports the dedup copy too" grep -q "PROBLEM store/copy.txt" <<<"$out"
expect_exit 20 "has 100 bytes" -- "$STITCH" cat "$work/t/b2" data/db/log/data.bin

# Names 4,000 folders deep (8 of them, a 130 KB manifest): ls -R prints every folder, each a
# line of its whole path, with memory of a few words a line (whole paths kept for every folder
# took the square of the depth: more than 250 MB here). The memory bound is checked where
# `ulimit -v` means it (not under AddressSanitizer, which reserves terabytes).
mkdir -p "$work/deep"
{
  printf '<config><version>1</version><timestamp>2026-10-01 12:00:00</timestamp>'
  printf '<uuid>11111111-2222-4333-8444-555555555555</uuid><contents>'
  deep=$(printf 'a/%.0s' $(seq 4000))
  for i in 0 1 2 3 4 5 6 7; do printf '<file><name>x%s/%sf</name><size>0</size></file>' "$i" "$deep"; done
  printf '</contents></config>'
} >"$work/deep/.backup"
limit=unlimited
[ "${STITCHFS_SANITIZED:-0}" = 1 ] || limit=100000
lines=$( (ulimit -v "$limit" && STITCH_CACHE_DIR=off "$STITCH" ls -R "$work/deep" | wc -l) )
check "ls -R of deep names within 100 MB (8 x 4001 folders + 8 files)" test "$lines" = 32016
json=$( (ulimit -v "$limit" && STITCH_CACHE_DIR=off "$STITCH" ls -R "$work/deep" --json) |
  tr '{' '\n' | grep -o '"type":"[a-z]*"' | sort | uniq -c | tr -s ' ')
check "ls -R --json of deep names, written an item at a time" test "$json" = "$(printf ' 32008 "type":"dir"\n 8 "type":"file"')"

finish
