// LocalFolder: a backup folder on this machine, for LocalStorage. It holds no file descriptor,
// so a chain of any depth costs no fd per level: the folder is opened again (through the
// storage's FdCache) when a file in it must be opened, and refused if the folder found at the
// path is no longer the one first opened or recorded (replaced or removed while in use: a
// reader of the old backup then gets an error, never bytes of another backup).
#pragma once

#include <memory>
#include <string>

#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"
#include "engine/storage/backup_folder.h"

namespace stitchfs::engine {

// Thread-safe (immutable).
class LocalFolder final : public BackupFolder {
 public:
  // Opens folder `path` (made absolute and normal) without blocking and learns its identity;
  // `*fd` receives the open folder for the caller's first use. kBackupNotFound if there is no
  // folder there (ENOENT, ENOTDIR, EACCES, not a folder), kIOError for other failures (EMFILE,
  // EIO, ...), both naming the path.
  static StatusOr<std::shared_ptr<const LocalFolder>> Open(const std::string& path, UniqueFd* fd);
  static constexpr BackendKind kKind{"a local folder"};

  // A key for this folder's fd in an FdCache, unique in the process.
  uint64_t cache_key() const { return key_; }
  // The folder opened again by path; kBackupDamaged if it is gone or another folder now.
  StatusOr<UniqueFd> Reopen() const;

 private:
  LocalFolder(std::string path, FolderIdentity id);

  const uint64_t key_;
};

}  // namespace stitchfs::engine
