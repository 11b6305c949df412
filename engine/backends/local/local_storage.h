// LocalStorage: backups in folders of this machine's file systems. Every safe-open rule lives
// here once: folders opened without blocking and reopened by path only if they are still the
// same folder; `.backup` and data files opened beneath their folder without following a
// symlink or blocking, and type-checked; data file descriptors bounded by one FdCache.
#pragma once

#include <memory>

#include "engine/base/fd_cache.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// Thread-safe.
class LocalStorage final : public Storage {
 public:
  // Data files are opened through `fds` (shared with every reader of this storage).
  explicit LocalStorage(std::shared_ptr<FdCache> fds) : fds_(std::move(fds)) {}
  // A storage with its own FdCache of `max_open_files` (0: DefaultFdCapacity()).
  static std::shared_ptr<const LocalStorage> Create(size_t max_open_files = 0);

  std::string Normal(const std::string& location) const override { return AbsolutePath(location); }
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
  // Written with BackupLock, staged in `.stitch-tmp` inside the destination, published by
  // rename, made durable with one syncfs, the manifest through WriteFileAtomically.
  std::string LocatorFor(const std::string& location) const override;
  StatusOr<std::unique_ptr<BackupWriter>> StartBackup(const std::string& location,
                                                      const WriterIntent& intent,
                                                      std::string* notice) const override;
  // Renames within the store's folder (local_store_moves.cc).
  StatusOr<std::unique_ptr<StoreMoves>> MovesFor(const std::string& location) const override;

  const FdCache& fd_cache() const { return *fds_; }

 private:
  // The open fd of `folder` (a LocalFolder), from the cache or opened again and checked.
  StatusOr<std::shared_ptr<const UniqueFd>> FolderFd(const BackupFolder& folder) const;

  std::shared_ptr<FdCache> fds_;
};

}  // namespace stitchfs::engine
