#include "engine/base/fd_cache.h"

#include <sys/resource.h>

#include <atomic>

namespace stitchfs::engine {

StatusOr<std::shared_ptr<const UniqueFd>> FdCache::Get(uint64_t key, const Opener& open) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto* fd = fds_.Get(key)) return *fd;
  }
  ASSIGN_OR_RETURN(UniqueFd fd, open());
  auto shared = std::make_shared<const UniqueFd>(std::move(fd));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto* fd = fds_.Get(key)) return *fd;  // Lost a race.
  fds_.Put(key, shared);
  fds_.Trim({.max_entries = capacity_});
  return shared;
}

void FdCache::Forget(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  fds_.Erase(key);
}

size_t FdCache::open_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fds_.size();
}

uint64_t NewFdCacheKey() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

size_t DefaultFdCapacity() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1024;
  size_t quarter = static_cast<size_t>(rl.rlim_cur / 4);
  return quarter < 64 ? 64 : quarter;
}

}  // namespace stitchfs::engine
