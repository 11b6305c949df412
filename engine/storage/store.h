// Store: a folder of backup folders (one backup per sub-folder, found by its `.backup`), as
// `stitch log`, `stitch prune` and the store mount see it: one scan with one rule for all.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/location/locator.h"
#include "engine/storage/backup.h"
#include "engine/storage/context.h"

namespace stitchfs::engine {

struct StoreEntry {
  std::string name;  // Folder name inside the store.
  std::string path;  // Absolute.
  FolderIdentity folder;
  std::shared_ptr<const Backup> backup;  // Null if it could not be opened.
  Status status;                         // Why not.
  CivilSeconds time = 0;                 // The manifest's timestamp, for ordering.
  int depth = 1;              // Backups in its chain (1 = full), when the bases are in the store.
  uint64_t total_size = 0;    // Sum of the file sizes.
  uint64_t stored_bytes = 0;  // Data files stored in this backup, plus the manifest.
};

// Lists the backups of the store at `store` in ctx.storage (Storage::ScanStore; kInvalidArgument
// without one), opened through it (and ctx.cache, if any), oldest first (by timestamp, then
// name). An archive that turns out to hold no `.backup` is left out, as a folder without one
// is. Depths follow base locators as ctx.locators gives them their meaning.
StatusOr<std::vector<StoreEntry>> ListStore(const Context& ctx, const std::string& store);

}  // namespace stitchfs::engine
