// Deflate streams (zip's deflate members, gzip files) entered in the middle: one pass decodes a
// stream and records a restart point at a block boundary about every kPointSpacing bytes of
// output, with the 32 KiB of output before it (what the next blocks may refer back to); later,
// any range is decoded from the restart point before it. The technique is zlib's documented
// one (Z_BLOCK, inflatePrime, inflateSetDictionary).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "engine/backends/archive/archive_index.h"
#include "engine/backends/archive/decode_pass.h"

namespace stitchfs::engine {

constexpr uint64_t kPointSpacing = 1 << 20;
// The most one deflate block may decode to. A range is decoded from the restart point before it,
// and points can only be at block boundaries: one block of gigabytes (a hostile archive's; zlib
// writes at most about 8.4 MB, libdeflate about 300 KB) would be decoded whole into memory for
// any read in it. Longer blocks are refused.
constexpr uint64_t kMaxBlockOut = 16 << 20;

// Decodes the deflate data at `[in_offset, in_offset + in_length)` of the pass's file (raw
// deflate, or with `gzip` gzip members one after another, each member's CRC and length checked)
// to the pass's sink, and appends restart points to `index`. Returns the stream (kDeflate, its
// points in `index`). `*crc` receives the CRC-32 of the output. kBackupDamaged naming the pass's
// display if the data is corrupt or ends early, or a block decodes to more than kMaxBlockOut;
// kIOError from reading.
StatusOr<ArchiveStream> IndexDeflate(const DecodePass& pass, uint64_t in_offset, uint64_t in_length,
                                     bool gzip, ArchiveIndex* index, uint32_t* crc);

// Decodes `dst.size()` bytes of `stream` from restart point `point` (whose window is `window`),
// reading `file`: kBackupDamaged naming `display` if the data does not decode to that many bytes.
Status InflateFrom(const RandomAccessFile& file, const ArchiveStream& stream,
                   const RestartPoint& point, std::string_view window, std::span<char> dst,
                   const std::string& display);

}  // namespace stitchfs::engine
