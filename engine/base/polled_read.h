// PolledRead: a small positional read of a local file that waits for the disk by polling the
// page cache instead of sleeping. On a virtual machine, waking a thread that slept through a
// disk read costs an interrupt and an exit to the hypervisor (about 12 µs here, a quarter of a
// 4 KiB read from a cold disk); a serving thread that already polls for its next request (the
// mount's spin_us) can poll for its read's pages too. Off unless a process turns it on, and on
// kernels before Linux 5.9 (whose RWF_NOWAIT reads start no disk read). One read polls at a
// time: others sleep as usual, so polling never takes more than one CPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "engine/base/status.h"

namespace stitchfs::engine {

struct ReadPolling {
  uint64_t max_bytes = 0;              // Reads longer than this sleep as usual (0: all of them).
  std::chrono::microseconds budget{};  // How long a read polls before it sleeps.
};

// Sets how this process's PolledRead calls poll (process-wide; call before reading starts). The
// budget is capped at kMaxReadPollUs.
inline constexpr int64_t kMaxReadPollUs = 1000;
void SetReadPolling(const ReadPolling& polling);

// How many reads polled for pages not yet there, so far (for tests).
uint64_t PolledReads();

// Within its lifetime, PolledRead calls on this thread judge max_bytes by `bytes`, the length
// of the whole read they are pieces of (a stitched file's read, made of one read per segment),
// not by their own length: a long read sleeps however small its pieces. The outermost scope of
// a thread counts, and a piece longer than it is judged by its own length.
class ReadRequestScope {
 public:
  explicit ReadRequestScope(uint64_t bytes);
  ~ReadRequestScope();
  ReadRequestScope(const ReadRequestScope&) = delete;
  ReadRequestScope& operator=(const ReadRequestScope&) = delete;

 private:
  bool outermost_;
};

// PreadFully's contract (all of `dst` from `offset`, kBackupDamaged if the file ends first,
// kIOError naming `display_name`). A read of at most max_bytes (within a ReadRequestScope: of a
// request of at most that many bytes), when no other read is polling, first takes what the page
// cache holds without waiting (preadv2 RWF_NOWAIT, which also starts the disk reads of the rest),
// then asks again until its pages arrive or the budget is spent, then waits in an ordinary pread.
// Files whose file system cannot answer without waiting (tmpfs, NFS, FUSE) are read as usual.
Status PolledRead(int fd, uint64_t offset, std::span<char> dst, const std::string& display_name);

}  // namespace stitchfs::engine
