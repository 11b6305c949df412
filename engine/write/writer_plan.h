// The writer's last step before the manifest: turns per-file read results into manifest
// entries, applying rename detection against the base and dedup inside the backup, and moves
// each stored data file to its final name.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "engine/format/manifest.h"
#include "engine/storage/storage.h"
#include "engine/write/backup_summary.h"
#include "engine/write/source_read.h"
#include "engine/write/source_tree.h"

namespace stitchfs::engine {

struct PlanInput {
  const SourceTree& tree;
  std::vector<FileResult>& results;     // Parallel to tree.files.
  const Manifest* base;                 // The base's manifest, or nullptr.
  BackupWriter& writer;                 // Holds staged data file `i` for file i when it stored.
  std::deque<std::string>& data_names;  // Owns data file names that differ from the file's.
};

// Names that the source gave one (dev, ino) with a link count above 1 are hard links only if
// every name was read with the same content and attributes; otherwise (the file changed
// between the reads of its names) each name is recorded as a file of its own (link count 1),
// with a warning.
void SplitChangedLinks(const SourceTree& tree, std::vector<FileResult>& results,
                       std::vector<std::string>* warnings);

// Entries in name order. Every entry of one (size, checksum) key gets the first one's base
// coverage and data file (never ClickHouse bug #112403). Source files that could not be read
// are left out and listed in summary->missing; an immutable file that grew fails the whole
// backup (kExpectedEndOfFile), and so does any failure to write the destination. Data files
// are named by DataFileNameFor. The returned entries point into `in.tree` and `in.data_names`.
StatusOr<std::vector<FileEntry>> FinishEntries(const PlanInput& in, BackupSummary* summary);

}  // namespace stitchfs::engine
