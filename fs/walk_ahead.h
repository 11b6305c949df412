// WalkAhead: reading ahead across files for tree walks. tar, cp -a and rsync read a tree's files
// one after another in listing order; cold, each small file costs disk reads that the walker
// waits for one after another (its data file's inode, then its bytes). Once the walker is seen
// moving from one file to the next (a read at offset 0 of a file, or the listing of its folder,
// then a read of the file NextFile names after it), background threads open the next files' readers
// (FileReads, kept for the walker's reads) and ask the kernel to read their bytes into the page
// cache (RandomAccessFile::Prefetch), several at once, so that the disk works ahead of the
// walker. Nothing is handed out from here: the walker's reads are served and checked as any.
// Bounded: at most `files` files and `bytes` bytes ahead of the walker. FUSE-free.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "fs/namespace.h"

namespace stitchfs::fs {

struct WalkAheadLimits {
  size_t files = 64;             // Files ahead of the walker (0: off).
  uint64_t bytes = 32ull << 20;  // Bytes ahead of the walker.
  int threads = 4;               // Files opened at once (a disk serves several reads at a time).
};

// Thread-safe.
class WalkAhead {
 public:
  // `ns` must outlive this object.
  WalkAhead(const Namespace& ns, WalkAheadLimits limits);
  ~WalkAhead();
  WalkAhead(const WalkAhead&) = delete;
  WalkAhead& operator=(const WalkAhead&) = delete;

  // A read at offset 0 of file `ino` is being served: the walker is at `ino`.
  void Started(uint64_t ino);
  // Folder `dir` is being listed from its start: a walker is about to read its first file.
  void Listed(uint64_t dir);
  // Files prefetched so far (for tests and figures).
  uint64_t prefetched() const;

 private:
  struct Ahead {
    uint64_t ino;
    uint64_t size;
  };
  // The walker is at file `pos`, whose next file is `next`; `read`: it reads it (a listing alone
  // moves a walk on, but never starts one: `ls -R` reads no file).
  void At(uint64_t pos, std::optional<uint64_t> next, bool read);
  // Queues the files after the last queued one while within the limits. REQUIRES: mu_ held.
  void Fill();
  void Work();
  // Opens file `ino` and has its `size` bytes read ahead.
  void Fetch(uint64_t ino, uint64_t size);

  const Namespace& ns_;
  const WalkAheadLimits limits_;
  mutable std::mutex mu_;
  std::condition_variable work_;
  uint64_t last_ = 0;        // The last position seen; guarded by mu_, as all below.
  uint64_t expected_ = 0;    // The file after it.
  uint64_t walker_ = 0;      // The file being walked (0: no walk).
  uint64_t frontier_ = 0;    // The last file looked at for queueing.
  std::deque<Ahead> ahead_;  // Files after walker_, queued or done, in order.
  uint64_t ahead_bytes_ = 0;
  std::deque<Ahead> todo_;  // Of those, the ones not taken by a thread yet.
  uint64_t prefetched_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace stitchfs::fs
