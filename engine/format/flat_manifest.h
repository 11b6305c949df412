// The manifest of one point in time as a full backup: what `stitch flatten` writes and what a
// mount offers ClickHouse as a backup's `.backup`, so that ClickHouse restores any backup of a
// chain (or a store's at/<time>) straight through the mount.
#pragma once

#include <string>

#include "engine/format/manifest.h"

namespace stitchfs::engine {

// `h` as the header of a full backup with uuid `uuid`: no base, deduplicating, version 1 (a
// lightweight snapshot's files are plain files once flattened); timestamp, algorithm and the
// rest kept.
ManifestHeader FlatHeader(const ManifestHeader& h, const std::string& uuid);

// The manifest of `m` as one full backup, each file stored under its own name (the tree a
// mount shows): same uuid, sizes, checksums (ClickHouse's where the backup has them),
// metadata, folders and symlinks. Errors: those of RenderManifest.
StatusOr<std::string> RenderFlatManifest(const Manifest& m);

}  // namespace stitchfs::engine
