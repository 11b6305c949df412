// The metadata side of a restore: modes, owners and times (from stitchfs's manifest
// extension), symlinks, and folder metadata applied once their contents are in place.
#pragma once

#include <string>
#include <vector>

#include "engine/base/posix_meta.h"
#include "engine/base/status.h"
#include "engine/read/restore_target.h"

namespace stitchfs::engine {

// Sets owner (only when running as root), mode and mtime (atime too) of the open `fd`.
Status ApplyMeta(int fd, const PosixMeta& m, const std::string& what);

// Creates symlink `n` beneath `root` (replacing what is there), with its owner and times, where
// `target` allows.
Status RestoreSymlink(int root, const Node& n, RestoreTarget& target);

// Creates folder `n` beneath `root`. Its metadata is applied later by FinishDirs.
Status RestoreDir(int root, const Node& n, RestoreTarget& target);

// Applies the metadata of `dirs` (names sorted), deepest first, after all files are written.
Status FinishDirs(int root, const std::vector<Node>& dirs);

// Splits "a/b/c" into ("a/b", "c").
std::pair<std::string, std::string> SplitParent(const std::string& name);

}  // namespace stitchfs::engine
