#!/usr/bin/env bash
# scripts/demo.sh --clickhouse with the built binaries: the real ClickHouse's chain read,
# verified and mounted, and stitch's backups restored by ClickHouse with the rows it had.
# Usage: ch_demo_test.sh STITCH STITCHFS REPO
# Exits 77 (skipped) where FUSE cannot be used.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
require_fuse
work=$(mktemp -d)
trap 'unmount_all "$work/demo/mnt" "$work/demo/clickhouse/mnt" "$work/demo/clickhouse/stmnt"; rm -rf "$work"' EXIT
STITCH=$1 STITCHFS=$2 bash "$3/scripts/demo.sh" --clickhouse "$work/demo" >"$work/out" 2>&1
rc=$?
check "the demo with ClickHouse succeeds (exit $rc)" test "$rc" = 0
has() { grep -qE -- "$1" "$work/out"; }
check "stitch log lists ClickHouse's three backups" test "$(grep -cE '^b[123] +[0-9]{4}-' "$work/out")" = 3
check "stitch verifies ClickHouse's incremental" has '^OK: [0-9]+ files, [0-9]+ bytes read, 0 problems$'
check "stitch diff: the Log table's appended bytes" has '^\+ data/shop/log/what\.bin \(\+[0-9]+ bytes\)$'
check "the mount's provenance names all three backups" \
  grep -qE 'ch/b1.*ch/b2.*ch/b3' <(grep '^user.stitchfs.source=' "$work/out")
check "ClickHouse restored the rows it had, from stitch's backups" \
  has '^ClickHouse restored exactly the rows it had at b3, and at b2 through the mount$'
[ "$failed" = 0 ] || cat "$work/out"
finish
