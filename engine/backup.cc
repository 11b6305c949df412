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

StatusOr<std::shared_ptr<const Backup>> Backup::Open(const std::string& dir,
                                                     const ManifestCache* cache) {
  // Absolute, so messages and mounts (which change folder) name it unambiguously.
  std::error_code ec;
  std::string path = std::filesystem::absolute(dir, ec).lexically_normal().string();
  if (ec) path = dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  UniqueFd dir_fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) {
    int e = errno;
    return Status::BackupNotFound("Backup " + path + " not found (" + std::strerror(e) + ")", e);
  }
  UniqueFd fd(::openat(dir_fd.get(), ".backup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    int e = errno;
    std::string why = e == ENOENT ? "no .backup manifest" : std::strerror(e);
    if (e == ENOENT && ::faccessat(dir_fd.get(), ".lock", F_OK, 0) == 0) {
      why =
          "no .backup manifest; its .lock shows a backup being written, or one whose writer "
          "died: run the same backup again to take it over, or remove the folder";
    }
    return Status::BackupNotFound("Backup " + path + " not found (" + why + ")", e);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return Status::BackupNotFound("Backup " + path + ": fstat .backup", errno);
  if (!S_ISREG(st.st_mode))
    return Status::BackupNotFound("Backup " + path + ": .backup is not a file");
  const ManifestIdentity id = IdentityOf(st);
  if (id.size < ManifestCache::kMinManifestBytes) cache = nullptr;
  std::unique_ptr<const Manifest> manifest = cache ? cache->Load(id) : nullptr;
  if (!manifest) {
    ASSIGN_OR_RETURN(manifest, ReadManifestFd(fd.get(), path, id.size));
    if (cache) cache->Store(id, *manifest);
  }
  auto folder = std::make_shared<const BackupFolder>(BackupFolder{path, std::move(dir_fd)});
  return std::shared_ptr<const Backup>(new Backup(std::move(folder), std::move(manifest), id));
}

std::optional<ManifestIdentity> StatManifest(const std::string& dir) {
  struct stat st;
  if (::stat((dir + "/.backup").c_str(), &st) != 0) return std::nullopt;
  return IdentityOf(st);
}

StatusOr<std::shared_ptr<const Backup>> BackupCache::Open(const std::string& dir) {
  std::error_code ec;
  const std::string key = std::filesystem::absolute(dir, ec).lexically_normal().string();
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
