#include "engine/read/resolved_tables.h"

namespace stitchfs::engine {

void ResolvedTables::Adopt(Built t) {
  t.names.shrink_to_fit();
  t.files.shrink_to_fit();
  t.extents.shrink_to_fit();
  SetOrigins(std::move(t.origins));  // Kept apart, so that replacing them frees them.
  auto kept = std::make_shared<const Built>(std::move(t));
  extents = kept->extents;
  first_extent = kept->first_extent;
  files = kept->files;
  names = kept->names;
  backing = std::move(kept);
}

void ResolvedTables::SetOrigins(std::vector<Origin> o) {
  auto kept = std::make_shared<const std::vector<Origin>>(std::move(o));
  origins = *kept;
  origins_backing = std::move(kept);
}

}  // namespace stitchfs::engine
