#include "engine/storage/backup.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/format/manifest_cache.h"
#include "engine/format/manifest_reader.h"

namespace stitchfs::engine {

StatusOr<std::shared_ptr<const Backup>> Backup::Open(const Storage& storage, const std::string& dir,
                                                     const ManifestCache* cache) {
  ASSIGN_OR_RETURN(auto folder, storage.OpenFolder(dir));
  ASSIGN_OR_RETURN(ManifestSource source, storage.OpenManifest(*folder));
  const ManifestIdentity id = source.identity;
  const uint64_t bytes = source.bytes->size();  // (The identity's size may be another's.)
  if (bytes < ManifestCache::kMinManifestBytes) cache = nullptr;
  std::unique_ptr<const Manifest> manifest = cache ? cache->Load(id) : nullptr;
  if (!manifest) {
    ASSIGN_OR_RETURN(manifest, ReadManifest(*source.bytes, folder->path()));
    if (cache) cache->Store(id, *manifest);
  }
  return std::shared_ptr<const Backup>(
      new Backup(std::move(folder), std::move(manifest), id, bytes));
}

StatusOr<ManifestHeader> ReadBackupHeader(const Storage& storage, const std::string& dir,
                                          ManifestIdentity* id, FolderIdentity* folder_id) {
  ASSIGN_OR_RETURN(auto folder, storage.OpenFolder(dir));
  ASSIGN_OR_RETURN(ManifestSource source, storage.OpenManifest(*folder));
  *id = source.identity;
  *folder_id = folder->identity();
  return ReadManifestHeader(*source.bytes, folder->path());
}

Status CheckManifestReadsBack(const Storage& storage, const std::string& dir,
                              std::string_view manifest) {
  // Whatever goes wrong, the write is what failed.
  auto failed = [&dir](const std::string& why) {
    return Status(ErrorCode::kIOError, "the manifest written as " + dir + "/.backup " + why, EIO);
  };
  auto folder = storage.OpenFolder(dir);
  auto source = folder.ok() ? storage.OpenManifest(**folder) : folder.status();
  if (!source.ok()) return failed("cannot be read back: " + source.status().ToString());
  const uint64_t size = source->bytes->size();
  if (size != manifest.size()) {
    return failed("reads back " + std::to_string(size) + " bytes, " +
                  std::to_string(manifest.size()) + " were written");
  }
  std::string back(manifest.size(), '\0');
  if (Status s = source->bytes->ReadAt(0, back).status(); !s.ok()) {
    return failed("cannot be read back: " + s.ToString());
  }
  const auto diff = std::mismatch(back.begin(), back.end(), manifest.begin());
  if (diff.first == back.end()) return Status::OK();
  return failed("reads back other bytes than were written (from byte " +
                std::to_string(diff.first - back.begin()) + ")");
}

StatusOr<std::shared_ptr<const Backup>> BackupCache::Open(const Storage& storage,
                                                          const std::string& dir,
                                                          const ManifestCache* cache) {
  const std::string key = storage.Normal(dir);
  const auto now = storage.StatManifest(key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto b = open_[key].lock();
    if (b && now.ok() && *now == b->identity()) {
      Keep(b);
      return b;
    }
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Backup> b, Backup::Open(storage, dir, cache));
  std::lock_guard<std::mutex> lock(mu_);
  open_[key] = b;
  std::erase_if(open_, [](const auto& kv) { return kv.second.expired(); });
  Keep(b);
  return b;
}

void BackupCache::Keep(const std::shared_ptr<const Backup>& b) {
  if (keep_bytes_ == 0 || kept_.Get(b.get())) return;
  kept_.Put(b.get(), b, b->manifest().MemoryUsage());
  kept_.Trim({.max_weight = keep_bytes_, .min_entries = 1});
}

size_t BackupCache::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_.weight();
}

}  // namespace stitchfs::engine
