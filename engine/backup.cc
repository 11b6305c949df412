#include "engine/backup.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/manifest_cache.h"
#include "engine/manifest_reader.h"

namespace stitchfs::engine {
namespace {

ManifestIdentity IdentityOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size), FileTime::From(st.st_mtim),
          FileTime::From(st.st_ctim)};
}

}  // namespace

StatusOr<std::shared_ptr<const Backup>> Backup::Open(const std::string& dir) {
  return Open(dir, ManifestCache::Default());
}

namespace {

// Opens `.backup` in the open folder `dir_fd`: a regular file, not a symlink, never blocking.
StatusOr<UniqueFd> OpenManifest(int dir_fd, const std::string& path, struct stat* st) {
  UniqueFd fd(::openat(dir_fd, ".backup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    const int e = errno;
    std::string why = e == ENOENT  ? "no .backup manifest"
                      : e == ELOOP ? ".backup is a symlink, which is never followed"
                                   : std::strerror(e);
    if (e == ENOENT && ::faccessat(dir_fd, ".lock", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
      why =
          "no .backup manifest; its .lock shows a backup being written, or one whose writer "
          "died: run the same backup again to take it over, or remove the folder";
    }
    if (e == EMFILE || e == ENFILE || e == ENOMEM || e == EIO) {
      return Status::IOError("Backup " + path + ": open .backup", e);
    }
    return Status::BackupNotFound("Backup " + path + " not found (" + why + ")", e);
  }
  if (::fstat(fd.get(), st) != 0)
    return Status::IOError("Backup " + path + ": fstat .backup", errno);
  if (!S_ISREG(st->st_mode)) {
    return Status::BackupNotFound("Backup " + path + ": .backup is not a regular file");
  }
  // Reads of a regular file never block; a blocking fd is what the parser expects.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

StatusOr<std::shared_ptr<const Backup>> Backup::Open(const std::string& dir,
                                                     const ManifestCache* cache) {
  UniqueFd dir_fd;
  ASSIGN_OR_RETURN(auto folder, BackupFolder::Open(dir, &dir_fd));
  const std::string& path = folder->path();
  struct stat st;
  ASSIGN_OR_RETURN(UniqueFd fd, OpenManifest(dir_fd.get(), path, &st));
  const ManifestIdentity id = IdentityOf(st);
  if (id.size < ManifestCache::kMinManifestBytes) cache = nullptr;
  std::unique_ptr<const Manifest> manifest = cache ? cache->Load(id) : nullptr;
  if (!manifest) {
    ASSIGN_OR_RETURN(manifest, ReadManifestFd(fd.get(), path, id.size));
    if (cache) cache->Store(id, *manifest);
  }
  return std::shared_ptr<const Backup>(new Backup(std::move(folder), std::move(manifest), id));
}

StatusOr<ManifestHeader> ReadBackupHeader(const std::string& dir, ManifestIdentity* id,
                                          FolderIdentity* folder_id) {
  UniqueFd dir_fd;
  ASSIGN_OR_RETURN(auto folder, BackupFolder::Open(dir, &dir_fd));
  struct stat st;
  ASSIGN_OR_RETURN(UniqueFd fd, OpenManifest(dir_fd.get(), folder->path(), &st));
  *id = IdentityOf(st);
  *folder_id = folder->identity();
  return ReadManifestHeaderFd(fd.get(), folder->path());
}

std::optional<ManifestIdentity> StatManifest(const std::string& dir) {
  struct stat st;
  if (::fstatat(AT_FDCWD, (dir + "/.backup").c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  return IdentityOf(st);
}

StatusOr<std::shared_ptr<const Backup>> BackupCache::Open(const std::string& dir) {
  const std::string key = AbsolutePath(dir);
  const auto now = StatManifest(key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto b = open_[key].lock();
    if (b && now && b->identity() == *now) {
      Keep(b);
      return b;
    }
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Backup> b, Backup::Open(dir));
  std::lock_guard<std::mutex> lock(mu_);
  open_[key] = b;
  std::erase_if(open_, [](const auto& kv) { return kv.second.expired(); });
  Keep(b);
  return b;
}

void BackupCache::Keep(const std::shared_ptr<const Backup>& b) {
  if (keep_bytes_ == 0) return;
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (*it == b) {
      kept_.splice(kept_.begin(), kept_, it);
      return;
    }
  }
  kept_.push_front(b);
  kept_total_ += b->manifest().MemoryUsage();
  while (kept_total_ > keep_bytes_ && kept_.size() > 1) {
    kept_total_ -= kept_.back()->manifest().MemoryUsage();
    kept_.pop_back();
  }
}

size_t BackupCache::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_total_;
}

}  // namespace stitchfs::engine
