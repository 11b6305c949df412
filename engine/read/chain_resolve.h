// Resolving a chain by walking it: from the top backup down to the last base, two levels at a
// time (ChainWalk's checks at each step), every file's extents, origins and prefixes gathered
// on the way. What the composer does for a full backup and for a chain too deep to compose,
// and the only way to the prefixes `stitch diff` needs.
#pragma once

#include <memory>

#include "engine/read/chain_options.h"
#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

// `top` resolved by walking its whole chain, level by level, through options.storage
// (REQUIRES: set). Errors: those of ChainWalk::Next (kNoBaseBackup, kWrongBaseBackup, and
// those of Backup::Open for a base).
StatusOr<std::unique_ptr<ResolvedBackup>> ResolveByWalk(std::shared_ptr<const Backup> top,
                                                        const ChainOptions& options,
                                                        const ResolveOptions& r);

}  // namespace stitchfs::engine
