// ConcatFile: one logical file stitched from ordered segments of other files (the base
// prefix, then each suffix), read positionally.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "engine/base/random_access_file.h"

namespace stitchfs::engine {

struct Segment {
  std::shared_ptr<const RandomAccessFile> file;
  uint64_t file_offset = 0;  // Where the segment starts in `file`.
  uint64_t length = 0;       // Exactly this many bytes are read from `file`.
};

// Thread-safe (immutable; segments may be shared with other readers).
class ConcatFile final : public RandomAccessFile {
 public:
  // Zero-length segments are dropped. REQUIRES: every segment lies within its file's size().
  explicit ConcatFile(std::vector<Segment> segments);

  uint64_t size() const override { return starts_.empty() ? 0 : starts_.back(); }
  void Prefetch(uint64_t offset, uint64_t length) const override;
  // The segment's file's loan when the range lies within one segment.
  StatusOr<Loan> Lend(uint64_t offset, size_t n) const override;
  bool DropCached() const override;  // Every segment's file's.
  static constexpr uint64_t kPrefetchLead = 8 << 20;
  static constexpr uint64_t kStreamingRead = 64 << 10;
  const std::vector<Segment>& segments() const { return segments_; }

 protected:
  // Reads across segment boundaries. A segment file that ends before its declared length (for
  // example truncated after open) is kBackupDamaged, never a short read or zeros.
  // A read of kStreamingRead or more that ends within kPrefetchLead of its segment's end tells
  // the next segment's file to Prefetch its start, so that a stream crosses from one data file into
  // the next without waiting (and an object store's read-ahead starts there at full width).
  Status ReadExact(uint64_t offset, std::span<char> dst) const override;

 private:
  std::vector<Segment> segments_;
  std::vector<uint64_t> starts_;  // starts_[i] = logical offset of segment i; last = size.
  size_t SegmentOf(uint64_t offset) const;  // REQUIRES: offset < size().
  // Tells segment `next` to Prefetch if a read of `n` bytes ending at `end` streams near it.
  void HintNext(size_t next, uint64_t end, uint64_t n) const;
  mutable std::atomic<size_t> hinted_{SIZE_MAX};  // The segment last told to Prefetch.
};

// One reader over `segments`: the segment's own file when it is a single whole file, else a
// ConcatFile.
std::shared_ptr<const RandomAccessFile> Concatenate(std::vector<Segment> segments);

}  // namespace stitchfs::engine
