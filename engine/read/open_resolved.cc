#include "engine/read/open_resolved.h"

#include "engine/read/chain_compose.h"
#include "engine/storage/routing_storage.h"

namespace stitchfs::engine {

StatusOr<std::shared_ptr<const ResolvedBackup>> OpenResolved(const std::string& dir,
                                                             const ChainOptions& options,
                                                             const ResolveOptions& r) {
  ChainOptions local = options;
  if (!local.storage) {
    local.storage = RoutingStorage::Create(options.max_open_files);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ResolvedBackup> out, OpenChain(dir, local, r));
  return std::shared_ptr<const ResolvedBackup>(std::move(out));
}

}  // namespace stitchfs::engine
