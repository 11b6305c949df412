// PageTrim: a mount's resident set kept to what it touched lately. The manifests a mount reads
// are mapped (the manifest cache's files), and every page a tree walk touches would stay in the
// daemon's resident set for as long as it runs, though the page cache holds those bytes anyway.
// Half a second after the mount was last busy, and every half second while it stays busy, the
// mapped pages are released (engine::SharedBytes::ReleaseMappedPages); the next touch maps them
// back from the page cache (a minor fault). An idle mount wakes no thread. FUSE-free.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace stitchfs::fs {

// Thread-safe.
class PageTrim {
 public:
  explicit PageTrim(std::chrono::milliseconds period = std::chrono::milliseconds(500));
  ~PageTrim();
  PageTrim(const PageTrim&) = delete;
  PageTrim& operator=(const PageTrim&) = delete;

  // A request is being served. Cheap: a load of a flag, written only when it was clear.
  void Busy() {
    if (!busy_.load(std::memory_order_relaxed) && !busy_.exchange(true)) Wake();
  }
  // How many times the pages were released (for tests).
  uint64_t releases() const { return releases_.load(); }

 private:
  void Wake();
  void Run();

  const std::chrono::milliseconds period_;
  std::atomic<bool> busy_{false};
  std::atomic<uint64_t> releases_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;  // Last: started once the rest is set up.
};

}  // namespace stitchfs::fs
