// BackupDiff: what changed between two backups, from their manifests and checksums alone
// (no data is read): added, removed, grown by appending, rewritten, renamed, metadata only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

enum class ChangeKind { kAdded, kRemoved, kAppended, kRewritten, kRenamed, kMetadata };

// "added", "removed", "appended", "rewritten", "renamed", "metadata".
const char* ChangeKindName(ChangeKind k);

struct Change {
  ChangeKind kind;
  std::string name;      // In the new backup (in the old one for kRemoved).
  std::string old_name;  // kRenamed only.
  uint64_t old_size = 0;
  uint64_t new_size = 0;
  uint64_t appended = 0;  // kAppended: bytes added at the end.
};

// Changes of the regular files under `prefix` (empty: all) from `old_chain`'s top backup to
// `new_chain`'s, sorted by name. A file counts as appended when the new file's chain records
// the old file's (size, checksum) as one of its prefixes (REQUIRES: `new_chain` opened with
// ResolveOptions::prefixes). kInvalidArgument if the two backups use different checksum
// algorithms.
StatusOr<std::vector<Change>> DiffBackups(const ResolvedBackup& old_chain,
                                          const ResolvedBackup& new_chain, std::string_view prefix);

}  // namespace stitchfs::engine
