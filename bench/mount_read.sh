#!/usr/bin/env bash
# Reads through a stitchfs mount vs the same bytes read natively, in one run:
#  - sequential read of a file stitched from N backups: first read through a fresh mount (best
#    of three; backing data in page cache; target >= 0.35 of native), second read (page cache
#    kept; target >= 0.9 of native);
#  - random 4 KiB preads (readahead off), 1 and 4 threads, fresh mount each time.
#  - the same reads through squashfuse_ll, restic mount and borg mount of the same file, where
#    installed (bench/install-peers.sh installs them); random reads: 2,000, one thread.
#  - the cost of checking a file read whole against its checksum: the first read with and
#    without -o noverify, interleaved (target: verified / unverified <= 1.05).
# Usage: bench/mount_read.sh [BACKUPS=30] [BYTES=1073741824] [xxh3|clickhouse (checksums)]
source "$(dirname "$0")/common.sh"
setup
n=${1:-30}
bytes=${2:-1073741824}
STITCHFS=$BUILD/fs/stitchfs
PREAD=$BUILD/bench/pread_bench
alg=${3:-xxh3}
"$MAKE_FIXTURE" grow "$work" "$n" "$bytes" "$alg"
top=$(printf "%s/b%03d" "$work" $((n - 1)))
M=$work/mnt
mkdir -p "$M"
trap 'mountpoint -q "$M" && fusermount3 -u "$M"; rm -rf "$work"' EXIT
cat "$work"/b*/grow.bin "$work/original" >/dev/null  # backing data and baseline in page cache
# Native reads are interleaved with the mount's, so that both see the same machine (a shared
# VM's speed drifts by 2x within minutes); each figure is the best of its runs.
native=""
# First read: the best of three fresh mounts (each starts with an empty page cache for the
# file).
first=""
unverified=""
for _ in 1 2 3; do
  native=$(min "$native" "$(timed cat "$work/original")")
  "$STITCHFS" "$top" "$M"
  first=$(min "$first" "$(timed cat "$M/grow.bin")")
  fusermount3 -u "$M"
  "$STITCHFS" "$top" "$M" -o noverify
  unverified=$(min "$unverified" "$(timed cat "$M/grow.bin")")
  fusermount3 -u "$M"
done
# Second read: page cache kept; the best of five.
"$STITCHFS" "$top" "$M"
cat "$M/grow.bin" >/dev/null
second=""
for _ in 1 2 3 4 5; do
  second=$(min "$second" "$(timed cat "$M/grow.bin")")
  native=$(min "$native" "$(timed cat "$work/original")")
done
cmp "$M/grow.bin" "$work/original"
fusermount3 -u "$M"
rand() {  # rand THREADS FILE: reads/s
  "$PREAD" "$2" "$1" 20000
}
native1=$(rand 1 "$work/original")
native4=$(rand 4 "$work/original")
"$STITCHFS" "$top" "$M"; fuse1=$(rand 1 "$M/grow.bin"); fusermount3 -u "$M"
"$STITCHFS" "$top" "$M"; fuse4=$(rand 4 "$M/grow.bin"); fusermount3 -u "$M"
# The same file through other tools' mounts, where installed (bench/install-peers.sh).
source "$(dirname "$0")/peers.sh"
mkdir -p "$work/peer"
cp "$work/original" "$work/peer/grow.bin"
peers="$(peer_squashfuse)$(peer_restic)$(peer_borg)"
echo "{\"bench\":\"mount_read\",\"backups\":$n,\"bytes\":$bytes,\"checksums\":\"$alg\",\"first_read_unverified_s\":$unverified,\"verify_cost_ratio\":$(ratio "$first" "$unverified"),\"native_s\":$native,\"first_read_s\":$first,\"first_ratio\":$(ratio "$native" "$first"),\"second_read_s\":$second,\"second_ratio\":$(ratio "$native" "$second"),\"rand4k_native_1t_per_s\":$native1,\"rand4k_mount_1t_per_s\":$fuse1,\"rand4k_1t_ratio\":$(ratio "$fuse1" "$native1"),\"rand4k_native_4t_per_s\":$native4,\"rand4k_mount_4t_per_s\":$fuse4,\"rand4k_4t_ratio\":$(ratio "$fuse4" "$native4")$peers}"
