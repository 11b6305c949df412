// The two kinds of files S3Storage reads: a backup's data file (ranged GETs through ReadAhead,
// its length the manifest's, checked against every answer) and a `.backup` (fetched when first
// read, whole or just its head, pinned to the version whose identity was taken).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/backends/archive/archive_index.h"
#include "engine/backends/s3/block_cache.h"
#include "engine/backends/s3/s3_bucket.h"
#include "engine/location/s3_address.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// A data file of `declared_size` bytes at object `key`. Reads fail with kBackupDamaged if the
// object has another length or is replaced while read (If-Match on the first version seen).
// With `cache`, reads are served from its blocks of the version first seen when they are all
// there, and a random read's GET is widened to whole blocks, which are then kept (a
// sequential reader's read-ahead ranges are not).
std::shared_ptr<const BackupDataFile> OpenS3DataFile(std::shared_ptr<const S3Bucket> bucket,
                                                     std::string key, std::string display,
                                                     uint64_t declared_size,
                                                     std::shared_ptr<BlockCache> cache);

// Where a data file of S3Storage lives, for copies within the object store; nullopt for any
// other file.
struct S3Source {
  std::shared_ptr<const S3Bucket> bucket;
  std::string key;
};
std::optional<S3Source> S3SourceOf(const RandomAccessFile& file);

// The `.backup` object `key`, version `etag` of `size` bytes (from a HEAD): reads of its first
// 64 KiB (a header) fetch only those; any other read fetches the whole object once.
std::unique_ptr<RandomAccessFile> OpenS3Manifest(std::shared_ptr<const S3Bucket> bucket,
                                                 std::string key, std::string etag, uint64_t size);

// The version of the archive object at `a` with this ETag and length (ETags compared
// without their quotes).
ArchiveStamp S3ArchiveStamp(const S3Address& a, const std::string& etag, uint64_t size);

}  // namespace stitchfs::engine
