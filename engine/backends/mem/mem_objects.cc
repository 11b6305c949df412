#include "engine/backends/mem/mem_objects.h"

namespace stitchfs::engine {

StatusOr<std::vector<std::string>> MemObjects::ListKeys(const std::string& prefix) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::string> seen = objects_;
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) {  // Undone, newest first.
    if (it->before) {
      seen[it->key] = *it->before;
    } else {
      seen.erase(it->key);
    }
  }
  std::vector<std::string> keys;
  for (const auto& [key, body] : seen) {
    if (key.compare(0, prefix.size(), prefix) == 0) keys.push_back(key);
  }
  return keys;
}

StatusOr<std::optional<std::string>> MemObjects::Get(const std::string& key,
                                                     uint64_t max_size) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::optional<std::string>();
  if (it->second.size() > max_size) return Status::BackupDamaged("object " + key + " too long");
  return std::optional<std::string>(it->second);
}

StatusOr<bool> MemObjects::CreateIfAbsent(const std::string& key, std::string_view body) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (objects_.count(key) != 0) return false;
  objects_.emplace(key, std::string(body));
  Record(key, std::nullopt);
  return true;
}

Status MemObjects::Delete(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return Status::OK();
  Record(key, std::move(it->second));
  objects_.erase(it);
  return Status::OK();
}

void MemObjects::Record(const std::string& key, std::optional<std::string> before) const {
  if (lag_ == 0) return;
  recent_.push_back({key, std::move(before)});
  while (recent_.size() > lag_) recent_.pop_front();
}

void MemObjects::SetListingLag(size_t changes) {
  std::lock_guard<std::mutex> lock(mu_);
  lag_ = changes;
  while (recent_.size() > lag_) recent_.pop_front();
}

std::map<std::string, std::string> MemObjects::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return objects_;
}

}  // namespace stitchfs::engine
