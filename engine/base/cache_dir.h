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

// True if the file `name`, last modified at `mtime_sec` (seconds since the epoch), is a
// temporary file its writer left behind for good: one of a writer that died (OwnerOfTemp says
// kDead), or one whose writer cannot be judged and that nothing touched for kUnjudgedTempSec.
// Never true for a temporary file a live process of this boot and pid namespace writes.
bool IsLeftoverTemp(std::string_view name, int64_t mtime_sec);
constexpr int64_t kUnjudgedTempSec = 24 * 3600;

// Keeps the files of `dir` whose names end in one of `extensions`, together with the temporary
// files there (".tmp" in the name) that are still being written, within `max_bytes`: leftover
// temporary files (IsLeftoverTemp) are removed first, then the least recently modified cache
// files (the newest always stays; a temporary file is never removed to make room, only
// counted). Best effort: what cannot be listed or removed is left as it is.
void TrimCacheFolder(const std::string& dir, std::initializer_list<std::string_view> extensions,
                     uint64_t max_bytes);

}  // namespace stitchfs::engine
