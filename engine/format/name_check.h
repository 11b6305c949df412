// CheckNames: a manifest names every path once, and only folders have paths under them. The
// rule every reader applies (the XML reader, the manifest cache's checks), so that no reader has
// to choose between two things of one name (a mount used to show the folder and warn).
#pragma once

#include "engine/base/status.h"
#include "engine/format/manifest.h"

namespace stitchfs::engine {

// kBackupDamaged naming both entries (files, or stitchfs's <stitchfs_dir> and
// <stitchfs_symlink> nodes) if two of them have one name, or if one is under a path that is a
// file or a symlink (file "a" and file "a/b"); OK otherwise. ClickHouse refuses to write either,
// so no backup it made has them. O(n) over by_name() and the nodes (sorted again only if they
// are not in name order, as every writer leaves them). The caller adds the backup.
Status CheckNames(const Manifest& m);

}  // namespace stitchfs::engine
