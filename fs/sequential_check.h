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
#include <string_view>
#include <vector>

#include "engine/read/content_check.h"

namespace stitchfs::fs {

// A buffer a read's bytes are read into. A read served ahead of the ones before it hands its
// buffer to the check, which keeps it until their turn (no copy, no wait) and gives it back to
// a pool the next reads take theirs from.
// Unmaps a ReadBuffer's memory, which is mapped for it alone (whole 64 KiB units), so that a
// buffer freed is given back to the system at once instead of staying in the heap.
struct UnmapBuffer {
  size_t length = 0;
  void operator()(char* p) const noexcept;
};

struct ReadBuffer {
  std::unique_ptr<char[], UnmapBuffer> data;
  size_t capacity = 0;
  // At least `size` bytes: the same buffer, else one from the pool, else a new one
  // (std::bad_alloc if there is no memory).
  void Reserve(size_t size);
};

// Gives `buffer` to the pool ReadBuffer::Reserve takes from (or frees it: the pool keeps a few).
void ReturnToPool(ReadBuffer buffer) noexcept;

// The calling thread's buffer for reads, and the same given back to the pool (a thread that
// goes idle, so that a burst of reads on many threads does not keep a buffer on each).
ReadBuffer& ThreadReadBuffer();
void ReleaseThreadReadBuffer() noexcept;

// Thread-safe: the kernel sends a file's reads in order but several at once, and other threads
// may serve them out of order.
class SequentialCheck {
 public:
  // Reads kept for their turn: up to kMaxPending bytes per open file and kMaxPendingAll for all
  // of them, and only for a read less than kMaxAhead ahead (a random reader, such as a query,
  // never fills the gap); beyond that the check of the file stops.
  static constexpr size_t kMaxPending = 64 << 20;
  static constexpr size_t kMaxPendingAll = 256 << 20;
  static constexpr uint64_t kMaxAhead = 32 << 20;
  // The read of a file's last bytes, ahead of the reads before it, waits for them: while one is
  // being served, up to kWait; for one to arrive when none is, kArrival.
  static constexpr std::chrono::milliseconds kWait{1000};
  static constexpr std::chrono::milliseconds kArrival{50};

  // `known`: the verdict of an earlier whole read of the same file (its reads of the end fail
  // again if it was a mismatch).
  explicit SequentialCheck(std::unique_ptr<engine::ContentCheck> check,
                           std::optional<engine::Status> known = std::nullopt)
      : check_(std::move(check)), result_(std::move(known)) {}
  ~SequentialCheck();
  SequentialCheck(const SequentialCheck&) = delete;
  SequentialCheck& operator=(const SequentialCheck&) = delete;

  // The file's size.
  uint64_t size() const { return check_->size(); }
  // A read at `offset` is being served (call before reading; then Accept, AcceptAnswered or
  // Cancel).
  void Begin(uint64_t offset);
  // It failed: its bytes will not come.
  void Cancel(uint64_t offset);
  // The bytes a read at `offset` got, before they are handed out: the read of the file's end
  // (it waits for the bytes before it). kBackupDamaged (naming the backup with the bad bytes)
  // if they complete the file and its checksum does not match, and for any later read of the
  // file's last bytes: that read must fail. OK otherwise. Reads that leave bytes unread (a seek,
  // pages already cached) stop the check for this open file; that is never an error.
  // `*found_now`, if given, is set when this read completed the file (the verdict is new).
  engine::Status Accept(uint64_t offset, std::string_view bytes, bool* found_now = nullptr);
  // Any other read, already answered: its first `length` bytes of `buffer`. Ahead of the reads
  // before it, it keeps the buffer for their turn (`buffer` is then empty: Reserve takes
  // another). Never throws: what it cannot do (memory) stops the check.
  void AcceptAnswered(uint64_t offset, ReadBuffer& buffer, size_t length) noexcept;
  // The same for bytes that are not in a ReadBuffer (an object store's read-ahead lends its
  // own): copied only if they must be kept.
  void AcceptAnswered(uint64_t offset, std::string_view bytes) noexcept;
  // The verdict of the whole file, once it was seen.
  std::optional<engine::Status> result() const;
  // No bytes were fed to the check and it has not stopped or ended: a read of the file's start
  // belongs to it, even while later reads are being served or kept (the kernel sends a file's
  // first reads at once, and the one of the start may come last).
  bool Unfed() const;

 private:
  struct Kept {
    ReadBuffer buffer;
    size_t length = 0;  // Of the read's bytes in `buffer`,
    size_t weight = 0;  // and of the memory it holds (its capacity): what the bounds count.
  };
  // True if a read being served starts in [next_, offset): the bytes before `offset` may come.
  bool GapBeingRead(uint64_t offset) const;
  // The read of the end came early: waits for the reads before it. True if they came.
  bool WaitForGap(std::unique_lock<std::mutex>& lock, uint64_t offset);
  // Feeds `bytes` (at next_), then every kept read that follows on, hashing without the lock
  // (`lock` held on entry and on return; feeding_ keeps other feeders out meanwhile).
  void FeedFrom(std::unique_lock<std::mutex>& lock, std::string_view bytes);
  // AcceptAnswered of `bytes`, in `buffer` (handed over if kept) or not (copied then).
  void AcceptAnswered(uint64_t offset, std::string_view bytes, ReadBuffer* buffer) noexcept;
  // Keeps `buffer` (a read at `offset` ahead of next_), counting all of its memory against the
  // bounds; false beyond them.
  bool Keep(uint64_t offset, ReadBuffer& buffer, size_t length);
  void Stop() noexcept;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  int waiters_ = 0;                              // Reads in WaitForGap.
  std::unique_ptr<engine::ContentCheck> check_;  // Guarded by mu_, as all below.
  std::multiset<uint64_t> reading_;              // Offsets of reads being served.
  std::map<uint64_t, Kept> kept_;                // Reads ahead of next_, by offset.
  size_t kept_bytes_ = 0;
  uint64_t next_ = 0;     // The offset the check needs next,
  bool feeding_ = false;  // unless a read's bytes are being hashed (they start at next_),
  uint64_t taken_ = 0;    // up to here (next_ when none is).
  bool stopped_ = false;
  std::optional<engine::Status> result_;  // Once the whole file was seen.
};

}  // namespace stitchfs::fs
