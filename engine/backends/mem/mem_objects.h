// MemObjects: an ObjectStore in memory, for tests of what is built on one (the generation lock).
// Reads, creates and deletes are of the objects as they are; a listing may be made to lag
// behind the writes as S3's once did (SetListingLag), so that a protocol is tested against
// every reordering S3 allows it.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "engine/storage/object_store.h"

namespace stitchfs::engine {

// Thread-safe.
class MemObjects final : public ObjectStore {
 public:
  StatusOr<std::vector<std::string>> ListKeys(const std::string& prefix) const override;
  StatusOr<std::optional<std::string>> Get(const std::string& key,
                                           uint64_t max_size) const override;
  StatusOr<bool> CreateIfAbsent(const std::string& key, std::string_view body) const override;
  Status Delete(const std::string& key) const override;

  // Listings leave out the last `changes` creates and deletes (a deleted key still listed, a
  // created one not yet).
  void SetListingLag(size_t changes);
  // Every object, by key.
  std::map<std::string, std::string> Snapshot() const;

 private:
  struct Change {
    std::string key;
    std::optional<std::string> before;  // What the key held before the change.
  };
  void Record(const std::string& key, std::optional<std::string> before) const;  // REQUIRES mu_.

  mutable std::mutex mu_;
  mutable std::map<std::string, std::string> objects_;
  mutable std::deque<Change> recent_;  // The last changes, newest last (up to lag_).
  size_t lag_ = 0;
};

}  // namespace stitchfs::engine
