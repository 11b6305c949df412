// BackupFolder: where one backup lives, by absolute path and by identity (device, inode). It
// holds no file descriptor, so a chain of any depth costs no fd per level: the folder is
// opened again (through the chain's FdCache) when a data file must be opened, and refused if
// the folder found at the path is no longer the one opened first (replaced or removed while in
// use: a reader of the old backup then gets an error, never bytes of another backup).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {

struct FolderIdentity {
  uint64_t dev = 0, ino = 0;
  bool operator==(const FolderIdentity&) const = default;
  auto operator<=>(const FolderIdentity&) const = default;
};

// Thread-safe (immutable).
class BackupFolder {
 public:
  // Opens folder `path` (made absolute and normal) without blocking and learns its identity;
  // `*fd` receives the open folder for the caller's first use. kBackupNotFound if there is no
  // folder there (ENOENT, ENOTDIR, EACCES, not a folder), kIOError for other failures (EMFILE,
  // EIO, ...), both naming the path.
  static StatusOr<std::shared_ptr<const BackupFolder>> Open(const std::string& path, UniqueFd* fd);
  // The folder at `path` (absolute and normal) as recorded with identity `id`, not opened now:
  // Reopen refuses any other folder found there.
  static std::shared_ptr<const BackupFolder> Expect(const std::string& path, FolderIdentity id);

  const std::string& path() const { return path_; }
  const FolderIdentity& identity() const { return id_; }
  // A key for this folder's fd in an FdCache, unique in the process.
  uint64_t cache_key() const { return key_; }
  // The folder opened again by path; kBackupDamaged if it is gone or another folder now.
  StatusOr<UniqueFd> Reopen() const;

 private:
  BackupFolder(std::string path, FolderIdentity id);

  const std::string path_;
  const FolderIdentity id_;
  const uint64_t key_;
};

// The absolute, lexically normal form of `path` (no "." or ".." components, no trailing
// slash), against the current folder when relative. Symlinks are not resolved.
std::string AbsolutePath(const std::string& path);

// A new key for an FdCache entry, never returned before in this process.
uint64_t NewFdCacheKey();

}  // namespace stitchfs::engine
