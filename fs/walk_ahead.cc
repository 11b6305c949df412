#include "fs/walk_ahead.h"

#include <sys/stat.h>

namespace stitchfs::fs {

WalkAhead::WalkAhead(const Namespace& ns, WalkAheadLimits limits) : ns_(ns), limits_(limits) {
  if (limits_.files == 0) return;
  for (int i = 0; i < limits_.threads; ++i) threads_.emplace_back([this] { Work(); });
}

WalkAhead::~WalkAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WalkAhead::Started(uint64_t ino) {
  if (threads_.empty()) return;
  At(ino, ns_.NextFile(ino), /*read=*/true);
}

void WalkAhead::Listed(uint64_t dir) {
  if (threads_.empty()) return;
  const std::optional<uint64_t> first = ns_.FirstFileIn(dir);
  if (first) At(*first, ns_.NextFile(*first), /*read=*/false);
}

void WalkAhead::At(uint64_t pos, std::optional<uint64_t> next, bool read) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pos == last_) return;  // The same place again (a folder listed, then its first file).
  const bool ahead = walker_ != 0 && pos > walker_ && pos <= frontier_;
  const bool started = walker_ == 0 && pos == expected_ && read;
  last_ = pos;
  expected_ = next.value_or(0);
  if (!ahead && !started) {  // Not a walk (any more): forget what was queued.
    walker_ = frontier_ = 0;
    ahead_.clear();
    todo_.clear();
    ahead_bytes_ = 0;
    return;
  }
  if (started) frontier_ = pos;
  walker_ = pos;
  while (!ahead_.empty() && ahead_.front().ino <= pos) {
    ahead_bytes_ -= ahead_.front().size;
    ahead_.pop_front();
  }
  while (!todo_.empty() && todo_.front().ino <= pos) todo_.pop_front();
  Fill();
}

void WalkAhead::Fill() {
  const size_t before = todo_.size();
  for (size_t looked = 0;
       looked < 2 * limits_.files && ahead_.size() < limits_.files && ahead_bytes_ < limits_.bytes;
       ++looked) {
    const std::optional<uint64_t> next = ns_.NextFile(frontier_);
    if (!next || *next <= frontier_) break;
    frontier_ = *next;
    auto st = ns_.Attr(*next);
    if (!st.ok() || !S_ISREG(st->st_mode) || st->st_size <= 0) continue;
    const Ahead a{*next, static_cast<uint64_t>(st->st_size)};
    ahead_.push_back(a);
    ahead_bytes_ += a.size;
    todo_.push_back(a);
  }
  if (todo_.size() > before) work_.notify_all();
}

void WalkAhead::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || !todo_.empty(); });
    if (stop_) return;
    const Ahead a = todo_.front();
    todo_.pop_front();
    lock.unlock();
    Fetch(a.ino, a.size);
    lock.lock();
  }
}

void WalkAhead::Fetch(uint64_t ino, uint64_t size) {
  auto reads = ns_.Reads(ino);
  if (!reads.ok()) return;  // The walker's own read will say why.
  (*reads)->reader()->Prefetch(0, size);
  std::lock_guard<std::mutex> lock(mu_);
  ++prefetched_;
}

uint64_t WalkAhead::prefetched() const {
  std::lock_guard<std::mutex> lock(mu_);
  return prefetched_;
}

}  // namespace stitchfs::fs
