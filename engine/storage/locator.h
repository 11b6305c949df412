// Base-backup locators: the `<base_backup>` text (ClickHouse's `File('...')`,
// `Disk('name', 'path')`, ...) parsed and resolved to a folder on this machine.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct Locator {
  std::string engine;             // "File", "Disk", "S3", ...
  std::vector<std::string> args;  // Unquoted argument values.
};

// Parses `Engine('a', 'b')`: an identifier, then SQL literals (single-quoted strings with
// backslash escapes, or bare words) separated by commas. kInvalidArgument if malformed.
StatusOr<Locator> ParseLocator(std::string_view text);

// Renders `File('<path>')` with quotes and backslashes escaped.
std::string FileLocator(std::string_view path);

// Resolves a locator to a folder, returned absolute and lexically normal (AbsolutePath).
// `File('p')`: p if absolute, else relative to `holder_dir`
// (the folder that holds the backup naming this base). `Disk('n', 'p')`: `disks[n]/p`, where p
// must stay inside the disk. Errors: kNoBaseBackup (unknown disk), kInsecurePath (a Disk path
// escaping the disk), kNotSupported (other engines, archives), kInvalidArgument (malformed).
StatusOr<std::string> ResolveLocator(std::string_view text, const std::string& holder_dir,
                                     const std::map<std::string, std::string>& disks);

}  // namespace stitchfs::engine
