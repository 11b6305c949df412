// Listing folders without exceptions. std::filesystem's directory iterators throw when a step
// of the listing fails (an EIO halfway through), which in the engine would end the process; these
// report failures as a Status or skip what cannot be read, as each caller needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

// The names in folder `dir` (no "." or ".."), unsorted. kIOError naming `dir` if it cannot be
// listed to the end.
StatusOr<std::vector<std::string>> ListFolder(const std::string& dir);

// The bytes removing all of `paths` (folders, or files such as archives) frees, as `du`
// counts them: the blocks allocated to every file, folder and symlink beneath (symlinks not
// followed), a file with several links counted once and only if all its links are beneath
// `paths` (else removing them frees nothing of it). Attributed to the path it is first met
// under, in order (the sum is the total). Best effort: what cannot be listed or stat'ed is
// not counted.
std::vector<uint64_t> DiskUsage(const std::vector<std::string>& paths);

}  // namespace stitchfs::engine
