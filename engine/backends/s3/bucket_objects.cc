#include "engine/backends/s3/bucket_objects.h"

namespace stitchfs::engine {

StatusOr<std::vector<std::string>> BucketObjects::ListKeys(const std::string& prefix) const {
  ASSIGN_OR_RETURN(S3Listing listing, bucket_.List(prefix, ""));
  std::vector<std::string> keys;
  keys.reserve(listing.objects.size());
  for (S3Object& o : listing.objects) keys.push_back(std::move(o.key));
  return keys;
}

}  // namespace stitchfs::engine
