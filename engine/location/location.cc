#include "engine/location/location.h"

#include "engine/location/s3_address.h"

namespace stitchfs::engine {

Location LocationOf(std::string_view text) {
  Location l;
  l.backend = IsS3Location(text) ? Backend::kS3 : Backend::kLocal;
  l.archive = ArchiveKindOf(text);
  return l;
}

std::string Location::Describe() const {
  const std::string where = in_object_storage() ? "object storage" : "a local folder";
  if (!is_archive()) return where;
  return std::string("a ") + ArchiveKindName(archive) + " archive " +
         (in_object_storage() ? "in object storage" : "on this machine");
}

}  // namespace stitchfs::engine
