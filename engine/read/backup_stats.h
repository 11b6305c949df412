// BackupStats: the figures ClickHouse shows in system.backups for a backup, plus how many of
// the backup's logical bytes each backup of its chain provides.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/storage/backup.h"

namespace stitchfs::engine {

struct BackupStats {
  uint64_t num_files = 0;                // <file> entries (every logical file).
  uint64_t total_size = 0;               // Sum of their sizes.
  uint64_t num_entries = 0;              // Data files physically stored in this backup.
  uint64_t size_of_entries = 0;          // Bytes in those data files.
  uint64_t uncompressed_size = 0;        // size_of_entries + the manifest's length.
  std::vector<uint64_t> bytes_by_level;  // [level] = bytes of the top's files read from it.
  // An ON CLUSTER backup's hosts: distinct "shards/N/" and "shards/N/replicas/M/" prefixes.
  uint64_t shards = 0, replicas = 0;
  uint64_t object_files = 0;  // A lightweight snapshot's files in the source's object storage.
};

// The figures that need only `top`'s manifest; bytes_by_level is zeroed for `depth` levels.
BackupStats ManifestStats(const Backup& top, size_t depth);

}  // namespace stitchfs::engine
