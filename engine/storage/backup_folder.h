// BackupFolder: where one backup lives in its storage, by location (for a folder on this
// machine, its absolute, normal path) and identity. Each Storage makes its own kind (a
// LocalFolder for LocalStorage) and is the only one to look inside it; the rest of the engine
// reads the location and the identity, and hands the folder back to its storage.
#pragma once

#include <cstdint>
#include <string>

namespace stitchfs::engine {

struct FolderIdentity {
  uint64_t dev = 0, ino = 0;
  bool operator==(const FolderIdentity&) const = default;
  auto operator<=>(const FolderIdentity&) const = default;
};

// Thread-safe (immutable).
class BackupFolder {
 public:
  BackupFolder(std::string path, FolderIdentity id) : path_(std::move(path)), id_(id) {}
  virtual ~BackupFolder() = default;
  BackupFolder(const BackupFolder&) = delete;
  BackupFolder& operator=(const BackupFolder&) = delete;

  const std::string& path() const { return path_; }
  const FolderIdentity& identity() const { return id_; }

 private:
  const std::string path_;
  const FolderIdentity id_;
};

// The absolute, lexically normal form of `path` (no "." or ".." components, no trailing
// slash), against the current folder when relative. Symlinks are not resolved.
std::string AbsolutePath(const std::string& path);

// A new key for an FdCache entry, never returned before in this process.
uint64_t NewFdCacheKey();

}  // namespace stitchfs::engine
