// Chain walking: from a backup to its base, with every check ClickHouse makes (a base named,
// reachable, with the expected uuid, holding every prefix the child reads from it) plus a
// guard against cycles and overlong chains. What ResolvedBackup walks, two levels at a time.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "engine/backup.h"
#include "engine/chain_options.h"

namespace stitchfs::engine {

// Remembers the uuids seen so far along one chain. Not thread-safe.
class ChainWalk {
 public:
  ChainWalk(const ChainOptions& options, const Backup& top);

  // The base of `child`, which is at depth `level` (0 = the top backup), opened (through the
  // options' BackupCache, if any) and checked: uuid, cycle, depth, and every entry of `child`
  // that uses the base finds its prefix there. nullptr when `child` reads nothing from a base.
  // Errors: kNoBaseBackup, kWrongBaseBackup, and those of Backup::Open.
  StatusOr<std::shared_ptr<const Backup>> Next(const Backup& child, size_t level);

 private:
  const ChainOptions& options_;
  std::set<std::string> seen_uuids_;
};

// Opens `dir` through `options.storage` (REQUIRES: set), and `options.backups` if set.
StatusOr<std::shared_ptr<const Backup>> OpenBackup(const std::string& dir,
                                                   const ChainOptions& options);

// ClickHouse's name for a content: <checksum hex><size>.
std::string ContentId(const Checksum& c, uint64_t size);

}  // namespace stitchfs::engine
