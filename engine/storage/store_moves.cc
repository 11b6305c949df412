#include "engine/storage/store_moves.h"

namespace stitchfs::engine {

// (Defined here, where StoreMoves is complete, so that storage.h needs only its name.)
StatusOr<std::unique_ptr<StoreMoves>> Storage::MovesFor(const std::string& location) const {
  return Status::NotSupported("the store " + location +
                              " cannot be pruned: its storage is read-only");
}

}  // namespace stitchfs::engine
