#include "engine/backends/local/local_folder.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "engine/base/fd_cache.h"

namespace stitchfs::engine {

LocalFolder::LocalFolder(std::string path, FolderIdentity id)
    : BackupFolder(std::move(path), id, kKind), key_(NewFdCacheKey()) {}

StatusOr<std::shared_ptr<const LocalFolder>> LocalFolder::Open(const std::string& path,
                                                               UniqueFd* fd) {
  const std::string abs = AbsolutePath(path);
  UniqueFd dir(::open(abs.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!dir || ::fstat(dir.get(), &st) != 0) {
    const int e = errno;
    const std::string what = "Backup " + abs + " not found (" + std::strerror(e) + ")";
    if (e == ENOENT || e == ENOTDIR || e == EACCES || e == EPERM) {
      return Status::BackupNotFound(what, e);
    }
    return Status::IOError("Backup " + abs + ": open its folder", e);
  }
  *fd = std::move(dir);
  const FolderIdentity id{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  return std::shared_ptr<const LocalFolder>(new LocalFolder(abs, id));
}

StatusOr<UniqueFd> LocalFolder::Reopen() const {
  UniqueFd dir(::open(path().c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!dir || ::fstat(dir.get(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) {
      return Status::BackupDamaged("Backup " + path() + " was removed while in use");
    }
    return Status::IOError("Backup " + path() + ": open its folder", e);
  }
  if (FolderIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)} !=
      identity()) {
    return Status::BackupDamaged("Backup " + path() +
                                 " was replaced by another folder while in use");
  }
  return dir;
}

}  // namespace stitchfs::engine
