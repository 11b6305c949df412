// FdFile: an open regular file of a known size, read positionally.
#pragma once

#include <algorithm>
#include <string>

#include "engine/base/posix_file.h"
#include "engine/base/random_access_file.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {

// Thread-safe (pread only). Reads within `size`; a file that turns out shorter is kBackupDamaged
// naming `name`.
class FdFile final : public RandomAccessFile {
 public:
  FdFile(UniqueFd fd, uint64_t size, std::string name)
      : fd_(std::move(fd)), size_(size), name_(std::move(name)) {}
  uint64_t size() const override { return size_; }
  int fd() const { return fd_.get(); }

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    return PreadFully(fd_.get(), offset, dst, name_);
  }

 private:
  UniqueFd fd_;
  uint64_t size_;
  std::string name_;
};

}  // namespace stitchfs::engine
