#include "engine/storage/storage.h"

namespace stitchfs::engine {

Status BackupDataFile::CheckDeclaredSize(uint64_t declared) const {
  if (size() == declared) return Status::OK();
  return Status::BackupDamaged("data file " + display_name() + " has " + std::to_string(size()) +
                               " bytes, the manifest declares " + std::to_string(declared));
}

}  // namespace stitchfs::engine
