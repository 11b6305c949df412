// DecodePass: one pass over the compressed bytes of an archive, in order, with its output handed
// on as it comes (to a TarScanner, a checksum, a cache file). Shared by the deflate indexer
// (inflate_points.h) and the whole-stream decoders (stream_decoder.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

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
  // Once the sink says it has all it needs (a tar's end-of-archive block), the rest of the
  // stream is still decoded to check it, but not handed on. Set by the sink's owner.
  const bool* sink_done = nullptr;
};

// Reads `[offset, offset + n)` of the pass's file into `buffer`, which it resizes; what the file
// has (short only at its end); kIOError from the file.
StatusOr<size_t> ReadInput(const DecodePass& pass, uint64_t offset, size_t n, std::string* buffer);

}  // namespace stitchfs::engine
