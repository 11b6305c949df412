#include "fs/sequential_check.h"

namespace stitchfs::fs {

engine::Status SequentialCheck::Accept(uint64_t offset, std::string_view bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t end = offset + bytes.size();
  if (result_) {  // The file was seen whole: reads of its end keep its verdict.
    return end == check_->size() && !bytes.empty() ? *result_ : engine::Status::OK();
  }
  if (stopped_ || bytes.empty()) return engine::Status::OK();
  if (offset > next_) {
    advanced_.wait_for(lock, kWait, [&] { return stopped_ || next_ >= offset; });
  }
  if (stopped_ || offset != next_) {
    stopped_ = offset > next_ || stopped_;  // Behind it: a re-read, the check goes on.
    advanced_.notify_all();
    return engine::Status::OK();
  }
  check_->Update(bytes);
  next_ = end;
  advanced_.notify_all();
  if (next_ < check_->size()) return engine::Status::OK();
  result_ = check_->Finish();
  return *result_;
}

}  // namespace stitchfs::fs
