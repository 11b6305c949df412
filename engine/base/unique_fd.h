// UniqueFd: the one owner of a file descriptor.
#pragma once

#include <unistd.h>

#include <utility>

#include "engine/base/status.h"

namespace stitchfs::engine {

// Move-only owner of an fd; closes it on destruction (errors ignored: for read-only fds and
// for cleanup paths). Writers call Close() and check it. No implicit conversion to int.
// Thread-compatible.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(-1); }

  explicit operator bool() const { return fd_ >= 0; }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void Reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Closes the fd and reports a failure (which can mean lost written data).
  Status Close(const char* what) {
    int fd = release();
    if (fd >= 0 && ::close(fd) != 0) return Status::IOError(std::string("close ") + what, errno);
    return Status::OK();
  }

 private:
  int fd_ = -1;
};

}  // namespace stitchfs::engine
