// DataFile: one data file of a backup, read positionally through the chain's FdCache. It holds
// no fd itself: the file is (re)opened beneath its backup folder when the cache lacks it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "engine/backends/local/local_folder.h"
#include "engine/base/fd_cache.h"
#include "engine/base/random_access_file.h"
#include "engine/storage/backup.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// Thread-safe (immutable; the cache is locked internally).
class DataFile final : public BackupDataFile {
 public:
  // Opens `relative` beneath `folder` once to learn its size (and to fail early); keeps
  // `folder` alive. Errors: kBackupDamaged (missing, not a regular file),
  // kInsecurePath (a symlink), kIOError.
  static StatusOr<std::shared_ptr<const DataFile>> Open(std::shared_ptr<FdCache> cache,
                                                        std::shared_ptr<const LocalFolder> folder,
                                                        std::string relative);
  ~DataFile() override;

  uint64_t size() const override { return id_.size; }
  const std::string& display_name() const override { return display_; }
  // An open fd for in-kernel copies; keep the pointer only for the copy.
  StatusOr<std::shared_ptr<const UniqueFd>> Fd() const;
  StatusOr<std::shared_ptr<const UniqueFd>> KernelFd() const override { return Fd(); }
  // Asks the kernel to read up to kMaxPrefetch bytes from `offset` into the page cache in the
  // background (POSIX_FADV_WILLNEED); nothing if the file cannot be opened.
  void Prefetch(uint64_t offset, uint64_t length) const override;
  static constexpr uint64_t kMaxPrefetch = 8 << 20;
  // What the file is: its size, and the file itself (device, inode, modification time).
  struct Identity {
    uint64_t size = 0;
    dev_t dev = 0;
    ino_t ino = 0;
    int64_t mtime_sec = 0, mtime_nsec = 0;
    bool operator==(const Identity&) const = default;
  };

 protected:
  // kBackupDamaged if the file turns out shorter (truncated after open) or was replaced by a
  // file of another size.
  Status ReadExact(uint64_t offset, std::span<char> dst) const override;

 private:
  DataFile(std::shared_ptr<FdCache> cache, std::shared_ptr<const LocalFolder> folder,
           std::string rel, Identity id)
      : cache_(std::move(cache)),
        folder_(std::move(folder)),
        rel_(std::move(rel)),
        display_(folder_->path() + "/" + rel_),
        id_(id),
        key_(NewFdCacheKey()) {}
  StatusOr<UniqueFd> Reopen() const;

  std::shared_ptr<FdCache> cache_;
  std::shared_ptr<const LocalFolder> folder_;  // The folder the file is opened beneath.
  std::string rel_;
  std::string display_;
  Identity id_;   // As first opened; an fd opened again must find the same file.
  uint64_t key_;  // This file's fd in cache_.
};

// Opens data file `rel` beneath the folder `dir_fd` (OpenBeneath) and checks it is a regular
// file; returns its fd and what it is. `display` names it in messages. Errors: kBackupDamaged
// (missing, not a regular file), kInsecurePath (a symlink), kIOError.
StatusOr<std::pair<UniqueFd, DataFile::Identity>> OpenDataFileBeneath(int dir_fd,
                                                                      const std::string& rel,
                                                                      const std::string& display);

}  // namespace stitchfs::engine
