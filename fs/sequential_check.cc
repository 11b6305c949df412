#include "fs/sequential_check.h"

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <new>
#include <utility>

namespace stitchfs::fs {
namespace {

std::atomic<size_t> kept_all{0};  // Bytes every SequentialCheck keeps (kMaxPendingAll).

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
};

}  // namespace

void ReturnToPool(ReadBuffer buffer) noexcept { Pool::Get().Give(std::move(buffer)); }

namespace {
thread_local ReadBuffer thread_buffer;
}  // namespace

ReadBuffer& ThreadReadBuffer() { return thread_buffer; }

void ReleaseThreadReadBuffer() noexcept {
  if (thread_buffer.data) ReturnToPool(std::exchange(thread_buffer, ReadBuffer{}));
}

void UnmapBuffer::operator()(char* p) const noexcept { ::munmap(p, length); }

void ReadBuffer::Reserve(size_t size) {
  if (capacity >= size) return;
  {
    Pool& pool = Pool::Get();
    std::lock_guard<std::mutex> lock(pool.mu);
    auto best = pool.free.end();  // The smallest that fits: a small read holds little.
    for (auto it = pool.free.begin(); it != pool.free.end(); ++it) {
      if (it->capacity >= size && (best == pool.free.end() || it->capacity < best->capacity)) {
        best = it;
      }
    }
    if (best != pool.free.end()) {
      *this = std::move(*best);
      pool.free.erase(best);
      return;
    }
  }
  constexpr size_t kUnit = 64 << 10;
  const size_t length = (size + kUnit - 1) / kUnit * kUnit;
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data = std::unique_ptr<char[], UnmapBuffer>(static_cast<char*>(p), UnmapBuffer{length});
  capacity = length;
}

SequentialCheck::~SequentialCheck() {
  kept_all -= kept_bytes_;
  for (auto& [offset, k] : kept_) Pool::Get().Give(std::move(k.buffer));
}

void SequentialCheck::Begin(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  reading_.insert(offset);
  if (waiters_ > 0) changed_.notify_all();
}

void SequentialCheck::Cancel(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = reading_.find(offset); it != reading_.end()) reading_.erase(it);
  if (waiters_ > 0) changed_.notify_all();
}

std::optional<engine::Status> SequentialCheck::result() const {
  std::lock_guard<std::mutex> lock(mu_);
  return result_;
}

bool SequentialCheck::Unfed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_ == 0 && !feeding_ && !stopped_ && !result_;
}

bool SequentialCheck::GapBeingRead(uint64_t offset) const {
  auto it = reading_.lower_bound(next_);
  return it != reading_.end() && *it < offset;
}

bool SequentialCheck::WaitForGap(std::unique_lock<std::mutex>& lock, uint64_t offset) {
  const auto now = std::chrono::steady_clock::now();
  auto done = [&] { return stopped_ || (next_ >= offset && !feeding_); };
  // The bytes before `offset` may still come: being read, being fed, or kept for their turn.
  auto coming = [&] { return feeding_ || GapBeingRead(offset) || kept_.count(next_) > 0; };
  ++waiters_;
  changed_.wait_until(lock, now + kArrival, [&] { return done() || coming(); });
  changed_.wait_until(lock, now + kWait, [&] { return done() || !coming(); });
  --waiters_;
  return done() && !stopped_ && next_ == offset;
}

void SequentialCheck::FeedFrom(std::unique_lock<std::mutex>& lock, std::string_view bytes) {
  feeding_ = true;
  Kept held;  // The kept read being fed (taken out of kept_).
  for (std::string_view chunk = bytes;;) {
    taken_ = next_ + chunk.size();
    lock.unlock();  // Hashing, the long part, holds no lock: other reads go on meanwhile.
    check_->Update(chunk);
    if (held.buffer.data) Pool::Get().Give(std::move(held.buffer));
    lock.lock();
    next_ += chunk.size();
    auto it = kept_.find(next_);
    if (it == kept_.end()) break;
    held = std::move(it->second);
    kept_bytes_ -= held.weight;
    kept_all -= held.weight;
    kept_.erase(it);
    chunk = std::string_view(held.buffer.data.get(), held.length);
  }
  feeding_ = false;
  if (waiters_ > 0) changed_.notify_all();
}

void SequentialCheck::Stop() noexcept {
  stopped_ = true;
  for (auto& [offset, k] : kept_) Pool::Get().Give(std::move(k.buffer));
  kept_.clear();
  kept_all -= kept_bytes_;
  kept_bytes_ = 0;
  if (waiters_ > 0) changed_.notify_all();
}

bool SequentialCheck::Keep(uint64_t offset, ReadBuffer& buffer, size_t length) {
  const size_t weight = buffer.capacity;
  if (offset - next_ > kMaxAhead || kept_bytes_ + weight > kMaxPending || kept_.count(offset)) {
    return false;
  }
  if (kept_all.fetch_add(weight) + weight > kMaxPendingAll) {
    kept_all -= weight;
    return false;
  }
  kept_bytes_ += weight;
  Kept kept{std::move(buffer), length, weight};
  buffer = ReadBuffer();  // (Before anything can throw: the caller's is empty either way.)
  kept_.emplace(offset, std::move(kept));  // (Throwing, Stop() gives the bytes counted back.)
  return true;
}

void SequentialCheck::AcceptAnswered(uint64_t offset, ReadBuffer& buffer, size_t length) noexcept {
  AcceptAnswered(offset, std::string_view(buffer.data.get(), length), &buffer);
}

void SequentialCheck::AcceptAnswered(uint64_t offset, std::string_view bytes) noexcept {
  AcceptAnswered(offset, bytes, nullptr);
}

void SequentialCheck::AcceptAnswered(uint64_t offset, std::string_view bytes,
                                     ReadBuffer* buffer) noexcept {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = reading_.find(offset); it != reading_.end()) reading_.erase(it);
  if (result_ || stopped_ || bytes.empty() || offset < taken_) return;  // (Seen, or a re-read.)
  try {
    if (offset > next_ || feeding_) {  // Ahead: kept for its turn, its buffer or a copy.
      // A small read in a thread's large buffer (grown by an earlier large read) is copied:
      // kept whole, the buffer would hold many times its bytes.
      if (buffer != nullptr && buffer->capacity > 4 * bytes.size() + (64 << 10)) buffer = nullptr;
      ReadBuffer copy;
      if (buffer == nullptr) {
        copy.Reserve(bytes.size());
        std::memcpy(copy.data.get(), bytes.data(), bytes.size());
        buffer = &copy;
      }
      if (!Keep(offset, *buffer, bytes.size())) Stop();
      return;
    }
    FeedFrom(lock, bytes);
  } catch (...) {  // (bad_alloc of a copy or a map node: `lock` is held again.)
    if (!lock.owns_lock()) lock.lock();
    Stop();
  }
}

engine::Status SequentialCheck::Accept(uint64_t offset, std::string_view bytes, bool* found_now) {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = reading_.find(offset); it != reading_.end()) reading_.erase(it);
  const uint64_t end = offset + bytes.size();
  if (result_) {  // The file was seen whole: reads of its end keep its verdict.
    return end == check_->size() && !bytes.empty() ? *result_ : engine::Status::OK();
  }
  if (stopped_ || bytes.empty() || offset < taken_) return engine::Status::OK();  // (A re-read.)
  if ((offset > next_ || feeding_) && !WaitForGap(lock, offset)) {
    Stop();  // The bytes before it did not come in time.
    return engine::Status::OK();
  }
  FeedFrom(lock, bytes);
  if (stopped_ || next_ < check_->size()) return engine::Status::OK();
  result_ = check_->Finish();
  if (found_now != nullptr) *found_now = true;
  return *result_;
}

}  // namespace stitchfs::fs
