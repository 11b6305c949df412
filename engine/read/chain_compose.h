// Opening a backup's chain in time independent of its depth. A backup with a valid resolved
// index (ResolvedIndex: its own `.stitchfs/index`, or one in the per-user cache) opens from it.
// Otherwise its base is opened that way first (recursively, holding the manifests above only
// within a budget of 8 MiB while the base opens), and the backup is composed from the base's
// resolved form and its own manifest: each of its files that reads from the base takes the extents
// of the base's file it extends, plus its own tail. Each level composed so is kept in the per-user
// cache, so the next open of it or of any backup above it is quick. Chains beyond kMaxCompose
// levels without any index are walked level by level (ResolvedBackup::Walk) below that depth.
#pragma once

#include <memory>
#include <string>

#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

inline constexpr size_t kMaxCompose = 200;

// ResolvedBackup::Open's work (REQUIRES: options.storage set).
StatusOr<std::unique_ptr<ResolvedBackup>> OpenChain(const std::string& dir,
                                                    const ChainOptions& options,
                                                    const ResolveOptions& r);

// Keeps with the backup at `dir`, just written on `base` (opened with origins), its resolved
// index, through options.storage (REQUIRES: set): the chain is not walked again. Nothing is
// written for a backup that reads nothing from a base. Errors: those of Backup::Open and the
// chain checks for `dir`, and of Storage::WriteIndex.
Status WriteResolvedIndex(const std::string& dir, const ResolvedBackup& base,
                          const ChainOptions& options);

}  // namespace stitchfs::engine
