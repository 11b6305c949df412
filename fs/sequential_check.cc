#include "fs/sequential_check.h"

namespace stitchfs::fs {

void SequentialCheck::Begin(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  reading_.insert(offset);
  changed_.notify_all();
}

void SequentialCheck::Cancel(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = reading_.find(offset); it != reading_.end()) reading_.erase(it);
  changed_.notify_all();
}

std::optional<engine::Status> SequentialCheck::result() const {
  std::lock_guard<std::mutex> lock(mu_);
  return result_;
}

bool SequentialCheck::GapBeingRead(uint64_t offset) const {
  auto it = reading_.lower_bound(next_);
  return it != reading_.end() && *it < offset;
}

bool SequentialCheck::WaitForGap(std::unique_lock<std::mutex>& lock, uint64_t offset) {
  const auto now = std::chrono::steady_clock::now();
  changed_.wait_until(lock, now + kArrival,
                      [&] { return stopped_ || next_ >= offset || GapBeingRead(offset); });
  changed_.wait_until(lock, now + kWait,
                      [&] { return stopped_ || next_ >= offset || !GapBeingRead(offset); });
  return !stopped_ && next_ == offset;
}

void SequentialCheck::Feed(std::string_view bytes) {
  check_->Update(bytes);
  next_ += bytes.size();
  for (auto it = pending_.begin(); it != pending_.end() && it->first == next_;) {
    check_->Update(it->second);
    next_ += it->second.size();
    pending_bytes_ -= it->second.size();
    it = pending_.erase(it);
  }
  changed_.notify_all();
}

void SequentialCheck::Stop() {
  stopped_ = true;
  pending_.clear();
  pending_bytes_ = 0;
  changed_.notify_all();
}

engine::Status SequentialCheck::Accept(uint64_t offset, std::string_view bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = reading_.find(offset); it != reading_.end()) reading_.erase(it);
  changed_.notify_all();
  const uint64_t end = offset + bytes.size();
  if (result_) {  // The file was seen whole: reads of its end keep its verdict.
    return end == check_->size() && !bytes.empty() ? *result_ : engine::Status::OK();
  }
  if (stopped_ || bytes.empty() || offset < next_) return engine::Status::OK();  // (A re-read.)
  if (offset > next_ && end < check_->size()) {  // Early, not the end: kept until its turn.
    if (pending_bytes_ + bytes.size() > kMaxPending || pending_.count(offset)) {
      Stop();
    } else {
      pending_.emplace(offset, std::string(bytes));
      pending_bytes_ += bytes.size();
    }
    return engine::Status::OK();
  }
  if (offset > next_ && !WaitForGap(lock, offset)) {
    Stop();
    return engine::Status::OK();
  }
  Feed(bytes);
  if (next_ < check_->size()) return engine::Status::OK();
  result_ = check_->Finish();
  return *result_;
}

}  // namespace stitchfs::fs
