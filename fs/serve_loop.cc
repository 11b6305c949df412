#include "fs/serve_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace stitchfs::fs {
namespace {

// Longest sleep of the spinner and the watchdog before they look for an exit (a signal handler
// ends the session by setting a flag); helpers are woken by Stop().
constexpr std::chrono::milliseconds kRecheck{500};
constexpr std::chrono::milliseconds kTick{1};  // Watchdog period while requests flow.
constexpr int64_t kActiveNs = 50'000'000;      // "Requests flow": one in the last 50 ms.

int64_t NowNs() {
  timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// True if a request waits (or the device has an error to report).
bool Pending(int fd, int timeout_ms = 0) {
  pollfd p = {fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) > 0;
}

class Loop {
 public:
  Loop(fuse_session* se, long spin_us)
      : se_(se), fd_(fuse_session_fd(se)), spin_ns_(int64_t{spin_us} * 1000) {}

  void Spinner() {
    fuse_buf buf = {};
    while (!Over()) {
      int64_t until = NowNs() + spin_ns_;
      while (!Pending(fd_) && !Over()) {
        if (NowNs() >= until && Pending(fd_, static_cast<int>(kRecheck.count()))) break;
      }
      if (!Serve(&buf)) break;
    }
    std::free(buf.mem);
  }

  void Helper(const std::function<void()>& idle) {
    fuse_buf buf = {};
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        helpers_cv_.wait(lock, [this] { return wanted_ > 0 || Over(); });
        if (Over()) break;
        --wanted_;
      }
      while (Pending(fd_) && Serve(&buf)) {
      }
      if (idle) idle();
    }
    std::free(buf.mem);
  }

  void Watchdog() {
    bool waited_before = false;
    std::unique_lock<std::mutex> lock(mu_);
    while (!Over()) {
      const bool active = NowNs() - last_request_ns_.load() < kActiveNs;
      watchdog_cv_.wait_for(lock, active ? kTick : kRecheck);
      const bool waiting = Pending(fd_);
      if (waiting && waited_before) {  // A request has waited a whole tick: help.
        ++wanted_;
        helpers_cv_.notify_one();
      }
      waited_before = waiting;
    }
  }

  void Stop() {
    fuse_session_exit(se_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    helpers_cv_.notify_all();
    watchdog_cv_.notify_all();
  }
  bool failed() const { return failed_.load(); }

 private:
  bool Over() const { return stopped_.load() || fuse_session_exited(se_); }

  // Reads one request (the device is non-blocking: another thread may have taken it) and
  // serves it. False once the session is over.
  bool Serve(fuse_buf* buf) {
    const int res = fuse_session_receive_buf(se_, buf);
    if (res == -EAGAIN || res == -EINTR) return !Over();
    if (res <= 0) {
      if (res < 0) failed_ = true;
      Stop();
      return false;
    }
    const int64_t now = NowNs();
    if (now - last_request_ns_.exchange(now) >= kActiveNs) {
      watchdog_cv_.notify_one();  // Idle until now: the watchdog starts ticking.
    }
    fuse_session_process_buf(se_, buf);
    return true;
  }

  fuse_session* se_;
  const int fd_;
  const int64_t spin_ns_;
  std::mutex mu_;
  std::condition_variable helpers_cv_, watchdog_cv_;
  int wanted_ = 0;  // Helpers asked for; guarded by mu_.
  std::atomic<bool> stopped_{false}, failed_{false};
  std::atomic<int64_t> last_request_ns_{0};
};

}  // namespace

int ServeSpinning(fuse_session* se, int helpers, long spin_us, const std::function<void()>& idle) {
  const int fd = fuse_session_fd(se);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  Loop loop(se, spin_us);
  std::vector<std::thread> threads;
  threads.emplace_back([&loop] { loop.Watchdog(); });
  for (int i = 0; i < helpers; ++i) threads.emplace_back([&loop, &idle] { loop.Helper(idle); });
  loop.Spinner();
  loop.Stop();
  for (auto& t : threads) t.join();
  fuse_session_reset(se);
  return loop.failed() ? -1 : 0;
}

}  // namespace stitchfs::fs
