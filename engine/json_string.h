// JSON string literals: the one escaper behind `--json` output and the mount's JSON xattrs.
#pragma once

#include <string>
#include <string_view>

namespace stitchfs::engine {

// Appends `v` to `out` as a quoted JSON string (quotes, backslashes and control characters
// escaped; other bytes as they are).
void AppendJsonString(std::string* out, std::string_view v);

}  // namespace stitchfs::engine
