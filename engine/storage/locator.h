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

// `text` fit to show: S3 credentials replaced by '[HIDDEN]', a URL's query and userinfo
// dropped; engines other than File, Disk and S3 shown as `Engine(...)`.
std::string RedactLocator(std::string_view text);

// The one spelling of a location: an S3 address's Location(), else AbsolutePath.
std::string NormalLocation(const std::string& location);

// Renders `File('<path>')` with quotes and backslashes escaped.
std::string FileLocator(std::string_view path);

// Resolves a locator to a location, in its one spelling (NormalLocation).
// `File('p')`: p if absolute, else relative to `holder_dir` (the folder or S3 prefix that holds
// the backup naming this base). `Disk('n', 'p')`: `disks[n]/p`, where p must stay inside the
// disk. `S3('url')` and `S3('url', 'key', 'secret')`: the S3 address of url (path style or
// virtual-hosted); the credentials are kept in S3Keyring for that bucket, never in the
// location. Errors: kNoBaseBackup (unknown disk), kInsecurePath (a Disk path escaping the
// disk, a relative File leaving the bucket), kNotSupported (other engines),
// kInvalidArgument (malformed). Messages show the locator through RedactLocator.
StatusOr<std::string> ResolveLocator(std::string_view text, const std::string& holder_dir,
                                     const std::map<std::string, std::string>& disks);

}  // namespace stitchfs::engine
