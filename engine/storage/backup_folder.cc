#include "engine/storage/backup_folder.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace stitchfs::engine {

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::string out = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec || out.empty()) out = path;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

uint64_t NewFdCacheKey() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

BackupFolder::BackupFolder(std::string path, FolderIdentity id)
    : path_(std::move(path)), id_(id), key_(NewFdCacheKey()) {}

StatusOr<std::shared_ptr<const BackupFolder>> BackupFolder::Open(const std::string& path,
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
  return std::shared_ptr<const BackupFolder>(new BackupFolder(abs, id));
}

std::shared_ptr<const BackupFolder> BackupFolder::Expect(const std::string& path,
                                                         FolderIdentity id) {
  return std::shared_ptr<const BackupFolder>(new BackupFolder(path, id));
}

StatusOr<UniqueFd> BackupFolder::Reopen() const {
  UniqueFd dir(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!dir || ::fstat(dir.get(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) {
      return Status::BackupDamaged("Backup " + path_ + " was removed while in use");
    }
    return Status::IOError("Backup " + path_ + ": open its folder", e);
  }
  if (FolderIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)} != id_) {
    return Status::BackupDamaged("Backup " + path_ +
                                 " was replaced by another folder while in use");
  }
  return dir;
}

}  // namespace stitchfs::engine
