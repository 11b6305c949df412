// Where the per-user caches live: $STITCH_CACHE_DIR, else $XDG_CACHE_HOME/stitchfs, else
// ~/.cache/stitchfs. STITCH_CACHE_DIR=off turns every cache off.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace stitchfs::engine {

// The folder, absolute; empty when caching is off or no home is known.
std::string DefaultCacheDir();

// Keeps the files of `dir` whose names end in one of `extensions` within `max_bytes` together,
// removing the least recently modified first (the newest always stays); removes temporary files
// (".tmp-" in the name) left for more than an hour by a writer that died.
void TrimCacheFolder(const std::string& dir, std::initializer_list<std::string_view> extensions,
                     uint64_t max_bytes);

}  // namespace stitchfs::engine
