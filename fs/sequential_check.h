// SequentialCheck: one open file's reads, fed to a ContentCheck in file order, so that a file
// read from its start to its end through the mount is checked against its manifest's checksum
// and the read that completes a file whose bytes are not the backup's fails. FUSE-free.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "engine/read/content_check.h"

namespace stitchfs::fs {

// Thread-safe: the kernel sends a file's reads in order but several at once, and other threads
// may serve them out of order.
class SequentialCheck {
 public:
  // How long a read ahead of the next offset waits for the reads before it.
  static constexpr std::chrono::milliseconds kWait{200};

  explicit SequentialCheck(std::unique_ptr<engine::ContentCheck> check)
      : check_(std::move(check)) {}

  // The bytes a read at `offset` got, before they are handed out. kBackupDamaged (naming the
  // backup with the bad bytes) if they complete the file and its checksum does not match, and
  // for any later read of the file's last bytes: that read must fail. OK otherwise. A read that
  // is not the next in order after waiting kWait (a seek, pages already cached) stops the check
  // for this open file; it is never an error.
  engine::Status Accept(uint64_t offset, std::string_view bytes);

 private:
  std::mutex mu_;
  std::condition_variable advanced_;
  std::unique_ptr<engine::ContentCheck> check_;  // Guarded by mu_.
  uint64_t next_ = 0;                            // The offset the check needs next.
  bool stopped_ = false;
  std::optional<engine::Status> result_;  // Once the whole file was seen.
};

}  // namespace stitchfs::fs
