#include "fs/sequential_check.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <new>
#include <span>
#include <utility>

namespace stitchfs::fs {
namespace {

std::atomic<size_t> kept_all{0};  // Bytes every SequentialCheck keeps (kMaxPendingAll).

// Bytes read again at a time where reads were dropped.
constexpr uint64_t kAgainChunk = 1 << 20;

}  // namespace

size_t SequentialCheck::KeptAll() { return kept_all.load(); }

SequentialCheck::~SequentialCheck() {
  kept_all -= kept_bytes_;
  for (auto& [offset, k] : kept_) ReturnToPool(std::move(k.buffer));
}

void SequentialCheck::Begin(uint64_t offset, uint64_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  reading_.emplace(offset, length);
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

bool SequentialCheck::Over() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_ || (result_.has_value() && next_ > 0);  // (Not a verdict known before.)
}

bool SequentialCheck::Completes(uint64_t offset, uint64_t length) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t end = offset + length;
  if (length == 0 || end >= check_->size()) return false;
  if (result_) return !result_->ok() && end > fail_from_;  // (The kernel reads it again.)
  if (stopped_) return false;
  auto d = dropped_.upper_bound(end);  // The range holding `end`, if any: it starts there.
  return d != dropped_.end() && d->second == end && d->first == check_->size();
}

uint64_t SequentialCheck::DroppedEnd() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_ || result_ || dropped_.empty()) return check_->size();
  const auto last = std::prev(dropped_.end());  // (Keyed by end: the last ends the furthest.)
  return last->first == check_->size() ? last->second : check_->size();
}

void SequentialCheck::ReadElsewhere(uint64_t offset, uint64_t length) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_ || result_ || length == 0 || offset + length <= taken_) return;
  try {
    Drop(std::max(offset, taken_), offset + length);
  } catch (...) {  // (A map node: no memory.)
    Stop();
  }
}

bool SequentialCheck::GapBeingRead(uint64_t offset) const {
  auto it = reading_.lower_bound(next_);
  return it != reading_.end() && it->first < offset;
}

bool SequentialCheck::WaitForGap(std::unique_lock<std::mutex>& lock, uint64_t offset) {
  const auto now = std::chrono::steady_clock::now();
  auto done = [&] { return stopped_ || (next_ >= offset && !feeding_); };
  // The bytes before `offset` may still come: being read, being fed, or kept for their turn.
  auto coming = [&] { return feeding_ || GapBeingRead(offset) || kept_.count(next_) > 0; };
  ++waiters_;
  changed_.wait_until(lock, now + bounds_.arrival, [&] { return done() || coming(); });
  changed_.wait_until(lock, now + bounds_.wait, [&] { return done() || !coming(); });
  --waiters_;
  WaitFed(lock, now + 2 * bounds_.wait);  // (Bytes read again, at most max_fill.)
  return !stopped_ && !feeding_ && next_ == offset;
}

void SequentialCheck::WaitFed(std::unique_lock<std::mutex>& lock,
                              std::chrono::steady_clock::time_point deadline) {
  ++waiters_;
  changed_.wait_until(lock, deadline, [&] { return stopped_ || !feeding_; });
  --waiters_;
}

bool SequentialCheck::MayFill(uint64_t offset) const {
  if (reader_ == nullptr) return false;
  if (offset <= next_) return true;
  try {
    std::vector<std::pair<uint64_t, uint64_t>> read;  // [start, end) of every read known.
    uint64_t kept = 0;
    for (const auto& [at, k] : kept_) {
      read.emplace_back(at, at + k.length);
      if (at < offset) kept += std::min<uint64_t>(k.length, offset - at);
    }
    for (const auto& [end, start] : dropped_) read.emplace_back(start, end);
    for (const auto& [at, length] : reading_) read.emplace_back(at, at + length);
    std::sort(read.begin(), read.end());
    uint64_t covered = next_;
    for (const auto& [start, end] : read) {
      if (covered >= offset || start > covered) break;
      covered = std::max(covered, end);
    }
    return covered >= offset && offset - next_ - std::min(kept, offset - next_) <= bounds_.max_fill;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

void SequentialCheck::ForgetFed() noexcept {
  for (auto it = kept_.begin(); it != kept_.end() && it->first <= next_;) {
    if (it->first + it->second.length > next_) {
      ++it;
      continue;
    }
    kept_bytes_ -= it->second.weight;
    kept_all -= it->second.weight;
    ReturnToPool(std::move(it->second.buffer));
    it = kept_.erase(it);
  }
  while (!dropped_.empty() && dropped_.begin()->first <= next_) dropped_.erase(dropped_.begin());
  if (!dropped_.empty()) dropped_.begin()->second = std::max(dropped_.begin()->second, next_);
}

engine::StatusOr<std::string_view> SequentialCheck::ReadAgain(std::unique_lock<std::mutex>& lock,
                                                              uint64_t to, ReadBuffer& into) {
  if (auto k = kept_.upper_bound(next_); k != kept_.end()) to = std::min(to, k->first);
  to = std::min({to, next_ + kAgainChunk, check_->size()});
  const uint64_t from = next_;
  taken_ = to;  // Reads answered meanwhile below `to` are not needed.
  lock.unlock();
  engine::StatusOr<size_t> n = engine::Status::IOError("reading again", ENOMEM);
  try {
    into.Reserve(to - from);
    n = reader_->ReadAt(from, std::span<char>(into.data.get(), to - from));
  } catch (...) {  // (No memory, or no thread for a read-ahead: n says so.)
  }
  lock.lock();
  if (n.ok() && *n != to - from) n = engine::Status::BackupDamaged("the file ends early");
  if (!n.ok()) {
    taken_ = next_;
    return n.status();
  }
  return std::string_view(into.data.get(), *n);
}

engine::Status SequentialCheck::Feed(std::unique_lock<std::mutex>& lock, uint64_t at,
                                     std::string_view bytes, uint64_t fill_to) {
  try {
    return FeedOrThrow(lock, at, bytes, fill_to);
  } catch (...) {  // (Whatever the reader threw: the check stops, no one waits on it.)
    if (!lock.owns_lock()) lock.lock();
    feeding_ = false;
    taken_ = next_;
    Stop();
    if (waiters_ > 0) changed_.notify_all();
    throw;
  }
}

engine::Status SequentialCheck::FeedOrThrow(std::unique_lock<std::mutex>& lock, uint64_t at,
                                            std::string_view bytes, uint64_t fill_to) {
  feeding_ = true;
  Kept held;         // The kept read being fed (taken out of kept_),
  ReadBuffer again;  // or the bytes read again.
  engine::Status status;
  while (!stopped_ && next_ < check_->size()) {
    ForgetFed();
    std::string_view chunk;
    auto kept = kept_.upper_bound(next_);  // (The one before it, if any, holds next_.)
    if (at <= next_ && next_ < at + bytes.size()) {
      chunk = bytes.substr(next_ - at);
      bytes = {};
    } else if (kept != kept_.begin() && (--kept)->first <= next_) {
      if (held.buffer.data) ReturnToPool(std::move(held.buffer));
      held = std::move(kept->second);
      kept_bytes_ -= held.weight;
      kept_all -= held.weight;
      chunk = std::string_view(held.buffer.data.get(), held.length).substr(next_ - kept->first);
      kept_.erase(kept);
    } else {
      uint64_t to = fill_to;  // Dropped reads are read again; so is anything below fill_to.
      if (auto d = dropped_.upper_bound(next_); d != dropped_.end() && d->second <= next_) {
        to = std::max(to, d->first);
      }
      if (at > next_) to = std::min(to, at);
      if (to <= next_ || reader_ == nullptr) break;
      auto read = ReadAgain(lock, to, again);
      if (!read.ok()) {
        status = read.status();
        break;
      }
      chunk = *read;
    }
    taken_ = next_ + chunk.size();
    lock.unlock();  // Hashing, the long part, holds no lock: other reads go on meanwhile.
    check_->Update(chunk);
    lock.lock();
    next_ += chunk.size();
  }
  if (held.buffer.data) ReturnToPool(std::move(held.buffer));
  if (again.data) ReturnToPool(std::move(again));
  feeding_ = false;
  if (waiters_ > 0) changed_.notify_all();
  return status;
}

engine::Status SequentialCheck::EndAlone(uint64_t offset, uint64_t end) {
  try {
    end_alone_ = true;
    DropKept();  // (Kept reads of the end too: the kernel keeps their pages as well.)
    if (!stopped_) Drop(offset, end);  // (Read again if a whole read joins from the start.)
  } catch (...) {                      // (A map node: no memory.)
    Stop();
  }
  return engine::Status::OK();
}

void SequentialCheck::Stop() noexcept {
  stopped_ = true;
  for (auto& [offset, k] : kept_) ReturnToPool(std::move(k.buffer));
  kept_.clear();
  dropped_.clear();
  kept_all -= kept_bytes_;
  kept_bytes_ = 0;
  if (waiters_ > 0) changed_.notify_all();
}

bool SequentialCheck::Keep(uint64_t offset, ReadBuffer& buffer, size_t length) {
  const size_t weight = buffer.capacity;
  if (end_alone_ || offset - next_ > bounds_.max_ahead ||
      kept_bytes_ + weight > bounds_.max_pending || kept_.count(offset)) {
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

void SequentialCheck::Drop(uint64_t offset, uint64_t end) {
  if (reader_ == nullptr) return Stop();
  // Ranges are keyed by their end: merge every one that touches [offset, end).
  for (auto it = dropped_.lower_bound(offset); it != dropped_.end() && it->second <= end;) {
    offset = std::min(offset, it->second);
    end = std::max(end, it->first);
    it = dropped_.erase(it);
  }
  dropped_.emplace(end, offset);
  uint64_t bytes = 0;
  for (const auto& [e, start] : dropped_) bytes += e - start;
  // Reads all over the file (not read whole), or too much to read again.
  if (dropped_.size() > kMaxDropped || bytes > bounds_.max_fill) Stop();
}

void SequentialCheck::DropKept() {
  while (!kept_.empty() && !stopped_) {
    auto it = kept_.begin();
    const uint64_t at = it->first, end = at + it->second.length;
    kept_bytes_ -= it->second.weight;
    kept_all -= it->second.weight;
    ReturnToPool(std::move(it->second.buffer));
    kept_.erase(it);
    Drop(at, end);
  }
}

engine::Status SequentialCheck::AcceptAnswered(uint64_t offset, ReadBuffer& buffer,
                                               size_t length) noexcept {
  return AcceptAnswered(offset, std::string_view(buffer.data.get(), length), &buffer);
}

engine::Status SequentialCheck::AcceptAnswered(uint64_t offset, std::string_view bytes) noexcept {
  return AcceptAnswered(offset, bytes, nullptr);
}

engine::Status SequentialCheck::FinishIfWhole() noexcept {
  if (stopped_ || result_ || next_ < check_->size()) return engine::Status::OK();
  try {
    result_ = check_->Finish();  // (No read failed: fail_from_ stays, only ends fail.)
    return *result_;
  } catch (...) {  // (The message's memory.)
    Stop();
    return engine::Status::OK();
  }
}

engine::Status SequentialCheck::AcceptAnswered(uint64_t offset, std::string_view bytes,
                                               ReadBuffer* buffer) noexcept {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = reading_.find(offset); it != reading_.end()) reading_.erase(it);
  if (waiters_ > 0) changed_.notify_all();  // (A read of the end may wait for no more.)
  const uint64_t end = offset + bytes.size();
  if (result_ || stopped_ || bytes.empty() || end <= taken_) return engine::Status::OK();
  try {
    if (offset <= next_ && !feeding_) {                // Its turn (its bytes from next_ on).
      if (!Feed(lock, offset, bytes, 0).ok()) Stop();  // (Bytes read again could not be.)
      return FinishIfWhole();
    }
    if (offset < taken_) {  // Partly being fed: the rest read again.
      Drop(taken_, end);
      return engine::Status::OK();
    }
    // Ahead: kept for its turn, its buffer or a copy. A small read in a thread's large buffer
    // (grown by an earlier large read) is copied: kept whole, the buffer would hold many times
    // its bytes.
    if (buffer != nullptr && buffer->capacity > 4 * bytes.size() + (64 << 10)) buffer = nullptr;
    ReadBuffer copy;
    if (buffer == nullptr) {
      copy.Reserve(bytes.size());
      std::memcpy(copy.data.get(), bytes.data(), bytes.size());
      buffer = &copy;
    }
    if (!Keep(offset, *buffer, bytes.size())) {
      DropKept();
      if (!stopped_) Drop(offset, end);
    }
  } catch (...) {  // (bad_alloc of a copy or a map node: `lock` is held again.)
    if (!lock.owns_lock()) lock.lock();
    Stop();
  }
  return engine::Status::OK();
}

engine::Status SequentialCheck::Accept(uint64_t offset, std::string_view bytes, bool* found_now) {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = reading_.find(offset); it != reading_.end()) reading_.erase(it);
  if (waiters_ > 0) changed_.notify_all();  // (Another read of the end may wait for no more.)
  const uint64_t end = offset + bytes.size();
  const bool last = end == check_->size() && !bytes.empty();
  if (last && !result_ && feeding_ && end <= taken_) {  // The end is being hashed: its verdict.
    WaitFed(lock, std::chrono::steady_clock::now() + 2 * bounds_.wait);
  }
  if (result_) {  // Seen whole: reads of its end, and of the read that found it, keep it.
    return last || end > fail_from_ ? *result_ : engine::Status::OK();
  }
  if (stopped_ || bytes.empty() || end <= taken_) return engine::Status::OK();  // (A re-read.)
  uint64_t fill_to = 0;
  // A read of the end alone again (a reader of the end, a footer): no wait for bytes before it.
  const bool alone =
      end_alone_ && reading_.empty() && offset > next_ && !feeding_ && !MayFill(offset);
  if (alone || ((offset > next_ || feeding_) && !WaitForGap(lock, offset))) {
    if (stopped_ || feeding_) {  // Still being read again: unchecked.
      Stop();
      return engine::Status::OK();
    }
    if (!MayFill(offset)) {  // Bytes before it never read: not read whole (yet).
      return EndAlone(offset, end);
    }
    fill_to = offset;  // Read whole, but the bytes before it did not all come in time.
  }
  if (engine::Status s = Feed(lock, offset, bytes, fill_to); !s.ok()) {
    Stop();
    return s.WithPrefix("reading the file again to check it");
  }
  if (result_) return *result_;  // (Another read of the end found it meanwhile.)
  if (stopped_ || next_ < check_->size()) return engine::Status::OK();
  fail_from_ = offset;
  result_ = check_->Finish();
  if (found_now != nullptr) *found_now = true;
  return *result_;
}

}  // namespace stitchfs::fs
