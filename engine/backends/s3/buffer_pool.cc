#include "engine/backends/s3/buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace stitchfs::engine {

namespace {

char* Allocate(size_t capacity) {
  void* p = std::aligned_alloc(BufferPool::kUnit, capacity);
  if (p == nullptr) throw std::bad_alloc();
  ::madvise(p, capacity, MADV_HUGEPAGE);  // Advice only: without huge pages it is slower.
  return static_cast<char*>(p);
}

}  // namespace

BufferPool::~BufferPool() {
  for (const Buffer& b : free_) std::free(b.data);
}

BufferPool& BufferPool::Shared() {
  static BufferPool* pool = new BufferPool(size_t{64} << 20);
  return *pool;
}

BufferPool::Buffer BufferPool::Take(size_t n) {
  const size_t want = (std::max<size_t>(n, 1) + kUnit - 1) / kUnit * kUnit;
  std::lock_guard<std::mutex> lock(mu_);
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->capacity >= want && it->capacity <= 2 * want &&
        (best == free_.end() || it->capacity < best->capacity)) {
      best = it;
    }
  }
  if (best == free_.end()) return Buffer{Allocate(want), want};
  const Buffer b = *best;
  free_.erase(best);
  kept_ -= b.capacity;
  return b;
}

void BufferPool::Give(Buffer b) {
  if (b.data == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (b.capacity > max_kept_) {
    std::free(b.data);
    return;
  }
  free_.push_back(b);
  kept_ += b.capacity;
  while (kept_ > max_kept_) {
    std::free(free_.front().data);
    kept_ -= free_.front().capacity;
    free_.pop_front();
  }
}

size_t BufferPool::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_;
}

}  // namespace stitchfs::engine
