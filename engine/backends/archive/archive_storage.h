// ArchiveStorage: backups that are one archive file each (ClickHouse's `.zip`, `.tar`,
// `.tar.gz`, ... backups, FORMAT.md §7), read in place: the archive is the backup's folder, its
// `.backup` member the manifest and its other members the data files (ArchiveReader). The
// archive's identity (device, inode, size, times) is the manifest's: rewriting the archive makes
// it another backup. Read-only.
#pragma once

#include <functional>
#include <memory>

#include "engine/backends/archive/archive_cache.h"
#include "engine/backends/archive/archive_reader.h"
#include "engine/base/progress.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// An archive file opened for reading, and the version of it that is.
struct OpenedArchive {
  std::shared_ptr<const RandomAccessFile> file;
  ArchiveStamp stamp;
};

// Where archive files are read from: this machine's files (LocalArchiveFiles) or the objects of
// a bucket (S3ArchiveFiles, s3_archive_files.h). Thread-safe.
class ArchiveFiles {
 public:
  virtual ~ArchiveFiles() = default;
  virtual std::string Normal(const std::string& location) const = 0;
  // The archive at `location`: kBackupNotFound (naming it) if there is no file there, or
  // something other than a regular file (never blocking on one); kIOError otherwise.
  virtual StatusOr<OpenedArchive> Open(const std::string& location) const = 0;
  // Its version now; nullopt if there is none.
  virtual StatusOr<std::optional<ArchiveStamp>> Stat(const std::string& location) const = 0;
  virtual std::string LocatorFor(const std::string& location) const = 0;
  // Is a writer's `<archive>.lock` beside it (for the message of an archive without .backup)?
  virtual bool LockBeside(const std::string& location) const = 0;
};

// Archives on this machine: opened without blocking, regular files only.
std::shared_ptr<const ArchiveFiles> LocalArchiveFiles();

class ArchiveRefusals;

// Thread-safe.
class ArchiveStorage final : public Storage {
 public:
  // Archives from `files`; indexes and decoded streams go to `cache` (null: kept in memory and
  // unnamed temporary files, built again by each process).
  // `progress` (may be null) is told how far an archive being indexed has come (task: the
  // archive's location).
  ArchiveStorage(const ArchiveCache* cache, std::shared_ptr<const ArchiveFiles> files,
                 ProgressSink progress = nullptr);

  std::string Normal(const std::string& location) const override {
    return files_->Normal(location);
  }
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
  // The identity of an archive's `.backup` is the archive's (ArchiveIdentity).
  static ManifestIdentity ArchiveIdentity(const ArchiveStamp& stamp) {
    return {stamp.dev, stamp.ino, stamp.size, stamp.mtime, stamp.ctime};
  }
  // An archive is not a store: kBackupNotFound.
  StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& location) const override;
  std::string LocatorFor(const std::string& location) const override;
  // kNotSupported: archives are read, never written.
  StatusOr<std::unique_ptr<BackupWriter>> StartBackup(const std::string& location,
                                                      const WriterIntent& intent,
                                                      std::string* notice) const override;

 private:
  const ArchiveCache* cache_;
  const std::shared_ptr<const ArchiveFiles> files_;
  // Versions of archives whose index was refused for what their bytes are (damaged, hostile,
  // not supported): refused again at once when opened again, not indexed again (every request
  // a mount serves for a backup opens it, and a store mount tries a failed open again).
  const std::shared_ptr<ArchiveRefusals> refusals_;
  const ProgressSink progress_;
};

}  // namespace stitchfs::engine
