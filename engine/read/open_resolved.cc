#include "engine/read/open_resolved.h"

#include "engine/read/chain_compose.h"

namespace stitchfs::engine {

StatusOr<std::shared_ptr<const ResolvedBackup>> OpenResolved(const std::string& dir,
                                                             const ChainOptions& options,
                                                             const ResolveOptions& r) {
  RETURN_IF_ERROR(RequireStorage(options, "Backup " + dir));
  ASSIGN_OR_RETURN(std::unique_ptr<ResolvedBackup> out, OpenChain(dir, options, r));
  return std::shared_ptr<const ResolvedBackup>(std::move(out));
}

StatusOr<std::shared_ptr<const ResolvedBackup>> OpenResolved(std::shared_ptr<const Backup> top,
                                                             const ChainOptions& options,
                                                             const ResolveOptions& r) {
  RETURN_IF_ERROR(RequireStorage(options, "Backup " + top->path()));
  ASSIGN_OR_RETURN(std::unique_ptr<ResolvedBackup> out, OpenChain(std::move(top), options, r));
  return std::shared_ptr<const ResolvedBackup>(std::move(out));
}

}  // namespace stitchfs::engine
