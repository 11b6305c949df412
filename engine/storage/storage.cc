#include "engine/storage/storage.h"

#include "engine/storage/store_moves.h"

namespace stitchfs::engine {

Status BackupDataFile::CheckDeclaredSize(uint64_t declared) const {
  if (size() == declared) return Status::OK();
  return Status::BackupDamaged("data file " + display_name() + " has " + std::to_string(size()) +
                               " bytes, the manifest declares " + std::to_string(declared));
}

StatusOr<std::unique_ptr<StoreMoves>> Storage::MovesFor(const std::string& location) const {
  return Status::NotSupported("the store " + location +
                              " cannot be pruned: its storage is read-only");
}

}  // namespace stitchfs::engine
