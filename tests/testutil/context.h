// The context a test gives the engine for backups in this machine's files (and object storage):
// what a front end builds, one RoutingStorage, without the per-user cache.
#pragma once

#include <cstddef>

#include "engine/read/chain_options.h"

namespace stitchfs::testutil {

// ChainOptions (a Context) over a fresh RoutingStorage whose data files go through an FdCache
// of `max_open_files` (0: DefaultFdCapacity()).
engine::ChainOptions LocalChain(size_t max_open_files = 0);

}  // namespace stitchfs::testutil
