#include "engine/base/polled_read.h"

#include <sys/uio.h>
#include <sys/utsname.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>

#include "engine/base/posix_file.h"

namespace stitchfs::engine {
namespace {

std::atomic<uint64_t> max_bytes{0};
std::atomic<int64_t> budget_us{0};
std::atomic<bool> polling{false};  // A read is polling now (one at a time).
std::atomic<uint64_t> polled{0};
thread_local uint64_t request_bytes = 0;  // The outermost ReadRequestScope's, 0 outside one.

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Linux 5.9 and later start the disk read of what a RWF_NOWAIT read lacks; earlier kernels
// answer EAGAIN and read nothing, so polling would only wait out the budget.
bool NowaitStartsReads() {
  utsname u;
  int major = 0, minor = 0;
  if (::uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 5 || (major == 5 && minor >= 9);
}

// Polls for [offset + *done, offset + dst.size()) until it is all read, the file ends, the
// file system cannot answer without waiting, or `budget` is spent.
void Poll(int fd, uint64_t offset, std::span<char> dst, int64_t budget, size_t* done) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point until{};  // Set at the first answer that has to wait.
  while (*done < dst.size()) {
    iovec v{dst.data() + *done, dst.size() - *done};
    const ssize_t n = ::preadv2(fd, &v, 1, static_cast<off_t>(offset + *done), RWF_NOWAIT);
    if (n > 0) {
      *done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno != EAGAIN) return;  // The end, or no polling here: pread tells.
    const Clock::time_point now = Clock::now();
    if (until == Clock::time_point{}) {
      until = now + std::chrono::microseconds(budget);
      polled.fetch_add(1, std::memory_order_relaxed);
    }
    if (now >= until) return;
    Pause();
  }
}

}  // namespace

void SetReadPolling(const ReadPolling& p) {
  const bool on = p.budget.count() > 0 && NowaitStartsReads();
  max_bytes.store(p.max_bytes, std::memory_order_relaxed);
  budget_us.store(on ? std::min<int64_t>(p.budget.count(), kMaxReadPollUs) : 0,
                  std::memory_order_relaxed);
}

ReadRequestScope::ReadRequestScope(uint64_t bytes) : outermost_(request_bytes == 0) {
  if (outermost_) request_bytes = std::max<uint64_t>(bytes, 1);
}

ReadRequestScope::~ReadRequestScope() {
  if (outermost_) request_bytes = 0;
}

uint64_t PolledReads() { return polled.load(std::memory_order_relaxed); }

Status PolledRead(int fd, uint64_t offset, std::span<char> dst, const std::string& display_name) {
  const int64_t budget = budget_us.load(std::memory_order_relaxed);
  const uint64_t most = max_bytes.load(std::memory_order_relaxed);
  size_t done = 0;
  const uint64_t judged = std::max<uint64_t>(request_bytes, dst.size());
  if (budget > 0 && (most == 0 || judged <= most) &&
      !polling.exchange(true, std::memory_order_acquire)) {
    Poll(fd, offset, dst, budget, &done);
    polling.store(false, std::memory_order_release);
  }
  return PreadFully(fd, offset + done, dst.subspan(done), display_name);
}

}  // namespace stitchfs::engine
