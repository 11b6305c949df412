// Random (version 4) UUIDs for new backups.
#pragma once

#include <string>

namespace stitchfs::engine {

// A canonical lowercase v4 UUID from the kernel's random source.
std::string NewUuid();

// The current local time as ClickHouse writes it: "YYYY-MM-DD hh:mm:ss".
std::string LocalTimestamp();

}  // namespace stitchfs::engine
