#include "tests/testutil/context.h"

#include "engine/backends/routing_storage.h"

namespace stitchfs::testutil {

engine::ChainOptions LocalChain(size_t max_open_files) {
  engine::ChainOptions o;
  o.storage = engine::RoutingStorage::Create(max_open_files);
  return o;
}

}  // namespace stitchfs::testutil
