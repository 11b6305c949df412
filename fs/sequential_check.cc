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

bool SequentialCheck::GapBeingRead(uint64_t offset) const {
  auto it = reading_.lower_bound(next_);
  return it != reading_.end() && *it < offset;
}

engine::Status SequentialCheck::Accept(uint64_t offset, std::string_view bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = reading_.find(offset); it != reading_.end()) reading_.erase(it);
  changed_.notify_all();
  const uint64_t end = offset + bytes.size();
  if (result_) {  // The file was seen whole: reads of its end keep its verdict.
    return end == check_->size() && !bytes.empty() ? *result_ : engine::Status::OK();
  }
  if (stopped_ || bytes.empty()) return engine::Status::OK();
  if (offset > next_) {
    // Wait while a read of the gap is being served; give one a moment to arrive otherwise.
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    const auto arrival = std::chrono::steady_clock::now() + kArrival;
    changed_.wait_until(lock, arrival,
                        [&] { return stopped_ || next_ >= offset || GapBeingRead(offset); });
    changed_.wait_until(lock, deadline,
                        [&] { return stopped_ || next_ >= offset || !GapBeingRead(offset); });
  }
  if (stopped_ || offset != next_) {
    stopped_ = stopped_ || offset > next_;  // Behind it: a re-read, the check goes on.
    changed_.notify_all();
    return engine::Status::OK();
  }
  check_->Update(bytes);
  next_ = end;
  changed_.notify_all();
  if (next_ < check_->size()) return engine::Status::OK();
  result_ = check_->Finish();
  return *result_;
}

}  // namespace stitchfs::fs
