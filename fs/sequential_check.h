// SequentialCheck: one open file's reads, fed to a ContentCheck in file order, so that a file
// read from its start to its end through the mount is checked against its manifest's checksum
// and the read that completes a file whose bytes are not the backup's fails. FUSE-free.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>

#include "engine/read/content_check.h"

namespace stitchfs::fs {

// Thread-safe: the kernel sends a file's reads in order but several at once, and other threads
// may serve them out of order.
class SequentialCheck {
 public:
  // How long a read ahead of the next offset waits for a read before it that is being served,
  // and for one to arrive when none is (a read the kernel sent first but another thread has not
  // picked up yet).
  static constexpr std::chrono::milliseconds kWait{200};
  static constexpr std::chrono::milliseconds kArrival{2};

  explicit SequentialCheck(std::unique_ptr<engine::ContentCheck> check)
      : check_(std::move(check)) {}

  // A read at `offset` is being served (call before reading; Accept or Cancel after).
  void Begin(uint64_t offset);
  // It failed: its bytes will not come.
  void Cancel(uint64_t offset);
  // The bytes the read at `offset` got, before they are handed out. kBackupDamaged (naming the
  // backup with the bad bytes) if they complete the file and its checksum does not match, and
  // for any later read of the file's last bytes: that read must fail. OK otherwise. A read that
  // does not come next in order (a seek, pages already cached) stops the check for this open
  // file; it is never an error.
  engine::Status Accept(uint64_t offset, std::string_view bytes);

 private:
  // True if a read being served starts in [next_, offset): the bytes before `offset` may come.
  bool GapBeingRead(uint64_t offset) const;

  std::mutex mu_;
  std::condition_variable changed_;
  std::unique_ptr<engine::ContentCheck> check_;  // Guarded by mu_, as all below.
  std::multiset<uint64_t> reading_;              // Offsets of reads being served.
  uint64_t next_ = 0;                            // The offset the check needs next.
  bool stopped_ = false;
  std::optional<engine::Status> result_;  // Once the whole file was seen.
};

}  // namespace stitchfs::fs
