// ReadBuffer: the memory a read's bytes are read into, one per serving thread, and the pool
// of them that reads kept for later (fs/sequential_check.h) give back. FUSE-free.
#pragma once

#include <cstddef>
#include <memory>

namespace stitchfs::fs {

// A buffer a read's bytes are read into. A read served ahead of the ones before it hands its
// buffer to the check, which keeps it until their turn (no copy, no wait) and gives it back to
// a pool the next reads take theirs from.
// Unmaps a ReadBuffer's memory, which is mapped for it alone (whole 64 KiB units), so that a
// buffer freed is given back to the system at once instead of staying in the heap.
struct UnmapBuffer {
  size_t length = 0;
  void operator()(char* p) const noexcept;
};

struct ReadBuffer {
  std::unique_ptr<char[], UnmapBuffer> data;
  size_t capacity = 0;
  // At least `size` bytes: the same buffer, else one from the pool, else a new one
  // (std::bad_alloc if there is no memory).
  void Reserve(size_t size);
};

// Gives `buffer` to the pool ReadBuffer::Reserve takes from (or frees it: the pool keeps a few).
void ReturnToPool(ReadBuffer buffer) noexcept;

// The calling thread's buffer for reads, and the same given back to the pool (a thread that
// goes idle, so that a burst of reads on many threads does not keep a buffer on each).
ReadBuffer& ThreadReadBuffer();
void ReleaseThreadReadBuffer() noexcept;

}  // namespace stitchfs::fs
