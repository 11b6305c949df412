// RandomAccessFile: the positional, cursor-free read interface every reader implements.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

// Thread-safe: all methods are const and there is no cursor.
class RandomAccessFile {
 public:
  RandomAccessFile() = default;
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;
  virtual ~RandomAccessFile() = default;

  // Reads into `dst` from `offset`. Returns exactly min(dst.size(), size() - offset) bytes
  // (0 at or past the end): a read is short only at size(), never in the middle, because FUSE
  // would zero-fill a short reply. A backing file that ends early is kBackupDamaged;
  // a failed system call is kIOError.
  virtual StatusOr<size_t> ReadAt(uint64_t offset, std::span<char> dst) const = 0;

  // The logical length of the file.
  virtual uint64_t size() const = 0;

  // A hint that a sequential reader will soon read about `length` bytes on from `offset` (a
  // stitched file's reader nearing the end of one segment, about to enter the next). A file
  // fetched from afar may start fetching there; the default does nothing.
  virtual void Prefetch(uint64_t /*offset*/, uint64_t /*length*/) const {}

  // Bytes this file already holds in memory, lent instead of copied (a FUSE reply can be sent
  // from them): exactly min(n, size() - offset) bytes from `offset`, and the owner that keeps
  // them alive; or an empty loan when it cannot lend them (the caller reads with ReadAt).
  struct Loan {
    std::string_view bytes;
    std::shared_ptr<const void> owner;
  };
  virtual StatusOr<Loan> Lend(uint64_t /*offset*/, size_t /*n*/) const { return Loan{}; }
};

}  // namespace stitchfs::engine
