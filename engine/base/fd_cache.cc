#include "engine/base/fd_cache.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>

namespace stitchfs::engine {

FdCache::FdCache(size_t capacity)
    : shards_(std::clamp<size_t>(capacity, 1, kMaxShards)),
      per_shard_(std::max<size_t>(capacity, 1) / shards_.size()) {}

StatusOr<std::shared_ptr<const UniqueFd>> FdCache::Get(uint64_t key, const Opener& open) {
  Shard& s = ShardOf(key);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (auto* fd = s.fds.Get(key)) return *fd;
  }
  ASSIGN_OR_RETURN(UniqueFd fd, open());
  auto shared = std::make_shared<const UniqueFd>(std::move(fd));
  std::lock_guard<std::mutex> lock(s.mu);
  if (auto* fd = s.fds.Get(key)) return *fd;  // Lost a race.
  s.fds.Put(key, shared);
  s.fds.Trim({.max_entries = per_shard_});
  return shared;
}

void FdCache::Forget(uint64_t key) {
  Shard& s = ShardOf(key);
  std::lock_guard<std::mutex> lock(s.mu);
  s.fds.Erase(key);
}

size_t FdCache::open_count() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard<std::mutex> lock(s.mu);
    n += s.fds.size();
  }
  return n;
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
