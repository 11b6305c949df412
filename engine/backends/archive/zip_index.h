// IndexZip: the index of a zip archive. Stored members are read in place, deflate members
// through restart points, and members compressed with bzip2, zstd or xz (zip methods 12, 93
// and 95, which ClickHouse's compression_method setting may choose) decoded once, one after
// another, into one cached stream. Every member's CRC-32 and size are checked.
#pragma once

#include "engine/backends/archive/archive_cache.h"
#include "engine/backends/archive/archive_index.h"
#include "engine/base/random_access_file.h"

namespace stitchfs::engine {

struct DecodePass;

// `pass` reads the archive `file`; decoded members go to `cache` (see BuildArchiveIndex).
StatusOr<BuiltIndex> IndexZip(const RandomAccessFile& file, const DecodePass& pass,
                              const ArchiveStamp& stamp, const ArchiveCache* cache);

}  // namespace stitchfs::engine
