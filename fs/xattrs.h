// Provenance extended attributes: where each file's bytes come from, its checksum, and for
// the root the backup's identity and system.backups-style figures. FUSE-free.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/read/backup_stats.h"
#include "engine/read/resolved_backup.h"
#include "fs/inode_table.h"

namespace stitchfs::fs {

// What a backup's attributes are read from (a BackupView lends its own).
struct XattrSource {
  const engine::ResolvedBackup& backup;
  const InodeTable& table;
  std::function<const engine::BackupStats&()> stats;  // system.backups-style figures.
};

// True for the names stitchfs gives attributes ("user.stitchfs."...): any other attribute is
// absent, whatever the backup holds.
bool IsStitchfsXattr(std::string_view name);
// Names of the attributes inode `ino` of `s` has (REQUIRES: not an inode of .appended).
std::vector<std::string> XattrNames(const XattrSource& s, uint64_t ino);
// The value of attribute `name` of `ino`; kEntryNotFound if it has none.
engine::StatusOr<std::string> XattrValue(const XattrSource& s, uint64_t ino,
                                         const std::string& name);

}  // namespace stitchfs::fs
