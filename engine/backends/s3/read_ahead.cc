#include "engine/backends/s3/read_ahead.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "engine/backends/s3/buffer_pool.h"

namespace stitchfs::engine {

// A range's buffer, read while the fetch fills it: `state` is the count of bytes in place, with
// kDone set once the fetch ended (then `status` is its result). Waiting on the one atomic
// cannot miss the end, which changes it.
struct ReadAhead::Bytes {
  static constexpr uint64_t kDone = uint64_t{1} << 63;
  explicit Bytes(size_t n) : buffer(BufferPool::Shared().Take(n)), data(buffer.data) {}
  ~Bytes() { BufferPool::Shared().Give(buffer); }
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;

  // Waits until the first `n` bytes are in place; the fetch's error if it ended before.
  Status Await(uint64_t n) const {
    for (;;) {
      const uint64_t v = state.load();
      if ((v & ~kDone) >= n) return Status::OK();
      if (v & kDone)
        return status.ok() ? Status::IOError("read ahead: range cut short", EIO) : status;
      // Ask to be woken at `n` (not at every piece), then look again before sleeping: either
      // Filled sees the request or this sees its bytes. A lower request stands unless it is
      // already met (its waiter is being woken, and Filled may not see this one).
      uint64_t w = wanted.load();
      while ((n < w || w <= (v & ~kDone)) && !wanted.compare_exchange_weak(w, n)) {
      }
      if (state.load() == v) state.wait(v);
    }
  }
  // The fetch's SinkReport: `n` bytes are in place. Wakes the waiters once the least count
  // asked for has come (the request is cleared unless a waiter just replaced it).
  bool Filled(uint64_t n) {
    state.store(n);
    if (uint64_t w = wanted.load(); n >= w) {
      wanted.compare_exchange_strong(w, UINT64_MAX);
      state.notify_all();
    }
    return !stop.load(std::memory_order_relaxed);
  }
  // The fetch ended: all `length` bytes are in place if it succeeded (also those it did not
  // report, such as a range read from the block cache).
  void Finish(Status s, uint64_t length) {
    const bool ok = s.ok();
    status = std::move(s);
    if (ok) {
      state.store(length | kDone);
    } else {
      state.fetch_or(kDone);
    }
    state.notify_all();
  }

  const BufferPool::Buffer buffer;
  char* const data;  // Not zero-filled: the fetch overwrites all of it.
  mutable std::atomic<uint64_t> state{0};
  mutable std::atomic<uint64_t> wanted{UINT64_MAX};  // The least count a reader waits for.
  std::atomic<bool> stop{false};  // Asks the fetch to end (its stream was dropped).
  Status status;                  // Written before kDone.
};

ReadAhead::ReadAhead(uint64_t size, RangeFetch fetch, ReadAheadOptions options)
    : size_(size), fetch_(std::move(fetch)), o_(options) {}

ReadAhead::~ReadAhead() {
  for (Stream& s : streams_) {
    for (Chunk& c : s.chunks) c.bytes->stop = true;
  }
  streams_.clear();  // Waits for the fetches, which end at their next piece or within a second.
}

void ReadAhead::Retire(Stream& s, std::vector<Chunk>* retired) {
  while (!s.chunks.empty()) RetireFront(s, retired);
}

void ReadAhead::RetireFront(Stream& s, std::vector<Chunk>* retired) {
  s.chunks.front().bytes->stop = true;  // No effect on a fetch that ended.
  retired->push_back(std::move(s.chunks.front()));
  s.chunks.pop_front();
}

void ReadAhead::TopUp(Stream& s) const {
  while (s.next_fetch < size_ && s.next_fetch < s.pos + s.window) {
    uint64_t len =
        std::min({std::clamp(s.window, o_.first_window, o_.max_chunk), size_ - s.next_fetch});
    // A full-width range leaving less than half a range of the object takes that rest too: one
    // GET less (each costs the server a start-up, and money on a paid service).
    if (len == o_.max_chunk && size_ - s.next_fetch - len < o_.max_chunk / 2) {
      len = size_ - s.next_fetch;
    }
    Chunk c{s.next_fetch, len, std::make_shared<Bytes>(len), {}};
    c.done =
        std::async(std::launch::async, [fetch = fetch_, off = c.offset, len, b = c.bytes] {
          const SinkReport report = [&b](uint64_t filled, uint64_t) { return b->Filled(filled); };
          const StreamSink sink{&report, &b->stop};
          Status st;
          try {  // Readers wait for Finish: it must come whatever happens.
            st = fetch(off, {b->data, len}, &sink);
          } catch (const std::exception& e) {
            st = Status::IOError(std::string("read ahead: ") + e.what(), ENOMEM);
          }
          b->Finish(std::move(st), len);
        }).share();
    s.chunks.push_back(std::move(c));
    s.next_fetch += len;
  }
}

std::optional<std::pair<uint64_t, ReadAhead::Chunk>> ReadAhead::ChunkFor(
    uint64_t pos, std::vector<Chunk>* retired) const {
  for (Stream& s : streams_) {
    for (const Chunk& c : s.chunks) {
      if (pos >= c.offset && pos < c.offset + c.length) {
        s.last_use = ++clock_;
        s.pos = std::max(s.pos, pos);
        TopUp(s);
        return std::make_pair(s.id, c);
      }
    }
  }
  // A new stream where a read ended (or at the start): someone is reading on.
  bool resumes = pos == 0 || pos == random_end_;
  for (const Stream& s : streams_) resumes = resumes || s.next_fetch == pos;
  if (!resumes) return std::nullopt;
  Stream& s = NewStream(pos, o_.first_window, retired);
  return std::make_pair(s.id, s.chunks.front());
}

ReadAhead::Stream& ReadAhead::NewStream(uint64_t pos, uint64_t window,
                                        std::vector<Chunk>* retired) const {
  if (streams_.size() >= o_.max_streams) {
    auto oldest =
        std::min_element(streams_.begin(), streams_.end(),
                         [](const Stream& a, const Stream& b) { return a.last_use < b.last_use; });
    Retire(*oldest, retired);
    streams_.erase(oldest);
  }
  streams_.push_back(Stream{next_id_++, pos, pos, window, ++clock_, {}});
  Stream& s = streams_.back();
  TopUp(s);
  return s;
}

void ReadAhead::Prefetch(uint64_t offset, uint64_t length) const {
  std::vector<Chunk> retired;  // Destroyed (its fetches waited for) after the lock is released.
  std::lock_guard<std::mutex> lock(mu_);
  if (offset >= size_ || length == 0) return;
  for (const Stream& s : streams_) {
    if (s.next_fetch == offset) return;
    for (const Chunk& c : s.chunks) {
      if (offset >= c.offset && offset < c.offset + c.length) return;
    }
  }
  NewStream(offset, std::clamp(length, o_.first_window, o_.max_chunk), &retired);
}

void ReadAhead::Consumed(uint64_t stream, uint64_t chunk_end, uint64_t end,
                         std::vector<Chunk>* retired) const {
  for (Stream& s : streams_) {
    if (s.id != stream) continue;
    s.pos = std::max(s.pos, end);
    if (end == chunk_end) s.window = std::min(s.window * 2, o_.max_window);
    // Keep 1 MiB behind the reader for small backward seeks; drop the rest, and everything once
    // the reader is at the end (else each object read through would pin its last range). A
    // range skipped by a reader seeking ahead is stopped.
    while (!s.chunks.empty() &&
           (s.chunks.front().offset + s.chunks.front().length + (1 << 20) <= s.pos ||
            s.pos == size_)) {
      RetireFront(s, retired);
    }
    TopUp(s);
    return;
  }
}

bool ReadAhead::Forget() const {
  std::vector<Chunk> retired;  // Destroyed after the lock is released (see Retire).
  std::lock_guard<std::mutex> lock(mu_);
  for (Stream& s : streams_) Retire(s, &retired);
  streams_.clear();
  random_end_ = 0;
  return !retired.empty();
}

void ReadAhead::DropStream(uint64_t stream, std::vector<Chunk>* retired) const {
  for (Stream& s : streams_) {
    if (s.id == stream) Retire(s, retired);
  }
  std::erase_if(streams_, [&](const Stream& s) { return s.id == stream; });
}

StatusOr<RandomAccessFile::Loan> ReadAhead::Lend(uint64_t offset, size_t n) const {
  if (offset >= size_ || n == 0) return RandomAccessFile::Loan{};
  const uint64_t end = std::min<uint64_t>(offset + n, size_);
  // Declared before the lock, so destroyed after it is released (see Retire).
  std::vector<Chunk> retired;
  std::optional<std::pair<uint64_t, Chunk>> found;
  std::unique_lock<std::mutex> lock(mu_);
  found = ChunkFor(offset, &retired);
  if (!found || end > found->second.offset + found->second.length) {
    return RandomAccessFile::Loan{};  // A random read, or one across ranges: ReadAt copies.
  }
  lock.unlock();
  const auto& [stream, chunk] = *found;
  const Status arrived = chunk.bytes->Await(end - chunk.offset);
  if (!arrived.ok() && chunk.bytes->stop) return RandomAccessFile::Loan{};  // ReadAt fetches.
  lock.lock();
  if (!arrived.ok()) {
    DropStream(stream, &retired);  // A later read starts again and fetches anew.
    return arrived;
  }
  Consumed(stream, chunk.offset + chunk.length, end, &retired);
  const char* at = chunk.bytes->data + (offset - chunk.offset);
  return RandomAccessFile::Loan{std::string_view(at, end - offset), chunk.bytes};
}

StatusOr<size_t> ReadAhead::ReadAt(uint64_t offset, std::span<char> dst) const {
  if (offset >= size_) return size_t{0};
  const uint64_t n = std::min<uint64_t>(dst.size(), size_ - offset);
  std::vector<Chunk> retired;  // Destroyed after the lock is released (see Retire).
  uint64_t done = 0;
  while (done < n) {
    const uint64_t pos = offset + done;
    std::optional<std::pair<uint64_t, Chunk>> found;  // (Also destroyed after the lock.)
    std::unique_lock<std::mutex> lock(mu_);
    found = ChunkFor(pos, &retired);
    if (!found) {
      random_end_ = offset + n;
      lock.unlock();
      RETURN_IF_ERROR(fetch_(pos, dst.subspan(done, n - done), nullptr));
      return n;
    }
    lock.unlock();
    const auto& [stream, chunk] = *found;
    const uint64_t take = std::min(chunk.offset + chunk.length, offset + n) - pos;
    if (Status arrived = chunk.bytes->Await(pos + take - chunk.offset); !arrived.ok()) {
      if (chunk.bytes->stop) {  // Its stream was dropped under this read: fetch the rest alone.
        RETURN_IF_ERROR(fetch_(pos, dst.subspan(done, n - done), nullptr));
        return n;
      }
      lock.lock();
      DropStream(stream, &retired);  // A later read starts again and fetches anew.
      return arrived;
    }
    std::memcpy(dst.data() + done, chunk.bytes->data + (pos - chunk.offset), take);
    done += take;
    lock.lock();
    Consumed(stream, chunk.offset + chunk.length, pos + take, &retired);
  }
  return n;
}

}  // namespace stitchfs::engine
