// RoutingStorage: the storage for any location a user or a locator can name. S3 addresses
// (`s3://`, `http://`, `https://`) go to an S3Storage, made when first needed and configured
// from S3Settings and the environment; a path on this machine whose name is an archive's
// (`.zip`, `.tar.gz`, ... : ArchiveKindOf) to the ArchiveStorage; any other path to the
// LocalStorage. A chain may mix them: a local backup on an S3 or archive base, and the other
// way round.
#pragma once

#include <memory>
#include <mutex>

#include "engine/backends/archive/archive_storage.h"
#include "engine/backends/local/local_storage.h"
#include "engine/backends/s3/s3_config.h"
#include "engine/backends/s3/s3_storage.h"

namespace stitchfs::engine {

// Thread-safe.
class RoutingStorage final : public Storage {
 public:
  // Local data files through an FdCache of `max_open_files` (0: DefaultFdCapacity()); object
  // storage configured by `s3` (and the environment) on first use; `index_progress` (may be
  // null) shown how far an archive being indexed has come.
  static std::shared_ptr<const RoutingStorage> Create(size_t max_open_files = 0, S3Settings s3 = {},
                                                      ProgressSink index_progress = nullptr);
  RoutingStorage(std::shared_ptr<const LocalStorage> local, S3Settings s3,
                 ProgressSink index_progress = nullptr)
      : local_(std::move(local)),
        archives_(std::make_shared<const ArchiveStorage>(ArchiveCache::Default(),
                                                         LocalArchiveFiles(), index_progress)),
        settings_(std::move(s3)),
        index_progress_(std::move(index_progress)) {}

  std::string Normal(const std::string& location) const override;
  StatusOr<std::shared_ptr<const BackupFolder>> OpenFolder(
      const std::string& location) const override;
  StatusOr<ManifestSource> OpenManifest(const BackupFolder& folder) const override;
  StatusOr<std::optional<ManifestIdentity>> StatManifest(
      const std::string& location) const override;
  StatusOr<bool> BeingRemoved(const std::string& location) const override;
  StatusOr<std::shared_ptr<const BackupDataFile>> OpenDataFile(
      const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
      uint64_t declared_size) const override;
  StatusOr<SharedBytes> ReadIndex(const BackupFolder& folder) const override;
  Status WriteIndex(const BackupFolder& folder, std::string_view bytes) const override;
  StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& location) const override;
  int64_t StoreRescanNs(const std::string& location) const override;
  std::string LocatorFor(const std::string& location) const override;
  bool SharesCredentials(const std::string& location, const std::string& base) const override;
  StatusOr<std::unique_ptr<BackupWriter>> StartBackup(const std::string& location,
                                                      const WriterIntent& intent,
                                                      std::string* notice) const override;
  StatusOr<std::unique_ptr<StoreMoves>> MovesFor(const std::string& location) const override;

  const LocalStorage& local() const { return *local_; }
  // The object storage, made on first use; kInvalidArgument if its configuration is bad.
  StatusOr<const S3Storage*> s3() const;

 private:
  // The storage for `location`.
  StatusOr<const Storage*> For(const std::string& location) const;

  std::shared_ptr<const LocalStorage> local_;
  std::shared_ptr<const ArchiveStorage> archives_;
  const S3Settings settings_;
  mutable std::once_flag s3_once_;
  mutable std::unique_ptr<S3Storage> s3_;
  const ProgressSink index_progress_;
  mutable std::unique_ptr<ArchiveStorage> s3_archives_;  // Archives that are objects of s3_.
  mutable Status s3_status_;
};

}  // namespace stitchfs::engine
