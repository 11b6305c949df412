// ArchiveCache: the per-user cache of archive indexes (ArchiveIndex) and of streams decoded whole
// (stream_decoder.h), keyed by the archive's identity (ArchiveStamp), so that an archive is
// indexed or decoded once and not again until it changes. Bounded in bytes, least recently used
// removed first. Files are replaced by rename, never changed in place.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/backends/archive/archive_index.h"
#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {

// Thread-safe (no state but the folder).
class ArchiveCache {
 public:
  ArchiveCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_(max_bytes) {}

  // The per-user one: DefaultCacheDir()/archives, bounded by LimitBytes(); nullptr when
  // caching is off. Trimmed (Trim) when first asked for.
  static const ArchiveCache* Default();
  // $STITCH_ARCHIVE_CACHE_MB (default 8192) in bytes: the bound of the cache, and the most a
  // stream decoded whole may take (with or without a cache).
  static uint64_t LimitBytes();

  // The index cached for `stamp` if it is there and sound (one that is not is removed).
  std::optional<ArchiveIndex> LoadIndex(const ArchiveStamp& stamp) const;
  // Best effort: a failure leaves nothing behind and is not reported.
  void StoreIndex(const ArchiveStamp& stamp, const ArchiveIndex& index) const;
  // The decoded stream cached for `stamp`, open for reading, or an invalid fd.
  UniqueFd OpenStream(const ArchiveStamp& stamp) const;
  // Removes what is cached for `stamp` (found damaged).
  void Drop(const ArchiveStamp& stamp) const;

  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_; }
  // Where the stream of `stamp` is kept.
  std::string StreamPath(const ArchiveStamp& stamp) const { return PathFor(stamp, ".stream"); }
  // Removes the temporary files of writers that died (a decode killed midway) and keeps the
  // folder within its bound, counting the temporary files being written (TrimCacheFolder).
  void Trim() const;

 private:
  std::string PathFor(const ArchiveStamp& stamp, const char* ext) const;

  std::string dir_;
  uint64_t max_;
};

// A stream being decoded into a file: the cache's (renamed into place by Commit) or, with no
// cache, an unnamed temporary file that lives as long as the fd Commit returns. A stream longer
// than ArchiveCache::LimitBytes(), or one that would leave its file system with less than
// kMinFreeBytes free, is refused (a small hostile archive may decode to terabytes of zeros).
// Not thread-safe.
class StreamCacheWriter {
 public:
  // `display` names the archive in errors.
  static StatusOr<std::unique_ptr<StreamCacheWriter>> Create(const ArchiveCache* cache,
                                                             const ArchiveStamp& stamp,
                                                             std::string display);
  ~StreamCacheWriter();
  static constexpr uint64_t kMinFreeBytes = 512ull << 20;
  Status Append(std::span<const char> data);
  // Everything written and in place: the file open for reading; `*sums` the XXH3-64 of each
  // ArchiveIndex::kCachedPiece bytes, `*size` the length.
  StatusOr<UniqueFd> Commit(std::vector<uint64_t>* sums, uint64_t* size);

 private:
  StreamCacheWriter() = default;
  Status Flush(bool last);
  Status CheckRoom() const;

  const ArchiveCache* cache_ = nullptr;
  std::string path_, tmp_, display_;
  UniqueFd fd_;
  std::string buffer_;
  std::vector<uint64_t> sums_;
  uint64_t size_ = 0;
};

}  // namespace stitchfs::engine
