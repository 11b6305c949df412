// The writer's last step before the manifest: turns per-file read results into manifest
// entries, applying rename detection against the base and dedup inside the backup, and moves
// each stored data file to its final name.
#pragma once

#include <vector>

#include "engine/file_pass.h"
#include "engine/manifest.h"
#include "engine/snapshot_writer.h"
#include "engine/source_tree.h"

namespace stitchfs::engine {

struct FileResult {
  Status status;
  FilePassResult pass;
  uint64_t size = 0;
  PosixMeta meta;
  bool unread = false;  // Taken from the base by the files cache.
};

struct PlanInput {
  const SourceTree& tree;
  std::vector<FileResult>& results;  // Parallel to tree.files.
  const Manifest* base;              // The base's manifest, or nullptr.
  int dest_fd;
  int tmp_fd;  // Holds data file `i` for file i when results[i] stored.
  const char* tmp_name;
};

// Entries in name order. Every entry of one (size, checksum) key gets the first one's base
// coverage and data file (never ClickHouse bug #112403). Unreadable files are left out and
// added to summary->errors; an immutable file that grew fails the whole backup
// (kExpectedEndOfFile). The returned entries point into `in.tree`.
StatusOr<std::vector<FileEntry>> FinishEntries(const PlanInput& in, BackupSummary* summary);

}  // namespace stitchfs::engine
