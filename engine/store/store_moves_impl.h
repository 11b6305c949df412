// The StoreMoves of a store on this machine (store_moves.h chooses; s3_store_moves.cc has
// the object storage's).
#pragma once

#include "engine/store/store_moves.h"

namespace stitchfs::engine {

// `storage` writes the flattened copies (it must reach `store` and the chains' bases).
std::unique_ptr<StoreMoves> LocalMoves(const std::string& store, const Storage& storage);

}  // namespace stitchfs::engine
