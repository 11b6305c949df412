// Random (version 4) UUIDs for new backups.
#pragma once

#include <string>

namespace stitchfs::engine {

// A canonical lowercase v4 UUID from the kernel's random source.
std::string NewUuid();

}  // namespace stitchfs::engine
