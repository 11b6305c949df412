// The backups root and disks of a ClickHouse server, read from its configuration as the server
// reads them, so that base locators (`File('daily/b1')`, `Disk('backups', 'b1')`) mean here
// what they mean to it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/location/locator.h"

namespace stitchfs::engine {

// Reads `file` (the server's config.xml, or any XML configuration), with the files of its
// merge folders (`<stem>.d/` and `conf.d/` beside it: `*.xml` and `*.conf`, sorted by path)
// merged in as ClickHouse merges them (same-named elements with the same attributes matched
// in order; a matched leaf's text replaced; `replace` and `remove` attributes; `from_env`
// read from the environment). From the result:
// - `path`, the server's data folder (default /var/lib/clickhouse/);
// - the backups root: the first `backups.allowed_path`, under `path` when relative;
// - the disks: `storage_configuration.disks.NAME.path` of each local disk (type `local` or no
//   type), and `default` at `path`.
// YAML files in the merge folders are not read: each is named in `*warnings`, as are disks of
// other types. kInvalidArgument naming the file (unreadable, not well-formed XML, a `replace`
// and a `remove` on one element).
StatusOr<LocatorContext> ReadClickHouseConfig(const std::string& file,
                                              std::vector<std::string>* warnings);

// The context the options of a command or a mount give: the configuration `config_file` (if
// not empty), then `backups_root` (if not empty) and each of `disks` over it. Paths are made
// absolute and normal. Errors: those of ReadClickHouseConfig.
StatusOr<LocatorContext> MakeLocatorContext(const std::string& config_file,
                                            const std::string& backups_root,
                                            const std::map<std::string, std::string>& disks,
                                            std::vector<std::string>* warnings);

}  // namespace stitchfs::engine
