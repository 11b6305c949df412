#include "engine/s3/read_ahead.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace stitchfs::engine {

namespace {

// Range buffers kept for reuse: a fresh 16 MiB allocation costs page faults and the kernel's
// zeroing of every page, about as much CPU as receiving the bytes. Thread-safe.
class BufferPool {
 public:
  static BufferPool& Get() {
    static BufferPool* pool = new BufferPool();  // Never destroyed: buffers outlive statics.
    return *pool;
  }
  // A buffer of at least `n` bytes (its capacity a power of two), not zero-filled.
  std::pair<char*, size_t> Take(size_t n) {
    size_t cap = 1 << 20;
    while (cap < n) cap <<= 1;
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].second == cap) {
        auto b = free_[i];
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        kept_ -= cap;
        return b;
      }
    }
    return {new char[cap], cap};
  }
  void Give(char* p, size_t cap) {
    std::lock_guard<std::mutex> lock(mu_);
    if (kept_ + cap > kMaxKept) {
      delete[] p;
      return;
    }
    free_.emplace_back(p, cap);
    kept_ += cap;
  }

 private:
  static constexpr size_t kMaxKept = 64 << 20;
  std::mutex mu_;
  std::vector<std::pair<char*, size_t>> free_;
  size_t kept_ = 0;
};

}  // namespace

struct ReadAhead::Bytes {
  explicit Bytes(size_t n) { std::tie(data, capacity) = BufferPool::Get().Take(n); }
  ~Bytes() { BufferPool::Get().Give(data, capacity); }
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  Status status;
  char* data = nullptr;  // Not zero-filled: the fetch overwrites all of it.
  size_t capacity = 0;
};

ReadAhead::ReadAhead(uint64_t size, RangeFetch fetch, ReadAheadOptions options)
    : size_(size), fetch_(std::move(fetch)), o_(options) {}

ReadAhead::~ReadAhead() {
  for (Stream& s : streams_) {
    for (Chunk& c : s.chunks) c.data.wait();
  }
}

void ReadAhead::TopUp(Stream& s) const {
  while (s.next_fetch < size_ && s.next_fetch < s.pos + s.window) {
    const uint64_t len =
        std::min({std::clamp(s.window, o_.first_window, o_.max_chunk), size_ - s.next_fetch});
    Chunk c{s.next_fetch, len, {}};
    c.data = std::async(std::launch::async, [fetch = fetch_, off = c.offset, len]() {
               auto b = std::make_shared<Bytes>(len);
               b->status = fetch(off, {b->data, len}, /*streaming=*/true);
               return std::shared_ptr<const Bytes>(std::move(b));
             }).share();
    s.chunks.push_back(std::move(c));
    s.next_fetch += len;
  }
}

std::optional<std::pair<uint64_t, ReadAhead::Chunk>> ReadAhead::ChunkFor(uint64_t pos) const {
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
  Stream& s = NewStream(pos, o_.first_window);
  return std::make_pair(s.id, s.chunks.front());
}

ReadAhead::Stream& ReadAhead::NewStream(uint64_t pos, uint64_t window) const {
  if (streams_.size() >= o_.max_streams) {
    auto oldest =
        std::min_element(streams_.begin(), streams_.end(),
                         [](const Stream& a, const Stream& b) { return a.last_use < b.last_use; });
    for (Chunk& c : oldest->chunks) c.data.wait();  // (Its fetches hold no lock of ours.)
    streams_.erase(oldest);
  }
  streams_.push_back(Stream{next_id_++, pos, pos, window, ++clock_, {}});
  Stream& s = streams_.back();
  TopUp(s);
  return s;
}

void ReadAhead::Prefetch(uint64_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (offset >= size_) return;
  for (const Stream& s : streams_) {
    if (s.next_fetch == offset) return;
    for (const Chunk& c : s.chunks) {
      if (offset >= c.offset && offset < c.offset + c.length) return;
    }
  }
  NewStream(offset, o_.max_chunk);
}

void ReadAhead::Consumed(uint64_t stream, const Chunk& c, uint64_t end) const {
  for (Stream& s : streams_) {
    if (s.id != stream) continue;
    s.pos = std::max(s.pos, end);
    if (end == c.offset + c.length) s.window = std::min(s.window * 2, o_.max_window);
    // Keep 1 MiB behind the reader for small backward seeks; drop the rest.
    while (!s.chunks.empty() &&
           s.chunks.front().offset + s.chunks.front().length + (1 << 20) <= s.pos) {
      s.chunks.pop_front();
    }
    TopUp(s);
    return;
  }
}

void ReadAhead::DropStream(uint64_t stream) const {
  std::erase_if(streams_, [&](const Stream& s) { return s.id == stream; });
}

StatusOr<RandomAccessFile::Loan> ReadAhead::Lend(uint64_t offset, size_t n) const {
  if (offset >= size_ || n == 0) return RandomAccessFile::Loan{};
  const uint64_t end = std::min<uint64_t>(offset + n, size_);
  std::unique_lock<std::mutex> lock(mu_);
  auto found = ChunkFor(offset);
  if (!found || end > found->second.offset + found->second.length) {
    return RandomAccessFile::Loan{};  // A random read, or one across ranges: ReadAt copies.
  }
  lock.unlock();
  const auto& [stream, chunk] = *found;
  std::shared_ptr<const Bytes> bytes = chunk.data.get();
  lock.lock();
  if (!bytes->status.ok()) {
    DropStream(stream);  // A later read starts again and fetches anew.
    return bytes->status;
  }
  Consumed(stream, chunk, end);
  const char* at = bytes->data + (offset - chunk.offset);
  return RandomAccessFile::Loan{std::string_view(at, end - offset), bytes};
}

StatusOr<size_t> ReadAhead::ReadAt(uint64_t offset, std::span<char> dst) const {
  if (offset >= size_) return size_t{0};
  const uint64_t n = std::min<uint64_t>(dst.size(), size_ - offset);
  uint64_t done = 0;
  while (done < n) {
    const uint64_t pos = offset + done;
    std::unique_lock<std::mutex> lock(mu_);
    auto found = ChunkFor(pos);
    if (!found) {
      random_end_ = offset + n;
      lock.unlock();
      RETURN_IF_ERROR(fetch_(pos, dst.subspan(done, n - done), /*streaming=*/false));
      return n;
    }
    lock.unlock();
    const auto& [stream, chunk] = *found;
    std::shared_ptr<const Bytes> bytes = chunk.data.get();
    if (!bytes->status.ok()) {
      lock.lock();
      DropStream(stream);  // A later read starts again and fetches anew.
      return bytes->status;
    }
    const uint64_t take = std::min(chunk.offset + chunk.length, offset + n) - pos;
    std::memcpy(dst.data() + done, bytes->data + (pos - chunk.offset), take);
    done += take;
    lock.lock();
    Consumed(stream, chunk, pos + take);
  }
  return n;
}

}  // namespace stitchfs::engine
