// BackupFolder: where one backup lives in its storage, by location (for a folder on this
// machine, its absolute, normal path) and identity. Each Storage makes its own kind (a
// LocalFolder for LocalStorage) and is the only one to look inside it (FolderAs, by the tag of
// the backend that made it, never by asking for a C++ type); the rest of the engine reads the
// location and the identity, and hands the folder back to its storage.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/base/path_check.h"
#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct FolderIdentity {
  uint64_t dev = 0, ino = 0;
  bool operator==(const FolderIdentity&) const = default;
  auto operator<=>(const FolderIdentity&) const = default;
};

// Which backend made a folder: each backend's folder class has one, `static constexpr
// BackendKind kKind`, whose address is the tag.
struct BackendKind {
  const char* name;  // For messages: "a local folder", "object storage", ...
};

// Thread-safe (immutable).
class BackupFolder {
 public:
  BackupFolder(std::string path, FolderIdentity id, const BackendKind& kind)
      : path_(std::move(path)), id_(id), kind_(&kind) {}
  virtual ~BackupFolder() = default;
  BackupFolder(const BackupFolder&) = delete;
  BackupFolder& operator=(const BackupFolder&) = delete;

  const std::string& path() const { return path_; }
  const FolderIdentity& identity() const { return id_; }
  const BackendKind& kind() const { return *kind_; }

 private:
  const std::string path_;
  const FolderIdentity id_;
  const BackendKind* const kind_;
};

// `folder` as the T (a backend's folder class, with T::kKind) that made it; kInvalidArgument
// naming the folder if another backend made it.
template <typename T>
StatusOr<const T*> FolderAs(const BackupFolder& folder) {
  if (&folder.kind() != &T::kKind) {
    return Status::InvalidArgument("Backup " + folder.path() + " is not " + T::kKind.name +
                                   " (it is " + folder.kind().name + ")");
  }
  return static_cast<const T*>(&folder);
}
template <typename T>
StatusOr<std::shared_ptr<const T>> FolderAs(const std::shared_ptr<const BackupFolder>& folder) {
  RETURN_IF_ERROR(FolderAs<T>(*folder).status());
  return std::static_pointer_cast<const T>(folder);
}

}  // namespace stitchfs::engine
