// Provenance extended attributes: where each file's bytes come from, its checksum, and for
// the root the backup's identity and system.backups-style figures. FUSE-free.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fs/mount_state.h"

namespace stitchfs::fs {

// Names of the attributes `ino` has.
std::vector<std::string> XattrNames(const MountState& s, uint64_t ino);
// The value of attribute `name` of `ino`, or nullopt if it has none.
std::optional<std::string> XattrValue(const MountState& s, uint64_t ino, const std::string& name);

}  // namespace stitchfs::fs
