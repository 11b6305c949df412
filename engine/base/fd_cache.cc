#include "engine/base/fd_cache.h"

#include <sys/resource.h>

namespace stitchfs::engine {

StatusOr<std::shared_ptr<const UniqueFd>> FdCache::Get(uint64_t key, const Opener& open) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  ASSIGN_OR_RETURN(UniqueFd fd, open());
  auto shared = std::make_shared<const UniqueFd>(std::move(fd));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) return it->second->second;  // Lost a race.
  lru_.emplace_front(key, shared);
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return shared;
}

void FdCache::Forget(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.erase(it->second);
    index_.erase(it);
  }
}

size_t FdCache::open_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

size_t DefaultFdCapacity() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1024;
  size_t quarter = static_cast<size_t>(rl.rlim_cur / 4);
  return quarter < 64 ? 64 : quarter;
}

}  // namespace stitchfs::engine
