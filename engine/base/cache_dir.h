// Where the per-user caches live: $STITCH_CACHE_DIR, else $XDG_CACHE_HOME/stitchfs, else
// ~/.cache/stitchfs. STITCH_CACHE_DIR=off turns every cache off.
#pragma once

#include <string>

namespace stitchfs::engine {

// The folder, absolute; empty when caching is off or no home is known.
std::string DefaultCacheDir();

}  // namespace stitchfs::engine
