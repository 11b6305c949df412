#include "engine/format/manifest_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <vector>

#include "engine/base/cache_dir.h"
#include "engine/base/folder_list.h"
#include "engine/base/posix_file.h"
#include "engine/base/temp_name.h"
#include "engine/base/unique_fd.h"
#include "engine/format/manifest_file.h"
#include "engine/location/locator.h"
#include "engine/location/s3_address.h"

namespace stitchfs::engine {
const ManifestCache* ManifestCache::Default() {
  static const ManifestCache* cache = []() -> const ManifestCache* {
    const std::string dir = DefaultCacheDir();
    if (dir.empty()) return nullptr;
    const char* mb = std::getenv("STITCH_CACHE_MB");
    const uint64_t max_mb = mb == nullptr || *mb == '\0' ? 4096 : std::strtoull(mb, nullptr, 10);
    auto* c = new ManifestCache(dir, max_mb << 20);
    if (StartTrimDue(c->dir())) c->Trim();  // What killed processes left goes now.
    return c;
  }();
  return cache;
}

std::string ManifestCache::FileFor(const ManifestIdentity& id) const {
  const XXH128_hash_t h = XXH3_128bits(&id, sizeof id);
  char name[64];
  std::snprintf(name, sizeof name, "/%016llx%016llx.manifest",
                static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return dir_ + name;
}

std::unique_ptr<const Manifest> ManifestCache::Load(const ManifestIdentity& id) const {
  const std::string path = FileFor(id);
  // Never blocks (a FIFO in its place is refused by Read, not waited on).
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return nullptr;
  auto m = ManifestFile::Read(fd.get(), id);
  if (!m.ok()) {
    ::unlink(path.c_str());  // Damaged or stale: the next store replaces it.
    return nullptr;
  }
  ::futimens(fd.get(), nullptr);  // Recently used (Trim removes the oldest first).
  return std::move(*m);
}

bool ManifestCache::StoreFile(const std::string& path,
                              const std::function<bool(int)>& write) const {
  if (!PrivateFolder(dir_).ok()) return false;
  const std::string tmp = path + TempSuffix();  // Unique: threads may store at once.
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return false;
  if (!write(fd.get()) || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  Trim();
  return true;
}

void ManifestCache::Store(const ManifestIdentity& id, const Manifest& m) const {
  // Never a credential in a cache file; and a manifest kept without its locator's would
  // lose what opening its base needs. Such a (pre-2026 ClickHouse, S3) manifest is parsed.
  const ManifestHeader& h = m.header();
  if (LocatorHasCredentials(h.base_backup) ||
      !CheckNoUrlCredentials(h.original_endpoint, "").ok()) {
    return;
  }
  StoreFile(FileFor(id), [&](int fd) { return ManifestFile::Write(fd, m, id).ok(); });
}

std::string ManifestCache::IndexFileFor(std::string_view key) const {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  char name[64];
  std::snprintf(name, sizeof name, "/%016llx%016llx.index",
                static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return dir_ + name;
}

std::optional<SharedBytes> ManifestCache::LoadIndex(std::string_view key) const {
  const std::string path = IndexFileFor(key);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // Populated: decoding checks every record of it at once.
  auto bytes = SharedBytes::Map(fd.get(), static_cast<size_t>(st.st_size), path, /*populate=*/true);
  if (!bytes.ok()) return std::nullopt;
  ::futimens(fd.get(), nullptr);  // Recently used.
  return std::move(*bytes);
}

void ManifestCache::StoreIndex(std::string_view key, std::string_view bytes) const {
  StoreFile(IndexFileFor(key), [&](int fd) { return WriteFully(fd, bytes, "index").ok(); });
}

void ManifestCache::DropIndex(std::string_view key) const { ::unlink(IndexFileFor(key).c_str()); }

void ManifestCache::Trim() const { TrimCacheFolder(dir_, {".manifest", ".index"}, max_); }

}  // namespace stitchfs::engine
