#include "engine/backends/local/data_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engine/base/polled_read.h"
#include "engine/base/posix_file.h"

namespace stitchfs::engine {

StatusOr<std::pair<UniqueFd, DataFile::Identity>> OpenDataFileBeneath(int dir_fd,
                                                                      const std::string& rel,
                                                                      const std::string& display) {
  auto fd = OpenBeneath(dir_fd, rel);
  if (!fd.ok()) {
    const int err = fd.status().sys_errno();
    const std::string what = "cannot open data file " + display + ": " + std::strerror(err);
    if (err == ENOENT || err == ENOTDIR) return Status::BackupDamaged(what);
    if (err == ELOOP || err == EXDEV) return Status::InsecurePath(what + " (a symlink)");
    return Status(ErrorCode::kIOError, what, err);
  }
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Status::IOError("fstat " + display, errno);
  if (!S_ISREG(st.st_mode))
    return Status::BackupDamaged("data file " + display + " is not a regular file");
  return std::make_pair(std::move(*fd),
                        DataFile::Identity{static_cast<uint64_t>(st.st_size), st.st_dev, st.st_ino,
                                           st.st_mtim.tv_sec, st.st_mtim.tv_nsec});
}

namespace {

// The folder's fd, shared through the cache (opened again, and checked, when evicted).
StatusOr<std::shared_ptr<const UniqueFd>> FolderFd(FdCache& cache, const LocalFolder& folder) {
  return cache.Get(folder.cache_key(), [&folder] { return folder.Reopen(); });
}

}  // namespace

StatusOr<std::shared_ptr<const DataFile>> DataFile::Open(std::shared_ptr<FdCache> cache,
                                                         std::shared_ptr<const LocalFolder> folder,
                                                         std::string relative) {
  ASSIGN_OR_RETURN(auto dir, FolderFd(*cache, *folder));
  ASSIGN_OR_RETURN(auto opened,
                   OpenDataFileBeneath(dir->get(), relative, folder->path() + "/" + relative));
  std::shared_ptr<const DataFile> f(
      new DataFile(std::move(cache), std::move(folder), std::move(relative), opened.second));
  // Seed the cache with the fd just opened instead of opening the file again on first read.
  auto fd = std::make_shared<UniqueFd>(std::move(opened.first));
  RETURN_IF_ERROR(
      f->cache_->Get(f->key_, [&fd]() -> StatusOr<UniqueFd> { return std::move(*fd); }).status());
  return f;
}

DataFile::~DataFile() { cache_->Forget(key_); }

StatusOr<UniqueFd> DataFile::Reopen() const {
  ASSIGN_OR_RETURN(auto dir, FolderFd(*cache_, *folder_));
  ASSIGN_OR_RETURN(auto opened, OpenDataFileBeneath(dir->get(), rel_, display_));
  if (opened.second.size != id_.size) {
    return Status::BackupDamaged("data file " + display_ + " changed size from " +
                                 std::to_string(id_.size) + " to " +
                                 std::to_string(opened.second.size) + " bytes while in use");
  }
  // Another file of the same size under the name (its backup deleted and another written in
  // its place, its inode number reused): its bytes are not this file's.
  if (opened.second != id_) {
    return Status::BackupDamaged("data file " + display_ + " was replaced while in use");
  }
  return std::move(opened.first);
}

StatusOr<std::shared_ptr<const UniqueFd>> DataFile::Fd() const {
  return cache_->Get(key_, [this] { return Reopen(); });
}

void DataFile::Prefetch(uint64_t offset, uint64_t length) const {
  auto fd = Fd();
  if (!fd.ok() || offset >= id_.size) return;
  length = std::min({length, id_.size - offset, kMaxPrefetch});
  ::posix_fadvise((*fd)->get(), static_cast<off_t>(offset), static_cast<off_t>(length),
                  POSIX_FADV_WILLNEED);
}

Status DataFile::ReadExact(uint64_t offset, std::span<char> dst) const {
  ASSIGN_OR_RETURN(auto fd, Fd());
  return PolledRead(fd->get(), offset, dst, display_);
}

}  // namespace stitchfs::engine
