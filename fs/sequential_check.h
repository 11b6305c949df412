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
#include <string_view>
#include <vector>

#include "engine/base/random_access_file.h"
#include "engine/read/content_check.h"
#include "fs/read_buffer.h"

namespace stitchfs::fs {

// Reads kept for their turn: up to max_pending bytes per open file and
// SequentialCheck::kMaxPendingAll for all of them, and only for a read less than max_ahead
// ahead. A read that cannot be kept is dropped, and so are the reads kept before it (their
// memory given back): the check notes their ranges and, when the bytes before them were fed,
// reads them again from the file's reader (bytes a reader was handed are checked all the same).
// A reader whose reads leave holes (a seek, a random reader such as a query) is not checked:
// more than SequentialCheck::kMaxDropped separate ranges or max_fill bytes dropped, or a read of
// the end with bytes before it never read, stop the check of the file.
struct SequentialCheckBounds {
  size_t max_pending = 64 << 20;
  uint64_t max_ahead = 32 << 20;
  // The read of a file's last bytes, ahead of the reads before it, waits for them: while one
  // is being served, up to `wait`; for one to arrive when none is, `arrival`. Then it reads
  // what it still lacks itself, if every byte before it was or is being read (at most
  // max_fill bytes; the file is not checked beyond that).
  std::chrono::milliseconds wait{1000};
  std::chrono::milliseconds arrival{50};
  uint64_t max_fill = 64 << 20;
};

// Thread-safe: the kernel sends a file's reads in order but several at once, and other threads
// may serve them out of order.
class SequentialCheck {
 public:
  using Bounds = SequentialCheckBounds;
  static constexpr size_t kMaxPendingAll = 256 << 20;
  static constexpr size_t kMaxDropped = 64;
  // The bytes all checks keep now (kMaxPendingAll bounds it).
  static size_t KeptAll();

  // `reader`: the file's bytes, read again where reads were dropped (null: a dropped read
  // stops the check). `known`: the verdict of an earlier whole read of the same file (its reads
  // of the end fail again if it was a mismatch).
  SequentialCheck(std::unique_ptr<engine::ContentCheck> check,
                  std::shared_ptr<const engine::RandomAccessFile> reader,
                  std::optional<engine::Status> known = std::nullopt, Bounds bounds = Bounds())
      : check_(std::move(check)),
        reader_(std::move(reader)),
        bounds_(bounds),
        result_(std::move(known)) {}
  ~SequentialCheck();
  SequentialCheck(const SequentialCheck&) = delete;
  SequentialCheck& operator=(const SequentialCheck&) = delete;

  // The file's size.
  uint64_t size() const { return check_->size(); }
  // A read of `length` bytes at `offset` is being served (call before reading; then Accept,
  // AcceptAnswered or Cancel).
  void Begin(uint64_t offset, uint64_t length);
  // It failed: its bytes will not come.
  void Cancel(uint64_t offset);
  // The bytes a read at `offset` got, before they are handed out: the read of the file's end
  // (it waits for the bytes before it, or reads them). kBackupDamaged (naming the backup with
  // the bad bytes) if they complete the file and its checksum does not match, and for any later
  // read of the file's last bytes: that read must fail. The reader's error if bytes read again
  // could not be (`*found_now` stays false). OK otherwise, a read that leaves bytes unread
  // included (never an error). `*found_now`, if given, is set when this read completed the file
  // (the verdict is new).
  engine::Status Accept(uint64_t offset, std::string_view bytes, bool* found_now = nullptr);
  // Any other read, already answered: its first `length` bytes of `buffer`. Ahead of the reads
  // before it, it keeps the buffer for their turn (`buffer` is then empty: Reserve takes
  // another). Never throws: what it cannot do (memory, a failed read again) stops the check.
  // A mismatch if the file was completed now, by bytes read again after these (a read of the
  // end answered before, alone): too late to fail a read, but later reads of the end fail.
  engine::Status AcceptAnswered(uint64_t offset, ReadBuffer& buffer, size_t length) noexcept;
  // The same for bytes that are not in a ReadBuffer (an object store's read-ahead lends its
  // own): copied only if they must be kept.
  engine::Status AcceptAnswered(uint64_t offset, std::string_view bytes) noexcept;
  // The verdict of the whole file, once it was seen.
  std::optional<engine::Status> result() const;
  // No bytes were fed to the check and it has not stopped or ended: a read of the file's start
  // belongs to it, even while later reads are being served or kept (the kernel sends a file's
  // first reads at once, and the one of the start may come last).
  bool Unfed() const;
  // The check ended: it found its verdict, or it stopped.
  bool Over() const;
  // True if a read of `length` bytes at `offset` ends where reads answered before and not fed
  // (dropped) run to the file's end: a read of the end whose pages the kernel keeps (`tail`,
  // then `cat`), so this read is the last to reach the check and must be checked as the end. True
  // too, once a mismatch was found, for a read past the one that found it (Accept fails it).
  bool Completes(uint64_t offset, uint64_t length) const;
  // Where reads answered and not fed that run to the file's end begin (a read of the end
  // alone, for the next pass); size() if there are none.
  uint64_t DroppedEnd() const;
  // A read of `length` bytes at `offset` went to the pass before this one: its bytes are read
  // again when this check reaches them (as a read that could not be kept).
  void ReadElsewhere(uint64_t offset, uint64_t length) noexcept;

 private:
  struct Kept {
    ReadBuffer buffer;
    size_t length = 0;  // Of the read's bytes in `buffer`,
    size_t weight = 0;  // and of the memory it holds (its capacity): what the bounds count.
  };
  // True if a read being served starts in [next_, offset): the bytes before `offset` may come.
  bool GapBeingRead(uint64_t offset) const;
  // The read of the end came early: waits for the reads before it, and for bytes being fed to
  // be fed (at most twice `wait` in all). True if they came; false, with feeding_ still set, if
  // the bytes being fed took longer.
  bool WaitForGap(std::unique_lock<std::mutex>& lock, uint64_t offset);
  // Waits for bytes being fed to be fed, until `deadline`.
  void WaitFed(std::unique_lock<std::mutex>& lock, std::chrono::steady_clock::time_point deadline);
  // True if every byte in [next_, offset) was read (kept or dropped) or is being read, and at
  // most max_fill of them are not kept: the read of the end may read them again itself.
  bool MayFill(uint64_t offset) const;
  // Feeds the check from next_ on (`lock` held on entry and on return; hashing and reading
  // without it, feeding_ keeping other feeders out): `bytes` (read at `at`), kept reads, and
  // the reader's bytes where reads were dropped or, anywhere, below `fill_to`; until none of
  // these starts at next_. The reader's error if it failed.
  engine::Status Feed(std::unique_lock<std::mutex>& lock, uint64_t at, std::string_view bytes,
                      uint64_t fill_to);
  // Feed's work; Feed stops the check if it throws (the reader may).
  engine::Status FeedOrThrow(std::unique_lock<std::mutex>& lock, uint64_t at,
                             std::string_view bytes, uint64_t fill_to);
  // Forgets kept and dropped reads that end at or before next_.
  void ForgetFed() noexcept;
  // Reads [next_, to) from the reader into `into`, without the lock.
  engine::StatusOr<std::string_view> ReadAgain(std::unique_lock<std::mutex>& lock, uint64_t to,
                                               ReadBuffer& into);
  // AcceptAnswered of `bytes`, in `buffer` (handed over if kept) or not (copied then).
  engine::Status AcceptAnswered(uint64_t offset, std::string_view bytes,
                                ReadBuffer* buffer) noexcept;
  // The verdict, once bytes fed from an answered read reached the file's end (OK otherwise).
  engine::Status FinishIfWhole() noexcept;
  // Keeps `buffer` (a read at `offset` ahead of next_), counting all of its memory against the
  // bounds; false beyond them.
  bool Keep(uint64_t offset, ReadBuffer& buffer, size_t length);
  // Notes [offset, end) as read but not kept (merged with its neighbours); stops the check
  // beyond kMaxDropped ranges or max_fill bytes to read again.
  void Drop(uint64_t offset, uint64_t end);
  // A read could not be kept: the kept reads give their memory back and are read again too.
  void DropKept();
  // A read of the end at `offset` (to `end`) with bytes before it never read: noted as dropped
  // with the reads kept (the kernel keeps all their pages), so that a reader of the whole file
  // joining from its start checks it; no read is kept from then on (a reader of footers and
  // headers holds no memory). OK (unchecked).
  engine::Status EndAlone(uint64_t offset, uint64_t end);
  void Stop() noexcept;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  int waiters_ = 0;                              // Reads in WaitForGap.
  std::unique_ptr<engine::ContentCheck> check_;  // Guarded by mu_, as all below but the two
  const std::shared_ptr<const engine::RandomAccessFile> reader_;  // constants.
  const Bounds bounds_;
  std::multimap<uint64_t, uint64_t> reading_;  // Reads being served: offset, length.
  std::map<uint64_t, Kept> kept_;              // Reads ahead of next_, by offset.
  size_t kept_bytes_ = 0;
  std::map<uint64_t, uint64_t> dropped_;  // Reads ahead of next_ not kept: start, end (apart).
  uint64_t next_ = 0;                     // The offset the check needs next,
  bool feeding_ = false;  // unless bytes are being hashed or read again (they start at next_),
  uint64_t taken_ = 0;    // up to here (next_ when none is).
  bool stopped_ = false;
  bool end_alone_ = false;  // A read of the end came with bytes before it never read.
  // The offset of the read that found the verdict: reads after it fail with a mismatch too
  // (the kernel reads a failed read's pages again, in smaller reads).
  uint64_t fail_from_ = UINT64_MAX;
  std::optional<engine::Status> result_;  // Once the whole file was seen.
};

}  // namespace stitchfs::fs
