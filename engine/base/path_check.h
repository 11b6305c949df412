// Lexical checks of the relative paths a manifest names (`name`, `data_file`).
#pragma once

#include <string_view>

#include "engine/base/status.h"

namespace stitchfs::engine {

// OK if `path` is a normalized relative path that stays inside the backup: not empty, not ".",
// no leading "/", no empty, "." or ".." component, no trailing "/", no NUL byte.
// Empty or "." is kBackupDamaged; anything else unsafe is kInsecurePath (ClickHouse's rules).
// The message says what is wrong but not which backup; callers prefix it.
Status CheckRelativePath(std::string_view path);

// The absolute, lexically normal form of `path` (no "." or ".." components, no trailing
// slash), against the current folder when relative. Symlinks are not resolved.
std::string AbsolutePath(const std::string& path);

}  // namespace stitchfs::engine
