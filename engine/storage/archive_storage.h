// ArchiveStorage: backups that are one archive file each (ClickHouse's `.zip`, `.tar`,
// `.tar.gz`, ... backups, FORMAT.md §7), read in place: the archive is the backup's folder, its
// `.backup` member the manifest and its other members the data files (ArchiveReader). The
// archive's identity (device, inode, size, times) is the manifest's: rewriting the archive makes
// it another backup. Read-only.
#pragma once

#include <functional>
#include <memory>

#include "engine/archive/archive_cache.h"
#include "engine/archive/archive_reader.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// Thread-safe.
class ArchiveStorage final : public Storage {
 public:
  // Indexes and decoded streams go to `cache` (null: kept in memory and unnamed temporary files,
  // built again by each process).
  explicit ArchiveStorage(const ArchiveCache* cache) : cache_(cache) {}

  // Where a front end shows the progress of indexing an archive (archive, bytes read, total);
  // set once at start, before any archive is opened.
  using IndexProgress = std::function<void(const std::string&, uint64_t, uint64_t)>;
  static void SetIndexProgress(IndexProgress progress);

  std::string Normal(const std::string& location) const override { return AbsolutePath(location); }
  StatusOr<std::shared_ptr<const BackupFolder>> OpenFolder(
      const std::string& location) const override;
  StatusOr<ManifestSource> OpenManifest(const BackupFolder& folder) const override;
  StatusOr<std::optional<ManifestIdentity>> StatManifest(
      const std::string& location) const override;
  StatusOr<std::shared_ptr<const BackupDataFile>> OpenDataFile(
      const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
      uint64_t declared_size) const override;
  // Archives keep no resolved index of their own (ManifestCache keeps theirs).
  StatusOr<SharedBytes> ReadIndex(const BackupFolder& folder) const override;
  Status WriteIndex(const BackupFolder& folder, std::string_view bytes) const override;
  // An archive is not a store: kBackupNotFound.
  StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& location) const override;
  std::string LocatorFor(const std::string& location) const override;
  // kNotSupported: archives are read, never written.
  StatusOr<std::unique_ptr<BackupWriter>> StartBackup(const std::string& location,
                                                      const std::string& uuid,
                                                      std::string* notice) const override;

 private:
  const ArchiveCache* cache_;
};

}  // namespace stitchfs::engine
