// Helpers for tests of whole trees: a canonical description of a folder (types, bytes,
// metadata, hard-link groups) so a restored tree can be compared with its source.
#pragma once

#include <string>

namespace stitchfs::testutil {

// One line per entry, sorted: "path type mode mtime_ns uid gid link-group content-or-target".
// `with_times` includes mtimes (not for folders when `dir_times` is false).
std::string DescribeTree(const std::string& root, bool with_times = true);

}  // namespace stitchfs::testutil
