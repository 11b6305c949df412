// RandomAccessFile: the positional, cursor-free read interface every reader implements.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"

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
  // a failed system call is kIOError. (Clamps, then asks the file for exactly those bytes.)
  StatusOr<size_t> ReadAt(uint64_t offset, std::span<char> dst) const {
    const uint64_t total = size();
    if (offset >= total || dst.empty()) return size_t{0};
    const size_t n = static_cast<size_t>(std::min<uint64_t>(dst.size(), total - offset));
    RETURN_IF_ERROR(ReadExact(offset, dst.first(n)));
    return n;
  }

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

  // Capabilities a copy may use instead of reading the bytes through this process.
  // A descriptor of the very file, offsets alike, for in-kernel copies (copy_file_range); null
  // if there is none (not a local file). Keep it only for the copy.
  virtual StatusOr<std::shared_ptr<const UniqueFd>> KernelFd() const {
    return std::shared_ptr<const UniqueFd>();
  }
  // The stored object these bytes are, for a copy within the store that holds it: `kind` is
  // the tag of the backend that made it, which alone knows what `object` is; empty if none.
  struct StoredObject {
    const void* kind = nullptr;
    std::shared_ptr<const void> object;
  };
  virtual StoredObject Stored() const { return {}; }

  // Forgets the copies of this file's bytes kept outside the storage they come from (an object
  // store's block cache on disk, its read-ahead in memory), so that the next read fetches them
  // from the storage again; true if bytes read since the last call may have come from such a
  // copy. Called when the bytes read fail their checksum: the copy may be what is wrong (bytes
  // changed on the way that were kept).
  virtual bool DropCached() const { return false; }

 protected:
  // Fills all of `dst` with the bytes from `offset`: what ReadAt asks once it has clamped the
  // range (REQUIRES: dst not empty, offset + dst.size() <= size()); errors as ReadAt's.
  virtual Status ReadExact(uint64_t offset, std::span<char> dst) const = 0;
};

}  // namespace stitchfs::engine
