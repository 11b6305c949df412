// FaultObjects: an ObjectStore whose calls go through a FaultPlan (kListKeys, kGetObject,
// kCreateIfAbsent, kDeleteObject): failed, stalled, or the process crashed before or after one.
#pragma once

#include <memory>

#include "engine/backends/fault/fault_plan.h"
#include "engine/storage/object_store.h"

namespace stitchfs::engine {

// Thread-safe. Borrows `inner`, which must outlive it.
class FaultObjects final : public ObjectStore {
 public:
  FaultObjects(const ObjectStore& inner, std::shared_ptr<FaultPlan> plan)
      : inner_(inner), plan_(std::move(plan)) {}

  StatusOr<std::vector<std::string>> ListKeys(const std::string& prefix) const override {
    return Guarded(*plan_, Call::kListKeys, [&] { return inner_.ListKeys(prefix); });
  }
  StatusOr<std::optional<std::string>> Get(const std::string& key,
                                           uint64_t max_size) const override {
    return Guarded(*plan_, Call::kGetObject, [&] { return inner_.Get(key, max_size); });
  }
  StatusOr<bool> CreateIfAbsent(const std::string& key, std::string_view body) const override {
    return Guarded(*plan_, Call::kCreateIfAbsent, [&] { return inner_.CreateIfAbsent(key, body); });
  }
  Status Delete(const std::string& key) const override {
    return Guarded(*plan_, Call::kDeleteObject, [&] { return inner_.Delete(key); });
  }

 private:
  const ObjectStore& inner_;
  const std::shared_ptr<FaultPlan> plan_;
};

}  // namespace stitchfs::engine
