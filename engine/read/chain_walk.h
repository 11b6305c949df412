// Chain walking: from a backup to its base, with every check ClickHouse makes (a base named,
// reachable, with the expected uuid, holding every prefix the child reads from it) plus a
// guard against cycles and overlong chains. What ResolvedBackup walks, two levels at a time.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "engine/read/chain_options.h"
#include "engine/storage/backup.h"

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

// The base of `child`, which is at depth `level` (0 = the top backup), opened (through the
// options' BackupCache, if any); nullptr when no entry of `child` reads from a base. Errors:
// kNoBaseBackup (none named, or it cannot be opened), kWrongBaseBackup (the chain would be
// longer than options.max_depth), those of Backup::Open.
StatusOr<std::shared_ptr<const Backup>> OpenBaseOf(const Backup& child, size_t level,
                                                   const ChainOptions& options);
// `base` is the base `child` names: the uuid it records, and every entry of `child` that uses
// the base finds its prefix there. kWrongBaseBackup otherwise.
Status CheckBase(const Backup& child, const Backup& base);
// The error for a chain that comes back to a backup it went through.
Status LoopError(const Backup& child, const std::string& base_path, const std::string& uuid);

// Opens `dir` through `options.storage` (REQUIRES: set), and `options.backups` if set.
StatusOr<std::shared_ptr<const Backup>> OpenBackup(const std::string& dir,
                                                   const ChainOptions& options);

// Where the base of the backup at `child_path` whose header names `locator` is: `override`
// if not empty (--base), else the locator resolved against the folder holding the child.
// Errors: those of ResolveLocator.
StatusOr<std::string> BaseDirOf(const std::string& child_path, std::string_view locator,
                                const std::string& override,
                                const std::map<std::string, std::string>& disks);

// ClickHouse's name for a content: <checksum hex><size>.
std::string ContentId(const Checksum& c, uint64_t size);

}  // namespace stitchfs::engine
