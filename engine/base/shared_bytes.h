// SharedBytes: read-only bytes together with what keeps them alive (a buffer, or a read-only
// mapping of a file), shared by copies. The bytes start 8-byte aligned, so tables of
// fixed-size records in them can be viewed in place rather than copied out.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

// Thread-safe (immutable).
class SharedBytes {
 public:
  SharedBytes() = default;

  // A copy of `s`.
  static SharedBytes Copy(std::string_view s);
  // `size` bytes at offset 0 of `fd`, read into a buffer of their own (kBackupDamaged if the
  // file is shorter, kIOError if reading fails; `name` names the file in errors).
  static StatusOr<SharedBytes> Read(int fd, size_t size, const std::string& name);
  // The first `size` bytes of `fd` mapped read-only (pages are read as they are touched, and
  // nothing is copied). Only for files that are replaced, never truncated, while in use (a
  // mapped file cut short faults whoever reads past its new end): files of the per-user cache.
  // `populate`: every page mapped at once (for bytes about to be read whole).
  static StatusOr<SharedBytes> Map(int fd, size_t size, const std::string& name,
                                   bool populate = false);

  // Drops this process's page-table entries of every mapping Map made and that is still alive
  // (madvise MADV_DONTNEED): the bytes stay in the page cache, shared with whoever else reads
  // the file, and come back with a minor fault when touched again. Nothing is lost: mappings are
  // read-only and private, never written. So that a long-lived reader (a mount) holds only what
  // it touched lately, not every page it ever touched, in its resident set. The bytes of the
  // mappings covered.
  static size_t ReleaseMappedPages();

  std::string_view view() const { return view_; }
  // Keeps the bytes alive for whoever holds views into them.
  const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  // An uninitialised, aligned buffer of `size` bytes, and where to write.
  static std::pair<SharedBytes, std::span<char>> Allocate(size_t size);

  std::shared_ptr<const void> owner_;
  std::string_view view_;
};

}  // namespace stitchfs::engine
