// FdCache: a bounded set of open file descriptors shared by every reader of a chain, so a
// mount of long chains never holds more than `capacity` data files open at once.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/base/lru.h"
#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {

// Thread-safe. An fd handed out stays open while its holder keeps the shared_ptr, even if the
// cache evicts it meanwhile (so at most `capacity` + reads-in-flight fds are open). Sharded by
// key, so that reads of different data files rarely wait for one another (each shard keeps the
// least recently used of its own).
class FdCache {
 public:
  explicit FdCache(size_t capacity);

  using Opener = std::function<StatusOr<UniqueFd>()>;
  // The fd cached under `key` (a NewFdCacheKey(): keys are never reused, so an owner that is
  // gone can never be confused with a new one), or a new one from `open` (called without the
  // lock held).
  StatusOr<std::shared_ptr<const UniqueFd>> Get(uint64_t key, const Opener& open);
  // Drops `key` (its owner is going away).
  void Forget(uint64_t key);
  size_t open_count() const;

 private:
  struct Shard {
    mutable std::mutex mu;
    Lru<uint64_t, std::shared_ptr<const UniqueFd>> fds;
  };
  static constexpr size_t kMaxShards = 16;
  Shard& ShardOf(uint64_t key) { return shards_[key % shards_.size()]; }

  std::vector<Shard> shards_;  // At most `capacity` of them, each holding capacity / count.
  size_t per_shard_;
};

// A new key for an FdCache entry, never returned before in this process.
uint64_t NewFdCacheKey();

// A capacity for the fd cache from RLIMIT_NOFILE: a quarter of the soft limit, at least 64.
size_t DefaultFdCapacity();

}  // namespace stitchfs::engine
