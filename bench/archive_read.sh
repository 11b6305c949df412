#!/usr/bin/env bash
# Archive backups against the same backup as a folder, in one run. A backup of about 1 GiB
# (a 300 MB file and 7 of 100 MB, each half random bytes and half text, as compressed column
# files and logs are) is packed as .zip (deflate), .tar.gz and .tar.zst. For each:
#  - first mount with an empty cache (the index is built: one pass over the archive) against
#    decompressing the same file to /dev/null (unzip -p, gzip -dc, zstd -dc): ratio = tool's
#    time / stitchfs's time (1.0: indexing costs what decompressing does);
#  - a mount with the index cached: sequential read of the 300 MB file and 4 KiB random reads
#    (readahead off), as ratios to the folder backup's mount;
#  - archivemount (Debian's FUSE mount of archives through libarchive) on the same .zip and
#    .tar.gz, where installed (bench/install-peers.sh): mount time, the first 32 MiB of the
#    300 MB file, 10 random reads.
# Usage: bench/archive_read.sh [RANDOM_READS=2000]
source "$(dirname "$0")/common.sh"
setup
reads=${1:-2000}
STITCHFS=$BUILD/fs/stitchfs
PREAD=$BUILD/bench/pread_bench
M=$work/mnt
mkdir -p "$M" "$work/src"
trap 'mountpoint -q "$M" && fusermount3 -u "$M"; rm -rf "$work"' EXIT
seq 1 100000 >"$work/text"
truncate -s 524288 "$work/text"
mixed() {  # mixed MIB FILE
  for _ in $(seq "$1"); do head -c 524288 /dev/urandom; cat "$work/text"; done >"$2"
}
mixed 300 "$work/src/big.bin"
for i in 1 2 3 4 5 6 7; do mixed 100 "$work/src/part$i.bin"; done
"$STITCH" backup "$work/src" "$work/b" >/dev/null
(cd "$work/b" && zip -q -r "$work/b.zip" .)
tar -czf "$work/b.tar.gz" -C "$work/b" .
tar --zstd -cf "$work/b.tar.zst" -C "$work/b" .
cat "$work"/b.* "$work"/b/* >/dev/null  # In the page cache, for every reader alike.

# The folder backup: the baseline of the reads.
"$STITCHFS" "$work/b" "$M"
folder_seq=$(timed cat "$M/big.bin")
fusermount3 -u "$M"
"$STITCHFS" "$work/b" "$M"
folder_rand=$("$PREAD" "$M/big.bin" 1 "$reads")
fusermount3 -u "$M"

# archivemount reads a member by decompressing it from its start for each read that is not the
# next one, and its sequential read of a large member takes minutes here: its figures are the
# first 32 MiB, read in full, and 10 random reads, each bounded by a timeout.
peer_archivemount() {  # peer_archivemount KIND ARCHIVE: a JSON line, or nothing
  command -v archivemount >/dev/null || return 0
  local t0 t1 mount_s seq_s rand
  t0=$(date +%s.%N)
  archivemount -o readonly "$2" "$M" >/dev/null 2>&1 || return 0
  t1=$(date +%s.%N)
  mount_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
  seq_s=$(timed timeout 300 head -c 33554432 "$M/big.bin" || echo 300)
  rand=$(timeout 300 "$PREAD" "$M/big.bin" 1 10 || echo 0)
  fusermount3 -u "$M"
  echo "{\"bench\":\"archive_read_peer\",\"peer\":\"archivemount\",\"kind\":\"$1\",\"mount_s\":$mount_s,\"first_32mib_s\":$seq_s,\"first_32mib_mb_per_s\":$(ratio 33.554432 "$seq_s"),\"folder_mb_per_s\":$(ratio 314.5728 "$folder_seq"),\"rand4k_per_s\":$rand}"
}

for kind in zip tar.gz tar.zst; do
  a=$work/b.$kind
  case $kind in
    zip) tool=$(timed unzip -p "$a") ;;
    tar.gz) tool=$(timed gzip -dc "$a") ;;
    tar.zst) tool=$(timed zstd -dc "$a") ;;
  esac
  export STITCH_CACHE_DIR=$work/cache-$kind
  t0=$(date +%s.%N)
  "$STITCHFS" "$a" "$M"
  t1=$(date +%s.%N)
  first=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
  fusermount3 -u "$M"
  t0=$(date +%s.%N)
  "$STITCHFS" "$a" "$M"
  t1=$(date +%s.%N)
  again=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
  seq_s=$(timed cat "$M/big.bin")
  cmp "$M/big.bin" "$work/src/big.bin"
  fusermount3 -u "$M"
  "$STITCHFS" "$a" "$M"
  rand=$("$PREAD" "$M/big.bin" 1 "$reads")
  fusermount3 -u "$M"
  cache_mb=$(du -sm "$STITCH_CACHE_DIR" | cut -f1)
  echo "{\"bench\":\"archive_read\",\"kind\":\"$kind\",\"archive_bytes\":$(stat -c %s "$a"),\"decompress_s\":$tool,\"first_mount_s\":$first,\"index_ratio\":$(ratio "$tool" "$first"),\"mount_cached_s\":$again,\"cache_mb\":$cache_mb,\"seq_300mb_s\":$seq_s,\"folder_seq_s\":$folder_seq,\"seq_ratio\":$(ratio "$folder_seq" "$seq_s"),\"rand4k_per_s\":$rand,\"folder_rand4k_per_s\":$folder_rand,\"rand4k_ratio\":$(ratio "$rand" "$folder_rand")}"
done
for kind in zip tar.gz; do peer_archivemount "$kind" "$work/b.$kind"; done
