// Whole-stream decoders for the tar compressions that cannot be entered in the middle with
// their libraries: xz, lzma and zstd (as ClickHouse writes them through libarchive: one xz
// block, one zstd frame; the decoder's state is internal to the library and cannot be saved)
// and bzip2 (independent blocks, but at bit offsets libbz2 cannot start at). A tar compressed
// with them is decoded once, in full, into the per-user cache.
#pragma once

#include "engine/backends/archive/decode_pass.h"
#include "engine/location/archive_kind.h"

namespace stitchfs::engine {

// Decodes all of the pass's file as `codec` (concatenated streams or frames included, as the
// tools make them) to the pass's sink; the total decoded length. kBackupDamaged naming the pass's
// display if the data is corrupt, fails its checks or ends early; kIOError from reading.
StatusOr<uint64_t> DecodeWhole(StreamCodec codec, const DecodePass& pass);

}  // namespace stitchfs::engine
