// Store: a folder of backup folders (one backup per sub-folder, found by its `.backup`), as
// `stitch log` and the store mount see it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/backup.h"

namespace stitchfs::engine {

struct StoreEntry {
  std::string name;  // Folder name inside the store.
  std::string path;
  std::shared_ptr<const Backup> backup;  // Null if it could not be opened.
  Status status;                         // Why not.
  CivilSeconds time = 0;                 // The manifest's timestamp, for ordering.
  int depth = 1;              // Backups in its chain (1 = full), when the bases are in the store.
  uint64_t total_size = 0;    // Sum of the file sizes.
  uint64_t stored_bytes = 0;  // Data files stored in this backup, plus the manifest.
};

// Lists the store's backups, oldest first (by timestamp, then name). Folders without a
// `.backup` (unfinished backups with only a `.lock`, other folders) and folders whose name
// starts with a dot (prune's work folders) are skipped. kIOError if
// `store` cannot be read.
StatusOr<std::vector<StoreEntry>> ListStore(const std::string& store);

// Is `dir` a single backup (holds a `.backup`)?
bool IsBackupFolder(const std::string& dir);

}  // namespace stitchfs::engine
