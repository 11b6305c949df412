// Where the per-user caches live: $STITCH_CACHE_DIR, else $XDG_CACHE_HOME/stitchfs, else
// ~/.cache/stitchfs. STITCH_CACHE_DIR=off turns every cache off. Every cache file is 0600 in a
// folder that is 0700 and this user's (a cache holds what backups hold, and a file another
// user could plant would be read as ours).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "engine/base/status.h"

namespace stitchfs::engine {

// The folder, absolute; empty when caching is off, no home is known, or the folder failed
// CheckDefaultCacheDir.
std::string DefaultCacheDir();

// True if the file `name`, last modified at `mtime_sec` (seconds since the epoch), is a
// temporary file its writer left behind for good: one of a writer that died (OwnerOfTemp says
// kDead), or one whose writer cannot be judged and that nothing touched for kUnjudgedTempSec.
// Never true for a temporary file a live process of this boot and pid namespace writes.
bool IsLeftoverTemp(std::string_view name, int64_t mtime_sec);
constexpr int64_t kUnjudgedTempSec = 24 * 3600;

// Checks the per-user cache folder, once per process: if it exists, it and the folders the
// caches make in it (archives/, s3-blocks/, s3-blocks/XX/) are made private as PrivateFolder
// does (none is created here). A folder that cannot be turns every cache off. Returns what the
// user should be told ("" if nothing): the front ends print it as a warning before anything
// opens a cache.
const std::string& CheckDefaultCacheDir();

// Makes `dir` a private folder for cache files: created 0700 if missing (missing parents too,
// 0700, as the XDG base directory specification asks); an existing one must be a folder owned
// by this user, and is made 0700 if its group or others may use it. kIOError (EACCES, ENOTDIR,
// or mkdir's and chmod's errno) naming the folder and what to do otherwise.
Status PrivateFolder(const std::string& dir);

// Keeps the files of `dir` whose names end in one of `extensions`, together with the temporary
// files there (".tmp" in the name) that are still being written, within `max_bytes`: leftover
// temporary files (IsLeftoverTemp) are removed first, then the least recently modified cache
// files (the newest always stays; a temporary file is never removed to make room, only
// counted). Best effort: what cannot be listed or removed is left as it is.
void TrimCacheFolder(const std::string& dir, std::initializer_list<std::string_view> extensions,
                     uint64_t max_bytes);

// True if a cache in `dir` should trim itself as a process starts (what killed processes left
// goes then, not at the next store): when the stamp file `dir/.trimmed` is missing or was last
// touched kStartTrimEverySec ago or more; it is then touched (made 0600 if missing). A trim lists
// and stats every file of the folder, so a process starting often (a mount, `stitch ls`) pays
// for it at most that often. Two processes may both be told true: trimming twice is harmless.
bool StartTrimDue(const std::string& dir);
constexpr int64_t kStartTrimEverySec = 3600;

}  // namespace stitchfs::engine
