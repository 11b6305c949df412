// BucketObjects: an S3Bucket seen as an ObjectStore, for the lock protocol of
// engine/storage/generation_lock.h (a backup's `.lock`, prune's `.stitch-prune.lock`).
#pragma once

#include "engine/backends/s3/s3_bucket.h"
#include "engine/storage/object_store.h"

namespace stitchfs::engine {

// Thread-safe. Borrows `bucket`, which must outlive it.
class BucketObjects final : public ObjectStore {
 public:
  explicit BucketObjects(const S3Bucket& bucket) : bucket_(bucket) {}

  StatusOr<std::vector<std::string>> ListKeys(const std::string& prefix) const override;
  StatusOr<std::optional<std::string>> Get(const std::string& key,
                                           uint64_t max_size) const override {
    return bucket_.GetAll(key, max_size);
  }
  // A PUT with `If-None-Match: *`.
  StatusOr<bool> CreateIfAbsent(const std::string& key, std::string_view body) const override {
    return bucket_.PutIf(key, body, "");
  }
  Status Delete(const std::string& key) const override { return bucket_.Delete(key); }

 private:
  const S3Bucket& bucket_;
};

}  // namespace stitchfs::engine
