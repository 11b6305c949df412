#include "engine/base/polled_read.h"

#include <sys/uio.h>

#include <atomic>
#include <cerrno>

#include "engine/base/posix_file.h"

namespace stitchfs::engine {
namespace {

std::atomic<uint64_t> max_bytes{0};
std::atomic<int64_t> budget_us{0};

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void SetReadPolling(const ReadPolling& polling) {
  max_bytes.store(polling.max_bytes, std::memory_order_relaxed);
  budget_us.store(polling.budget.count(), std::memory_order_relaxed);
}

Status PolledRead(int fd, uint64_t offset, std::span<char> dst, const std::string& display_name) {
  const int64_t budget = budget_us.load(std::memory_order_relaxed);
  const uint64_t most = max_bytes.load(std::memory_order_relaxed);
  if (budget <= 0 || (most > 0 && dst.size() > most)) {
    return PreadFully(fd, offset, dst, display_name);
  }
  using Clock = std::chrono::steady_clock;
  Clock::time_point until{};  // Set at the first answer that has to wait.
  size_t done = 0;
  while (done < dst.size()) {
    iovec v{dst.data() + done, dst.size() - done};
    const ssize_t n = ::preadv2(fd, &v, 1, static_cast<off_t>(offset + done), RWF_NOWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno != EAGAIN) break;  // The end, or no polling here: pread tells.
    const Clock::time_point now = Clock::now();
    if (until == Clock::time_point{}) until = now + std::chrono::microseconds(budget);
    if (now >= until) break;
    Pause();
  }
  return PreadFully(fd, offset + done, dst.subspan(done), display_name);
}

}  // namespace stitchfs::engine
