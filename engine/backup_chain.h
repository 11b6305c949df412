// BackupChain: a backup and all its bases, opened and cross-checked up front, and the
// resolution of any file to flat extents across the chain and to a stitched reader.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/backup.h"
#include "engine/data_file.h"
#include "engine/random_access_file.h"

namespace stitchfs::engine {

struct ChainOptions {
  std::map<std::string, std::string> disks;  // Disk('NAME', ...) -> folder (--disk NAME=DIR).
  std::string base_override;                 // --base DIR: the top backup's base, if set.
  size_t max_depth = 100000;                 // Longest chain accepted.
  size_t max_open_files = 0;                 // Data files kept open; 0 = DefaultFdCapacity().
  std::shared_ptr<BackupCache> backups;      // Share opened backups between chains (optional).
  std::shared_ptr<FdCache> fd_cache;         // Share open data files between chains (optional).
};

// A run of `length` bytes from the start of the data file of entry `entry` of backup `level`.
struct Extent {
  uint32_t level = 0;  // 0 = the top backup, 1 = its base, ...
  uint32_t entry = 0;  // Index in that backup's manifest (a content representative).
  uint64_t length = 0;
};

// Thread-safe: immutable except for an internal, locked cache of open data files.
class BackupChain {
 public:
  // Opens `dir` and, iteratively, every base it needs; checks each base's uuid against
  // <base_backup_uuid>, guards against cycles and overlong chains, and checks that every entry
  // using a base finds (base_size, base_checksum) there. Errors: those of Backup::Open
  // (prefixed with the child for a base), kNoBaseBackup (entry needs a base, none named or
  // reachable), kWrongBaseBackup (uuid mismatch, missing base entry, cycle, depth).
  static StatusOr<std::shared_ptr<const BackupChain>> Open(const std::string& dir,
                                                           const ChainOptions& options = {});

  size_t depth() const { return backups_.size(); }
  // REQUIRES: level < depth(). level 0 is the backup that was opened.
  const Backup& backup(size_t level) const { return *backups_[level]; }
  const Backup& top() const { return *backups_.front(); }

  // The extents that make up entry `entry` of backup `level`, in file order; their lengths add
  // up to the entry's size. kWrongBaseBackup / kNoBaseBackup only if the chain changed.
  StatusOr<std::vector<Extent>> Resolve(size_t level, size_t entry) const;

  // A reader for entry `entry` of the top backup. Opens (or shares) every data file involved
  // and checks each one's length: a data file whose size differs from what the manifest
  // declares is kBackupDamaged naming the backup, the data file and the entry.
  StatusOr<std::shared_ptr<const RandomAccessFile>> OpenEntry(size_t entry) const;
  StatusOr<std::shared_ptr<const RandomAccessFile>> OpenEntryAt(size_t level, size_t entry) const;
  // Only the bytes entry `entry` of the top backup stores itself: [base_size, size), or the
  // whole file when it uses no base, or nothing when it comes whole from the base.
  StatusOr<std::shared_ptr<const RandomAccessFile>> OpenStoredTail(size_t entry) const;

  // The data file holding extent `x`, opened beneath its backup (shared between readers).
  StatusOr<std::shared_ptr<const DataFile>> OpenDataFile(const Extent& x) const;
  const FdCache& fd_cache() const { return *fd_cache_; }

 private:
  BackupChain(std::vector<std::shared_ptr<const Backup>> b, std::shared_ptr<FdCache> fds)
      : backups_(std::move(b)), fd_cache_(std::move(fds)) {}

  std::vector<std::shared_ptr<const Backup>> backups_;
  std::shared_ptr<FdCache> fd_cache_;
  mutable std::mutex mu_;  // Guards files_ and inserts_.
  mutable uint64_t inserts_ = 0;
  mutable std::map<std::pair<uint32_t, std::string>, std::weak_ptr<const DataFile>> files_;
};

}  // namespace stitchfs::engine
