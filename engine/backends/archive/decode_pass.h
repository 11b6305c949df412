// DecodePass: one pass over the compressed bytes of an archive, in order, with its output handed
// on as it comes (to a TarScanner, a checksum, a cache file). Shared by the deflate indexer
// (inflate_points.h) and the whole-stream decoders (stream_decoder.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "engine/backends/archive/index_budget.h"
#include "engine/base/random_access_file.h"
#include "engine/base/status.h"

namespace stitchfs::engine {

struct DecodePass {
  const RandomAccessFile* file = nullptr;  // The archive.
  std::string display;                     // Names the archive (and member) in errors.
  // Receives the decoded bytes in order; an error stops the pass with it.
  std::function<Status(std::span<const char>)> sink;
  // Told how far into the archive file the pass has read (may be empty).
  std::function<void(uint64_t)> progress;
  // Once the sink says it has all it needs (a tar's end-of-archive block), up to kTrailing
  // more bytes are decoded (to check the stream a little further), not handed on, and the pass
  // ends: what follows a tar's end is never read, so a stream of zeros after it costs nothing.
  // Set by the sink's owner.
  const bool* sink_done = nullptr;
  // The most the stream may decode to (a zip member's size): beyond it, kBackupDamaged at once,
  // so a "bomb" is not decoded to its end.
  uint64_t max_output = UINT64_MAX;
  // Charged with every byte read and decoded (may be null: no limit).
  IndexBudget* budget = nullptr;

  static constexpr uint64_t kTrailing = 1 << 20;
};

// The decoded bytes so far.
struct DecodeCount {
  uint64_t total = 0;       // All of them.
  uint64_t after_done = 0;  // Those decoded once the sink was done.
};

// Hands the next decoded bytes `data` to the pass's sink (unless it is done) and counts them:
// false once the pass may end (kTrailing bytes past the sink's end); kBackupDamaged past
// max_output or the budget; the sink's error.
StatusOr<bool> Deliver(const DecodePass& pass, std::span<const char> data, DecodeCount* count);

// Reads `[offset, offset + n)` of the pass's file into `buffer`, which it resizes; what the file
// has (short only at its end); kIOError from the file; kBackupDamaged past the budget.
StatusOr<size_t> ReadInput(const DecodePass& pass, uint64_t offset, size_t n, std::string* buffer);

}  // namespace stitchfs::engine
