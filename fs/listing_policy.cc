#include "fs/listing_policy.h"

#include <utility>

namespace stitchfs::fs {

void ListingPolicy::Start(Invalidator invalidate) {
  std::lock_guard<std::mutex> lock(mu_);
  invalidate_ = std::move(invalidate);
}

void ListingPolicy::Stop() {
  stopping_ = true;
  Wait();
  std::lock_guard<std::mutex> lock(mu_);
  invalidate_ = nullptr;
}

void ListingPolicy::Wait() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    t = std::move(invalidator_);
  }
  if (t.joinable()) t.join();
}

void ListingPolicy::ListedLean(uint64_t dir) {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_attrs_.load()) return;  // Switched meanwhile: its listing may stay lean, no harm.
  lean_.push_back(dir);
  if (lean_.size() >= kMaxLean) SwitchLocked();  // Bounds the memory of the record.
}

void ListingPolicy::FileLookedUp() {
  if (FileAttrs()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_attrs_.load()) SwitchLocked();
}

void ListingPolicy::SwitchLocked() {
  file_attrs_ = true;
  std::vector<uint64_t> dirs = std::move(lean_);
  lean_ = {};
  // Not from this thread: the kernel may hold a lock of one of these folders for this LOOKUP.
  if (invalidate_ && !dirs.empty() && !invalidator_.joinable()) {
    invalidator_ = std::thread([this, f = invalidate_, d = std::move(dirs)] { Invalidate(f, d); });
  }
}

void ListingPolicy::Invalidate(const Invalidator& invalidate, const std::vector<uint64_t>& dirs) {
  for (uint64_t dir : dirs) {
    if (stopping_.load()) return;
    invalidate(dir);
  }
}

}  // namespace stitchfs::fs
