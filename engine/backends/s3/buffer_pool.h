// Large buffers kept for reuse, for read-ahead ranges.
//
// A fresh allocation of tens of MiB costs page faults and the kernel's zeroing of every page it
// touches, about as much CPU as receiving the bytes over loopback. The pool keeps the most
// recently returned buffers, up to a byte budget: the oldest go first, so the small ranges of a
// stream's first window never crowd out the full-width ones that follow. Buffers are 2 MiB
// aligned and advised as huge pages (a 32 MiB buffer then costs 16 faults, not 8192).
//
// Thread-safe.

#ifndef STITCHFS_ENGINE_S3_BUFFER_POOL_H_
#define STITCHFS_ENGINE_S3_BUFFER_POOL_H_

#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace stitchfs::engine {

class BufferPool {
 public:
  static constexpr size_t kUnit = size_t{2} << 20;  // Capacities are multiples of this.

  explicit BufferPool(size_t max_kept) : max_kept_(max_kept) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // The process's pool of read-ahead buffers (64 MiB kept at most). Never destroyed: buffers
  // may be returned after static destructors ran.
  static BufferPool& Shared();

  struct Buffer {
    char* data = nullptr;
    size_t capacity = 0;
  };
  // A buffer of at least `n` bytes, not zero-filled: the kept one that fits best, if one is at
  // most twice the size asked for (rounded up to kUnit), else a new one. Throws std::bad_alloc.
  Buffer Take(size_t n);
  // Returns `b` (from Take) to be kept, or freed beyond the budget.
  void Give(Buffer b);

  size_t kept_bytes() const;

 private:
  const size_t max_kept_;
  mutable std::mutex mu_;
  std::deque<Buffer> free_;  // Oldest first; guarded by mu_.
  size_t kept_ = 0;          // Guarded by mu_.
};

}  // namespace stitchfs::engine

#endif  // STITCHFS_ENGINE_S3_BUFFER_POOL_H_
