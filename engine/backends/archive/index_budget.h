// IndexBudget: what one index build (index_builder.h) may cost, so that a small hostile archive
// cannot make it do large work or keep a large index: the bytes it reads and decodes, and the
// bytes of index it keeps, each at most a fixed multiple of the archive's size plus a floor.
// Every decoder, scanner and indexer of engine/backends/archive/ charges it as it goes.
#pragma once

#include <cstdint>
#include <string>

#include "engine/base/status.h"

namespace stitchfs::engine {

struct IndexLimits {
  // Bytes read from the archive, plus bytes decoded, plus kStartCost per member, stream or
  // frame whose decoder starts.
  uint64_t work = 0;
  // Bytes of index kept: member records with their names, restart points with their windows.
  uint64_t index = 0;

  // The limits for an archive of `archive_size` bytes (saturating).
  static IndexLimits For(uint64_t archive_size);

  // Deflate never decodes to more than 1032 times its size, so every archive whose members do
  // not share bytes stays below this; only the other codecs (zstd, xz, bzip2) can go past it.
  static constexpr uint64_t kWorkPerByte = 1100;
  static constexpr uint64_t kWorkFloor = uint64_t{1} << 30;
  // Restart windows are 1/32 of deflate's output (about 33 times its input at most); member
  // records of a compressed tar rarely reach a tenth of that.
  static constexpr uint64_t kIndexPerByte = 64;
  static constexpr uint64_t kIndexFloor = uint64_t{64} << 20;
  static constexpr uint64_t kStartCost = 4096;
};

// Counts one build's work and index bytes against its limits. Thread-compatible.
class IndexBudget {
 public:
  // `archive_size` is told in messages.
  IndexBudget(const IndexLimits& limits, uint64_t archive_size)
      : limits_(limits), archive_size_(archive_size) {}

  // Counts `n` more units of work done for `where` (the archive, or "<archive> member <name>"):
  // kBackupDamaged naming `where` once the total exceeds the limit (the total still counts `n`).
  Status Work(uint64_t n, const std::string& where);
  // The same for `n` more bytes of index.
  Status Index(uint64_t n, const std::string& where);
  // kBackupDamaged naming `where` if `n` more units of work would exceed the limit (nothing is
  // counted): for a member that declares more output than the archive may decode to.
  Status Expect(uint64_t n, const std::string& where) const;

  uint64_t work() const { return work_; }
  uint64_t index() const { return index_; }
  const IndexLimits& limits() const { return limits_; }

 private:
  Status Over(const std::string& where, const char* what, uint64_t limit) const;

  const IndexLimits limits_;
  const uint64_t archive_size_;
  uint64_t work_ = 0, index_ = 0;
};

}  // namespace stitchfs::engine
