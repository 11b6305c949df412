#include "engine/backends/s3/s3_archive_files.h"

#include "engine/backends/s3/s3_files.h"

namespace stitchfs::engine {

namespace {

// The archive object's address and what a HEAD of it says (nullopt: no such object).
StatusOr<std::pair<S3Address, std::optional<S3Object>>> HeadArchive(const S3Storage& s3,
                                                                    const std::string& location) {
  auto a = ParseS3Address(location);
  if (!a.ok()) {
    return Status::BackupNotFound("Backup " + EscapeForMessage(location) + ": " +
                                  a.status().message());
  }
  ASSIGN_OR_RETURN(auto head, s3.BucketOf(*a)->Head(a->key));
  return std::pair{std::move(*a), std::move(head)};
}

}  // namespace

StatusOr<OpenedArchive> S3ArchiveFiles::Open(const std::string& location) const {
  ASSIGN_OR_RETURN(auto found, HeadArchive(*s3_, location));
  const auto& [a, head] = found;
  if (!head)
    return Status::BackupNotFound("Backup " + EscapeForMessage(a.Location()) + " not found");
  auto file = OpenS3DataFile(s3_->BucketOf(a), a.key, EscapeForMessage(a.Location()), head->size,
                             s3_->block_cache());
  return OpenedArchive{std::move(file), S3ArchiveStamp(a, head->etag, head->size)};
}

StatusOr<std::optional<ArchiveStamp>> S3ArchiveFiles::Stat(const std::string& location) const {
  auto found = HeadArchive(*s3_, location);
  if (!found.ok()) {
    if (found.status().code() == ErrorCode::kBackupNotFound) return std::optional<ArchiveStamp>();
    return found.status();
  }
  const auto& [a, head] = *found;
  if (!head) return std::optional<ArchiveStamp>();
  return std::optional(S3ArchiveStamp(a, head->etag, head->size));
}

bool S3ArchiveFiles::LockBeside(const std::string& location) const {
  auto a = ParseS3Address(location);
  if (!a.ok()) return false;
  auto head = s3_->BucketOf(*a)->Head(a->key + ".lock");
  return head.ok() && head->has_value();
}

}  // namespace stitchfs::engine
