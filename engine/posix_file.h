// PosixFile: a RandomAccessFile over one open file of a backup (a data file), and the
// helpers that open files safely beneath a backup folder.
#pragma once

#include <memory>
#include <string>

#include "engine/random_access_file.h"
#include "engine/unique_fd.h"

namespace stitchfs::engine {

// Opens `path` (absolute or relative to the cwd) read-only, close-on-exec.
StatusOr<UniqueFd> OpenReadOnly(const std::string& path, int extra_flags = 0);

// Opens `relative` beneath the folder `dir_fd` for reading, refusing to follow any symlink or
// to leave the folder (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the kernel has it,
// else openat with O_NOFOLLOW on the last component; names are validated lexically first).
StatusOr<UniqueFd> OpenBeneath(int dir_fd, const std::string& relative);

// A positional reader over an open fd whose length was taken at open (fstat). Reads loop over
// pread (EINTR and partial reads retried). A file that turns out shorter than that length
// (truncated after open) gives kBackupDamaged naming `display_name`. Thread-safe.
class PosixFile final : public RandomAccessFile {
 public:
  // Takes ownership of `fd`; `display_name` is used in messages.
  static StatusOr<std::unique_ptr<PosixFile>> FromFd(UniqueFd fd, std::string display_name);

  StatusOr<size_t> ReadAt(uint64_t offset, std::span<char> dst) const override;
  uint64_t size() const override { return size_; }
  const std::string& display_name() const { return name_; }
  int fd() const { return fd_.get(); }

 private:
  PosixFile(UniqueFd fd, std::string name, uint64_t size)
      : fd_(std::move(fd)), name_(std::move(name)), size_(size) {}
  UniqueFd fd_;
  std::string name_;
  uint64_t size_;
};

// Reads `[offset, offset + dst.size())` of `fd` completely; kBackupDamaged if the file ends first.
Status PreadFully(int fd, uint64_t offset, std::span<char> dst, const std::string& display_name);

}  // namespace stitchfs::engine
