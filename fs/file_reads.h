// FileReads: what every read of one regular file shares while the file is being read (its
// reader and the check of a read from start to end), found by inode on each read: the kernel
// sends no OPEN or RELEASE (each would cost a round trip per file of a tree walk), so a read
// carries no handle, and a view keeps the FileReads of its recently read files (FileReadsCache).
// FUSE-free.
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/base/lru.h"
#include "engine/base/random_access_file.h"
#include "engine/base/status_or.h"
#include "engine/read/content_check.h"
#include "fs/sequential_check.h"

namespace stitchfs::fs {

// Thread-safe.
class FileReads {
 public:
  using NewCheck = std::function<std::unique_ptr<engine::ContentCheck>()>;
  // `new_check` makes the check of one read of the whole file (null: the file has no bytes to
  // check); `known`: what an earlier whole read found (a mismatch fails the end again).
  FileReads(std::shared_ptr<const engine::RandomAccessFile> reader, NewCheck new_check,
            std::optional<engine::Status> known);

  const std::shared_ptr<const engine::RandomAccessFile>& reader() const { return reader_; }
  // The check that a read of `length` bytes at `offset` feeds (null when the file has none). A
  // read of the start after the check has seen reads begins a new one: a file read again from
  // its start (another reader, or pages the kernel let go) is checked again, and a mismatch
  // found stays found. Reads that came to an ended check up to kRecent before it (a direct
  // read's requests come at once, the one at 0 not always first) are read again by the new one.
  std::shared_ptr<SequentialCheck> CheckFor(uint64_t offset, uint64_t length = 0);

  static constexpr std::chrono::milliseconds kRecent{1000};
  static constexpr size_t kMaxRecent = 64;

 private:
  struct Recent {
    uint64_t offset, length;
    std::chrono::steady_clock::time_point at;
  };
  const std::shared_ptr<const engine::RandomAccessFile> reader_;
  const NewCheck new_check_;
  std::mutex mu_;
  std::shared_ptr<SequentialCheck> check_;  // Guarded by mu_, as is
  std::deque<Recent> recent_;               // the reads that came to it once it had ended.
};

// The FileReads of the most recently read files of one view, by inode (at most kKept; a file
// being read stays while its reads hold it). Thread-safe: sharded by inode, so that reads of
// different files rarely wait for one another.
class FileReadsCache {
 public:
  using Make = std::function<engine::StatusOr<std::shared_ptr<FileReads>>()>;
  static constexpr size_t kKept = 256;

  // The FileReads of `ino`, made by `make` when it is not kept (an error is not kept).
  engine::StatusOr<std::shared_ptr<FileReads>> Get(uint64_t ino, const Make& make) const;

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    std::mutex mu;
    engine::Lru<uint64_t, std::shared_ptr<FileReads>> kept;
  };
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace stitchfs::fs
