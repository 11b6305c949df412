// Chain walking: from a backup to its base, with every check ClickHouse makes (a base named,
// reachable, with the expected uuid, holding every prefix the child reads from it) plus a
// guard against cycles and overlong chains. What ResolvedBackup walks, two levels at a time.
#pragma once

#include <functional>
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

// The base named by the header `child` of the backup at `child_path` (at depth `level`; the
// options' --base applies to level 0), among FindBaseCandidates in order: the first location
// `uuid_at` opens with the uuid the child records. When none does: the primary candidate if
// it opened (its other uuid is CheckBase's to refuse), else kNoBaseBackup prefixed with
// `prefix`, saying where it looked. `uuid_at` returns the uuid of the backup at a location, or
// why it cannot be opened. Errors: those of FindBaseCandidates, kNoBaseBackup, and any error of
// `uuid_at` other than kBackupNotFound.
StatusOr<std::string> FindBase(
    const std::string& child_path, const ManifestHeader& child, size_t level,
    const ChainOptions& options, const std::string& prefix,
    const std::function<StatusOr<std::string>(const std::string&)>& uuid_at);

// ClickHouse's name for a content: <checksum hex><size>.
std::string ContentId(const Checksum& c, uint64_t size);

}  // namespace stitchfs::engine
