#include "fs/read_buffer.h"

#include <sys/mman.h>

#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace stitchfs::fs {
namespace {

// Buffers kept reads gave back, for the next reads (a few: the reads in flight at once).
struct Pool {
  static constexpr size_t kKept = 2;
  std::mutex mu;
  std::vector<ReadBuffer> free;
  static Pool& Get() {
    static Pool* pool = new Pool;  // Never destroyed: threads may give back at exit.
    return *pool;
  }
  void Give(ReadBuffer b) noexcept {
    std::lock_guard<std::mutex> lock(mu);
    if (free.size() < kKept && b.data) {
      try {
        free.push_back(std::move(b));
      } catch (...) {  // (Then it is simply freed.)
      }
    }
  }
  // The smallest buffer of at least `size` bytes (a small read holds little), or false.
  bool Take(size_t size, ReadBuffer& into) {
    std::lock_guard<std::mutex> lock(mu);
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->capacity >= size && (best == free.end() || it->capacity < best->capacity)) best = it;
    }
    if (best == free.end()) return false;
    into = std::move(*best);
    free.erase(best);
    return true;
  }
};

thread_local ReadBuffer thread_buffer;

}  // namespace

void ReturnToPool(ReadBuffer buffer) noexcept { Pool::Get().Give(std::move(buffer)); }

ReadBuffer& ThreadReadBuffer() { return thread_buffer; }

void ReleaseThreadReadBuffer() noexcept {
  if (thread_buffer.data) ReturnToPool(std::exchange(thread_buffer, ReadBuffer{}));
}

void UnmapBuffer::operator()(char* p) const noexcept { ::munmap(p, length); }

void ReadBuffer::Reserve(size_t size) {
  if (capacity >= size || Pool::Get().Take(size, *this)) return;
  constexpr size_t kUnit = 64 << 10;
  const size_t length = (size + kUnit - 1) / kUnit * kUnit;
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data = std::unique_ptr<char[], UnmapBuffer>(static_cast<char*>(p), UnmapBuffer{length});
  capacity = length;
}

}  // namespace stitchfs::fs
