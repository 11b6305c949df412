// Provenance extended attributes: where each file's bytes come from, its checksum, and for
// the root the backup's identity and system.backups-style figures. FUSE-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stitchfs::fs {
class BackupView;
}

namespace stitchfs::fs {

// Names of the attributes `ino` has.
std::vector<std::string> XattrNames(const BackupView& s, uint64_t ino);
// The value of attribute `name` of `ino`, or nullopt if it has none.
std::optional<std::string> XattrValue(const BackupView& s, uint64_t ino, const std::string& name);

}  // namespace stitchfs::fs
