#include "engine/location/location.h"

#include "engine/location/s3_address.h"

namespace stitchfs::engine {

Location LocationOf(std::string_view text) {
  Location l;
  l.backend = IsS3Location(text) ? Backend::kS3 : Backend::kLocal;
  l.archive = ArchiveKindOf(text);
  return l;
}

}  // namespace stitchfs::engine
