// BackupSummary: what a backup the writer made holds, and how much of it was stored, taken
// from the base or deduplicated (WriteBackup's result, `stitch backup --json`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/checksum.h"
#include "engine/format/manifest.h"

namespace stitchfs::engine {

struct BackupSummary {
  std::string uuid;
  ChecksumAlgorithm algorithm = ChecksumAlgorithm::kXxh3;  // The one the backup uses.
  uint64_t files = 0;                                      // Regular files in the backup.
  uint64_t nodes = 0;                                      // Directories and symlinks.
  uint64_t total_size = 0;                                 // Their bytes.
  uint64_t bytes_read = 0;
  uint64_t bytes_stored = 0;            // Written into data files.
  uint64_t bytes_from_base_whole = 0;   // Whole files taken from the base (same or renamed).
  uint64_t bytes_from_base_prefix = 0;  // Prefixes taken from the base.
  uint64_t bytes_deduplicated = 0;      // Not stored because another entry holds the content.
  uint64_t files_unread = 0;            // Trusted by the files cache.
  uint64_t data_files = 0;
  std::vector<std::string> warnings;  // Skipped special files, hard links that changed.
  std::vector<MissingFile> missing;   // Source files that could not be read (left out).
};

}  // namespace stitchfs::engine
