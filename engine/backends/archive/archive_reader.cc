#include "engine/backends/archive/archive_reader.h"

#include <xxhash.h>

#include <algorithm>

#include "engine/backends/archive/index_builder.h"
#include "engine/backends/archive/inflate_points.h"
#include "engine/base/posix_file.h"

namespace stitchfs::engine {

namespace {

class MemberFile final : public RandomAccessFile {
 public:
  MemberFile(std::shared_ptr<const ArchiveReader> archive, const ArchiveMember& m)
      : archive_(std::move(archive)), member_(m) {}
  uint64_t size() const override { return member_.size; }
  bool DropCached() const override { return archive_->DropCached(); }

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    const ArchiveStream& s = archive_->index().streams[member_.stream];
    return archive_->ReadStream(s, member_.offset + offset, dst);
  }

 private:
  std::shared_ptr<const ArchiveReader> archive_;
  const ArchiveMember& member_;  // In archive_'s index, kept alive with it.
};

}  // namespace

StatusOr<std::shared_ptr<const ArchiveReader>> ArchiveReader::Open(
    std::shared_ptr<const RandomAccessFile> file, ArchiveKind kind, const ArchiveStamp& stamp,
    std::string display, const ArchiveCache* cache, const Progress& progress) {
  if (cache != nullptr) {
    if (auto index = cache->LoadIndex(stamp)) {
      UniqueFd stream;
      if (index->cached_size > 0) stream = cache->OpenStream(stamp);
      if (index->cached_size == 0 || stream) {
        return std::make_shared<const ArchiveReader>(std::move(file), std::move(*index),
                                                     std::move(stream), std::move(display), cache,
                                                     stamp);
      }
    }
  }
  ASSIGN_OR_RETURN(BuiltIndex built,
                   BuildArchiveIndex(*file, kind, stamp, display, cache, progress));
  if (cache != nullptr) {
    cache->StoreIndex(stamp, built.index);
    // Read back mapped, so that even the first open keeps the windows out of its memory.
    if (auto mapped = cache->LoadIndex(stamp)) built.index = std::move(*mapped);
  }
  return std::make_shared<const ArchiveReader>(std::move(file), std::move(built.index),
                                               std::move(built.stream), std::move(display), cache,
                                               stamp);
}

bool ArchiveReader::DropCached() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    chunks_.Clear();
  }
  return file_->DropCached();
}

std::unique_ptr<RandomAccessFile> ArchiveReader::OpenMember(const ArchiveMember& m) const {
  return std::make_unique<MemberFile>(shared_from_this(), m);
}

Status ArchiveReader::ReadStream(const ArchiveStream& s, uint64_t offset,
                                 std::span<char> dst) const {
  switch (s.method) {
    case StreamMethod::kStored: {
      ASSIGN_OR_RETURN(size_t n, file_->ReadAt(s.in_offset + offset, dst));
      if (n != dst.size()) return Status::BackupDamaged("archive " + display_ + " is cut short");
      return Status::OK();
    }
    case StreamMethod::kDeflate:
      return ReadDeflate(s, offset, dst);
    case StreamMethod::kCached:
      return ReadCached(offset, dst);
  }
  return Status::Internal("unknown stream method");
}

Status ArchiveReader::ReadDeflate(const ArchiveStream& s, uint64_t offset,
                                  std::span<char> dst) const {
  const auto first = index_.points.begin() + s.first_point;
  const auto last = first + s.point_count;
  while (!dst.empty()) {
    auto it = std::upper_bound(first, last, offset,
                               [](uint64_t o, const RestartPoint& p) { return o < p.out; });
    const uint32_t p = static_cast<uint32_t>(std::prev(it) - index_.points.begin());
    ASSIGN_OR_RETURN(Chunk chunk, ChunkAt(s, p));
    const uint64_t in_chunk = offset - index_.points[p].out;
    if (in_chunk >= chunk->size()) return Status::Internal("restart points out of order");
    const size_t n = static_cast<size_t>(std::min<uint64_t>(dst.size(), chunk->size() - in_chunk));
    std::copy_n(chunk->data() + in_chunk, n, dst.data());
    dst = dst.subspan(n);
    offset += n;
  }
  return Status::OK();
}

StatusOr<ArchiveReader::Chunk> ArchiveReader::ChunkAt(const ArchiveStream& s, uint32_t p) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (const Chunk* chunk = chunks_.Get(p)) return *chunk;
  }
  const RestartPoint& point = index_.points[p];
  const bool last = p + 1 == s.first_point + s.point_count;
  const uint64_t end = last ? s.out_size : index_.points[p + 1].out;
  auto bytes = std::make_shared<std::string>(static_cast<size_t>(end - point.out), '\0');
  const std::string_view window = index_.Windows().substr(point.window_offset, point.window_size);
  RETURN_IF_ERROR(InflateFrom(*file_, s, point, window, *bytes, display_));
  std::lock_guard<std::mutex> lock(mu_);
  if (!chunks_.Peek(p)) {
    chunks_.Put(p, bytes, bytes->size());
    chunks_.Trim({.max_weight = kChunkBudget, .min_entries = 1});
  }
  return Chunk(bytes);
}

// Whole pieces are read and checked against the index's sums: a damaged cache file is an error
// (and dropped, to be decoded again), never other bytes.
Status ArchiveReader::ReadCached(uint64_t offset, std::span<char> dst) const {
  constexpr uint64_t kPiece = ArchiveIndex::kCachedPiece;
  const uint64_t first = offset / kPiece, end = offset + dst.size();
  const uint64_t last = (end + kPiece - 1) / kPiece;
  std::string buffer(
      static_cast<size_t>(std::min(last * kPiece, index_.cached_size) - first * kPiece), '\0');
  const std::string name = "decoded archive " + display_ + " in the cache";
  RETURN_IF_ERROR(PreadFully(stream_.get(), first * kPiece, buffer, name));
  for (uint64_t i = first; i < last; ++i) {
    const size_t at = static_cast<size_t>((i - first) * kPiece);
    const size_t len = static_cast<size_t>(std::min<uint64_t>(kPiece, buffer.size() - at));
    if (XXH3_64bits(buffer.data() + at, len) != index_.piece_sums[i]) {
      if (cache_ != nullptr) cache_->Drop(stamp_);
      return Status::IOError(name + " is damaged; it is decoded again at the next open", EIO);
    }
  }
  std::copy_n(buffer.data() + (offset - first * kPiece), dst.size(), dst.data());
  return Status::OK();
}

}  // namespace stitchfs::engine
