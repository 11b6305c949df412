#!/usr/bin/env python3
"""The tree of bench/run.sh on day DAY of its chain, at scale SCALE (1: about 2 GiB, 50,640 files on day 3).

Usage: cold_tree.py DIR SCALE DAY
Day 1 writes the whole tree into DIR; day N > 1 changes the tree of day N-1 in place:

- `store/<db>/<table>/<part>/`: MergeTree parts of 11 files each (two columns' .bin of 4 KiB to
  192 KiB and their .cmrk2 marks, primary.idx, checksums.txt, columns.txt, count.txt,
  default_compression_codec.txt, serialization.json, minmax_ts.idx), 4,570 parts at scale 1;
  each later day adds 3 parts;
- `store/logs/events/data.bin`: a Log table's column, 313 MiB on day 1, 2 MiB appended each day
  (317 MiB on day 3, at scale 1), the file `dd` reads;
- six 100 MiB files (`store/big/column_N.bin`), never changed;
- 300 Log columns (`store/logs/t<N>/c.bin`, 64 KiB) each appended 1 KiB a day.

Bytes are pseudo-random from a fixed seed per file and day, so two runs make the same tree.
"""
import os
import random
import sys

MIB = 1 << 20
PART_FILES = (
    "primary.idx", "checksums.txt", "columns.txt", "count.txt",
    "default_compression_codec.txt", "serialization.json", "minmax_ts.idx",
)


def write(path, size, seed, mode="wb"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = random.Random(repr(seed))
    with open(path, mode) as f:
        left = size
        while left:
            n = min(left, 4 * MIB)
            f.write(rng.randbytes(n))
            left -= n


def part(root, index):
    """MergeTree part number `index`: 11 files, about 212 KiB on average."""
    rng = random.Random(index)
    table = "store/db%d/t%02d" % (index % 4, index % 37)
    d = "%s/all_%d_%d_0" % (table, index, index)
    for col in ("id", "value"):
        write("%s/%s.bin" % (d, col), rng.randint(4096, 196608), (index, col))
        write("%s/%s.cmrk2" % (d, col), rng.randint(1024, 4096), (index, col, "m"))
    for name in PART_FILES:
        write("%s/%s" % (d, name), rng.randint(16, 2048), (index, name))
    return d


def main():
    root, scale, day = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    os.makedirs(root, exist_ok=True)
    os.chdir(root)
    parts = int(4570 * scale)
    big = int(313 * MIB * scale)
    if day == 1:
        for i in range(parts):
            part(root, i)
        write("store/logs/events/data.bin", big, "events")
        for i in range(6):
            write("store/big/column_%d.bin" % i, int(100 * MIB * scale), ("big", i))
        for i in range(300):
            write("store/logs/t%03d/c.bin" % i, 65536, ("log", i))
        return
    for k in range(3):
        part(root, parts + 3 * (day - 2) + k)
    write("store/logs/events/data.bin", int(2 * MIB * scale), ("events", day), "ab")
    for i in range(300):
        write("store/logs/t%03d/c.bin" % i, 1024, ("log", i, day), "ab")


if __name__ == "__main__":
    main()
