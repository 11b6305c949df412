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

// Bytes of the regular files beneath `dir`, best effort: what cannot be listed or stat'ed is
// not counted. Symlinks are not followed. A regular file `dir` (an archive): its size.
uint64_t BytesBeneath(const std::string& dir);

}  // namespace stitchfs::engine
