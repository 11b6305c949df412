// ArchiveReader: one version of an archive file opened for reading its members: the index (from
// the cache, else built and cached), and each member as a RandomAccessFile. Decoded deflate
// chunks (from one restart point to the next) are kept in a small LRU, so a sequential reader
// decodes each chunk once and a random one decodes at most one chunk per read.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "engine/backends/archive/archive_cache.h"
#include "engine/backends/archive/archive_index.h"
#include "engine/base/lru.h"
#include "engine/base/random_access_file.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {

// Thread-safe.
class ArchiveReader : public std::enable_shared_from_this<ArchiveReader> {
 public:
  using Progress = std::function<void(uint64_t done, uint64_t total)>;

  // Opens `file` (of `kind`, identified by `stamp`, named `display` in messages): the index from
  // `cache` if it has a sound one, else built (BuildArchiveIndex, told to `progress`) and stored.
  static StatusOr<std::shared_ptr<const ArchiveReader>> Open(
      std::shared_ptr<const RandomAccessFile> file, ArchiveKind kind, const ArchiveStamp& stamp,
      std::string display, const ArchiveCache* cache, const Progress& progress);

  const ArchiveIndex& index() const { return index_; }
  const std::string& display() const { return display_; }
  // Member `m` of index(), read positionally (kBackupDamaged if its data turns out damaged).
  std::unique_ptr<RandomAccessFile> OpenMember(const ArchiveMember& m) const;
  // Reads `dst.size()` bytes of stream `s` of index() from `offset` (within its out_size).
  Status ReadStream(const ArchiveStream& s, uint64_t offset, std::span<char> dst) const;
  // RandomAccessFile::DropCached of the archive's file (its answer), and the decoded chunks kept
  // in memory. A decoded stream kept on disk stays: it was made once, when the archive was
  // first indexed, from a read of the whole archive that kept nothing on the way.
  bool DropCached() const;

  ArchiveReader(std::shared_ptr<const RandomAccessFile> file, ArchiveIndex index, UniqueFd stream,
                std::string display, const ArchiveCache* cache, const ArchiveStamp& stamp)
      : file_(std::move(file)),
        index_(std::move(index)),
        stream_(std::move(stream)),
        display_(std::move(display)),
        cache_(cache),
        stamp_(stamp) {}

 private:
  using Chunk = std::shared_ptr<const std::string>;
  // The decoded bytes from restart point `p` to the next one (or the stream's end).
  StatusOr<Chunk> ChunkAt(const ArchiveStream& s, uint32_t p) const;
  Status ReadDeflate(const ArchiveStream& s, uint64_t offset, std::span<char> dst) const;
  Status ReadCached(uint64_t offset, std::span<char> dst) const;

  const std::shared_ptr<const RandomAccessFile> file_;
  const ArchiveIndex index_;
  const UniqueFd stream_;  // The decoded stream, if the index has one.
  const std::string display_;
  const ArchiveCache* const cache_;
  const ArchiveStamp stamp_;

  static constexpr size_t kChunkBudget = 32 << 20;
  mutable std::mutex mu_;
  mutable Lru<uint32_t, Chunk> chunks_;  // By restart point, weighing their bytes.
};

}  // namespace stitchfs::engine
