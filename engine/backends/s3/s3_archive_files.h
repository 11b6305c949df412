// S3ArchiveFiles: archive backups that are objects of a bucket (ClickHouse's BACKUP ... TO
// S3('.../1.tar.zst')), for an ArchiveStorage: read by ranged GETs through an S3Storage's
// connections, read-ahead and block cache. A version is the object's ETag and length.
#pragma once

#include "engine/backends/archive/archive_storage.h"
#include "engine/backends/s3/s3_storage.h"
#include "engine/location/s3_address.h"

namespace stitchfs::engine {

// Thread-safe.
class S3ArchiveFiles final : public ArchiveFiles {
 public:
  explicit S3ArchiveFiles(const S3Storage* s3) : s3_(s3) {}

  std::string Normal(const std::string& location) const override { return s3_->Normal(location); }
  // One HEAD; the reads that follow are pinned to the first version they see.
  StatusOr<OpenedArchive> Open(const std::string& location) const override;
  StatusOr<std::optional<ArchiveStamp>> Stat(const std::string& location) const override;
  std::string LocatorFor(const std::string& location) const override {
    return s3_->LocatorFor(location);
  }
  bool LockBeside(const std::string& location) const override;

 private:
  const S3Storage* s3_;
};

}  // namespace stitchfs::engine
