// ObjectStore: the object operations a lock built on conditional creation needs (listing by
// prefix, reading, creating only if absent, deleting), so that the lock's protocol
// (generation_lock.h) is written once, for any store that honours a conditional create: S3
// (BucketObjects, engine/backends/s3/), and MemObjects and FaultObjects for its tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

// Thread-safe.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  // The keys of the objects whose key starts with `prefix`. An object store may list a little
  // behind its writes (a key just created missing, one just deleted still there); the reads and
  // creates below are of the object itself.
  virtual StatusOr<std::vector<std::string>> ListKeys(const std::string& prefix) const = 0;
  // The whole object `key`, or nullopt if there is none; kBackupDamaged if it is longer than
  // `max_size`.
  virtual StatusOr<std::optional<std::string>> Get(const std::string& key,
                                                   uint64_t max_size) const = 0;
  // Creates object `key` holding `body` only if there is no object `key`: true if this call
  // made it, false if one was there. (An error may mean it was made all the same.)
  virtual StatusOr<bool> CreateIfAbsent(const std::string& key, std::string_view body) const = 0;
  // Deletes object `key`; OK if there was none.
  virtual Status Delete(const std::string& key) const = 0;
};

}  // namespace stitchfs::engine
