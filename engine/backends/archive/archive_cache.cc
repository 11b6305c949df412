#include "engine/backends/archive/archive_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "engine/base/cache_dir.h"
#include "engine/base/posix_file.h"
#include "engine/base/shared_bytes.h"
#include "engine/base/temp_name.h"

namespace stitchfs::engine {

namespace {

constexpr size_t kFlushBytes = 1 << 20;
constexpr uint64_t kMaxIndexBytes = uint64_t{1} << 32;

UniqueFd OpenForRead(const std::string& path) {
  return UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
}

}  // namespace

const ArchiveCache* ArchiveCache::Default() {
  static const ArchiveCache* cache = []() -> const ArchiveCache* {
    const std::string dir = DefaultCacheDir();
    if (dir.empty()) return nullptr;
    auto* c = new ArchiveCache(dir + "/archives", LimitBytes());
    c->Trim();  // What processes killed midway left goes now, not at the next store.
    return c;
  }();
  return cache;
}

uint64_t ArchiveCache::LimitBytes() {
  uint64_t mb = 8192;
  if (const char* v = std::getenv("STITCH_ARCHIVE_CACHE_MB"); v && *v) {
    mb = std::strtoull(v, nullptr, 10);
  }
  return mb << 20;
}

std::string ArchiveCache::PathFor(const ArchiveStamp& s, const char* ext) const {
  const uint64_t fields[] = {s.dev,
                             s.ino,
                             s.size,
                             static_cast<uint64_t>(s.mtime.sec),
                             static_cast<uint64_t>(s.mtime.nsec),
                             static_cast<uint64_t>(s.ctime.sec),
                             static_cast<uint64_t>(s.ctime.nsec)};
  const XXH128_hash_t h = XXH3_128bits(fields, sizeof fields);
  char name[48];
  std::snprintf(name, sizeof name, "/%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return dir_ + name + ext;
}

std::optional<ArchiveIndex> ArchiveCache::LoadIndex(const ArchiveStamp& stamp) const {
  const std::string path = PathFor(stamp, ".aindex");
  UniqueFd fd = OpenForRead(path);
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > kMaxIndexBytes) {
    return std::nullopt;
  }
  // Mapped, not read: the windows of a large deflate archive (32 KiB per MiB) stay in the page
  // cache, reclaimable, instead of in the process (cache files are replaced, never cut short).
  auto bytes = SharedBytes::Map(fd.get(), static_cast<size_t>(st.st_size), path);
  if (!bytes.ok()) return std::nullopt;
  auto index = DecodeArchiveIndex(bytes->view(), stamp, bytes->owner());
  if (!index.ok()) {
    Drop(stamp);
    return std::nullopt;
  }
  ::futimens(fd.get(), nullptr);  // Recently used.
  if (UniqueFd s = OpenForRead(StreamPath(stamp))) ::futimens(s.get(), nullptr);
  return std::move(*index);
}

void ArchiveCache::StoreIndex(const ArchiveStamp& stamp, const ArchiveIndex& index) const {
  if (!PrivateFolder(dir_).ok()) return;
  const std::string path = PathFor(stamp, ".aindex");
  const std::string tmp = path + TempSuffix();
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return;
  if (!WriteFully(fd.get(), EncodeArchiveIndex(index, stamp), tmp).ok() ||
      ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return;
  }
  Trim();
}

UniqueFd ArchiveCache::OpenStream(const ArchiveStamp& stamp) const {
  return OpenForRead(StreamPath(stamp));
}

void ArchiveCache::Drop(const ArchiveStamp& stamp) const {
  ::unlink(PathFor(stamp, ".aindex").c_str());
  ::unlink(StreamPath(stamp).c_str());
}

void ArchiveCache::Trim() const { TrimCacheFolder(dir_, {".aindex", ".stream"}, max_); }

StatusOr<std::unique_ptr<StreamCacheWriter>> StreamCacheWriter::Create(const ArchiveCache* cache,
                                                                       const ArchiveStamp& stamp,
                                                                       std::string display) {
  std::unique_ptr<StreamCacheWriter> w(new StreamCacheWriter());
  w->cache_ = cache;
  w->display_ = std::move(display);
  if (cache != nullptr && PrivateFolder(cache->dir()).ok()) {
    w->path_ = cache->StreamPath(stamp);
    w->tmp_ = w->path_ + TempSuffix();
    w->fd_ =
        UniqueFd(::open(w->tmp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!w->fd_) return Status::IOError("cache the decoded archive in " + w->tmp_, errno);
    return w;
  }
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string where = tmpdir && *tmpdir ? tmpdir : "/tmp";
  w->fd_ = UniqueFd(::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!w->fd_) return Status::IOError("decode archive " + w->display_ + " into " + where, errno);
  return w;
}

StreamCacheWriter::~StreamCacheWriter() {
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

Status StreamCacheWriter::Append(std::span<const char> data) {
  buffer_.append(data.data(), data.size());
  return buffer_.size() >= kFlushBytes ? Flush(false) : Status::OK();
}

Status StreamCacheWriter::CheckRoom() const {
  const std::string where = tmp_.empty() ? "a temporary file" : tmp_;
  if (size_ > ArchiveCache::LimitBytes()) {
    return Status::NotSupported("archive " + display_ + " decodes to more than " +
                                std::to_string(ArchiveCache::LimitBytes() >> 20) +
                                " MiB, the most the archive cache takes (STITCH_ARCHIVE_CACHE_MB)");
  }
  struct statvfs vfs;
  if (::fstatvfs(fd_.get(), &vfs) == 0 &&
      static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize < kMinFreeBytes) {
    return Status::IOError("decode archive " + display_ + " into " + where +
                               ": less than 512 MiB would be left free there",
                           ENOSPC);
  }
  return Status::OK();
}

Status StreamCacheWriter::Flush(bool last) {
  RETURN_IF_ERROR(CheckRoom());
  constexpr size_t kPiece = ArchiveIndex::kCachedPiece;
  const size_t whole = last ? buffer_.size() : buffer_.size() / kPiece * kPiece;
  for (size_t at = 0; at < whole; at += kPiece) {
    sums_.push_back(XXH3_64bits(buffer_.data() + at, std::min(kPiece, whole - at)));
  }
  Status s = WriteFully(
      fd_.get(), std::string_view(buffer_).substr(0, whole),
      "decoded archive " + display_ + " (" + (tmp_.empty() ? "temporary file" : tmp_) + ")");
  size_ += whole;
  buffer_.erase(0, whole);
  return s;
}

StatusOr<UniqueFd> StreamCacheWriter::Commit(std::vector<uint64_t>* sums, uint64_t* size) {
  RETURN_IF_ERROR(Flush(true));
  if (!tmp_.empty()) {
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
      return Status::IOError("cache the decoded archive as " + path_, errno);
    }
    tmp_.clear();
    cache_->Trim();
  }
  *sums = std::move(sums_);
  *size = size_;
  return std::move(fd_);
}

}  // namespace stitchfs::engine
