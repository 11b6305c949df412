#include "fs/page_trim.h"

#include "engine/base/shared_bytes.h"

namespace stitchfs::fs {

PageTrim::PageTrim(std::chrono::milliseconds period)
    : period_(period), thread_([this] { Run(); }) {}

PageTrim::~PageTrim() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void PageTrim::Wake() {
  std::lock_guard<std::mutex> lock(mu_);  // (So that the wait below cannot miss it.)
  cv_.notify_all();
}

void PageTrim::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || busy_.load(); });
    if (cv_.wait_for(lock, period_, [this] { return stop_; })) return;
    busy_.store(false);  // Requests from here on wake the next round.
    lock.unlock();
    engine::SharedBytes::ReleaseMappedPages();
    releases_.fetch_add(1);
    lock.lock();
  }
}

}  // namespace stitchfs::fs
