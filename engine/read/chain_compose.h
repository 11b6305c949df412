// Opening a backup's chain in time independent of its depth. A backup with a valid resolved
// index (ResolvedIndex: its own `.stitchfs/index`, or one in the per-user cache) opens from it.
// Otherwise the chain is followed down by the bases' headers alone to the first level that
// resolves by itself (one with a valid index, or a full backup), and composed back up: each
// level from the one below's resolved form and its own manifest (each of its files that reads
// from the base takes the extents of the base's file it extends, plus its own tail), each
// manifest read once, two levels in memory at a time. The top's index and those of levels
// spaced 8 apart (an eighth of their depth apart, deeper than 64 levels) are kept in the
// per-user cache, so a later open of any backup of the chain composes at most 8 levels (an
// eighth of its depth, deeper than 64), and the indexes kept add up to a few times the top's. Where
// the way down stops early (a base missing, a loop, too deep), that level is opened recursively,
// which reports the same errors as a walk.
#pragma once

#include <memory>
#include <string>

#include "engine/read/chain_options.h"
#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

inline constexpr size_t kMaxCompose = 200;

// OpenResolved's work (REQUIRES: options.storage set).
StatusOr<std::unique_ptr<ResolvedBackup>> OpenChain(const std::string& dir,
                                                    const ChainOptions& options,
                                                    const ResolveOptions& r);
// The same for a top already opened (OpenBackup).
StatusOr<std::unique_ptr<ResolvedBackup>> OpenChain(std::shared_ptr<const Backup> top,
                                                    const ChainOptions& options,
                                                    const ResolveOptions& r);

// Keeps with the backup at `dir`, just written on `base` (opened with origins), its resolved
// index, through options.storage (REQUIRES: set): the chain is not walked again. Nothing is
// written for a backup that reads nothing from a base, or whose base has no base of its own
// (opening it reads that one base's manifest, about what reading an index would cost). Errors:
// those of Backup::Open and the chain checks for `dir`, and of Storage::WriteIndex.
Status WriteResolvedIndex(const std::string& dir, const ResolvedBackup& base,
                          const ChainOptions& options);

}  // namespace stitchfs::engine
