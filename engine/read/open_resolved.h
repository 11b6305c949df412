// OpenResolved: a backup opened with its chain as a ResolvedBackup, the read model every reader
// uses. The one way in: the model itself knows nothing of how it is built (chain_compose,
// chain_resolve, resolved_index).
#pragma once

#include <memory>
#include <string>

#include "engine/read/chain_options.h"
#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

// Opens `dir` and its chain through options.storage: from the backup's resolved index when it
// has a valid one (its own, or one in the per-user cache), reading a bounded amount whatever
// the depth; else from the base's resolved form and its own manifest (the base opened the same
// way, and an index of each level so resolved kept in the per-user cache); holds a bounded
// number of manifests at a time (besides those the cache keeps). Errors: kInvalidArgument without
// options.storage; those of Backup::Open (prefixed with the child for a base), kNoBaseBackup (an
// entry needs a base, none named or reachable), kWrongBaseBackup (uuid mismatch, an entry missing
// from its base, a cycle, too deep).
StatusOr<std::shared_ptr<const ResolvedBackup>> OpenResolved(const std::string& dir,
                                                             const ChainOptions& options,
                                                             const ResolveOptions& r = {});
// The same for a backup already opened with OpenBackup (chain_walk.h) through the same
// options: lets a caller start work on the top's manifest (a mount's inode table) on another
// core while the chain resolves. The result's top() is `top`.
StatusOr<std::shared_ptr<const ResolvedBackup>> OpenResolved(std::shared_ptr<const Backup> top,
                                                             const ChainOptions& options,
                                                             const ResolveOptions& r = {});

}  // namespace stitchfs::engine
