// SequentialCheck: one open file's reads, fed to a ContentCheck in file order, so that a file
// read from its start to its end through the mount is checked against its manifest's checksum
// and the read that completes a file whose bytes are not the backup's fails. FUSE-free.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "engine/read/content_check.h"

namespace stitchfs::fs {

// Thread-safe: the kernel sends a file's reads in order but several at once, and other threads
// may serve them out of order.
class SequentialCheck {
 public:
  // A read ahead of the next offset keeps a copy of its bytes, up to this many in all, until
  // the reads before it come; beyond that the check stops.
  static constexpr size_t kMaxPending = 64 << 20;
  // The read of a file's last bytes, ahead of the reads before it, waits for them: while one
  // is being served, up to kWait; for one to arrive when none is, kArrival.
  static constexpr std::chrono::milliseconds kWait{1000};
  static constexpr std::chrono::milliseconds kArrival{50};

  // `known`: the verdict of an earlier whole read of the same file (its reads of the end fail
  // again if it was a mismatch).
  explicit SequentialCheck(std::unique_ptr<engine::ContentCheck> check,
                           std::optional<engine::Status> known = std::nullopt)
      : check_(std::move(check)), result_(std::move(known)) {}

  // A read at `offset` is being served (call before reading; Accept or Cancel after).
  void Begin(uint64_t offset);
  // It failed: its bytes will not come.
  void Cancel(uint64_t offset);
  // The bytes the read at `offset` got, before they are handed out. kBackupDamaged (naming the
  // backup with the bad bytes) if they complete the file and its checksum does not match, and
  // for any later read of the file's last bytes: that read must fail. OK otherwise. Reads that
  // leave bytes unread (a seek, pages already cached) stop the check for this open file; that
  // is never an error.
  engine::Status Accept(uint64_t offset, std::string_view bytes);
  // The verdict of the whole file, once it was seen.
  std::optional<engine::Status> result() const;

 private:
  // True if a read being served starts in [next_, offset): the bytes before `offset` may come.
  bool GapBeingRead(uint64_t offset) const;
  // The read of the end came early: waits for the reads before it. True if they came.
  bool WaitForGap(std::unique_lock<std::mutex>& lock, uint64_t offset);
  // Feeds `bytes` (at next_), then every pending read that follows on.
  void Feed(std::string_view bytes);
  void Stop();

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::unique_ptr<engine::ContentCheck> check_;  // Guarded by mu_, as all below.
  std::multiset<uint64_t> reading_;              // Offsets of reads being served.
  std::map<uint64_t, std::string> pending_;      // Bytes of reads ahead of next_.
  size_t pending_bytes_ = 0;
  uint64_t next_ = 0;  // The offset the check needs next.
  bool stopped_ = false;
  std::optional<engine::Status> result_;  // Once the whole file was seen.
};

}  // namespace stitchfs::fs
