#include "engine/posix_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cerrno>
#include <memory>

namespace stitchfs::engine {

StatusOr<UniqueFd> OpenReadOnly(const std::string& path, int extra_flags) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | extra_flags);
  if (fd < 0) return Status::IOError("open " + path, errno);
  return UniqueFd(fd);
}

StatusOr<UniqueFd> OpenBeneath(int dir_fd, const std::string& relative) {
  struct open_how how = {};
  how.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, dir_fd, relative.c_str(), &how, sizeof(how));
  if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {
    // Older kernels (or seccomp filters) lack openat2; the names were validated lexically.
    fd = ::openat(dir_fd, relative.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  }
  if (fd < 0) return Status::IOError("open " + relative, errno);
  return UniqueFd(static_cast<int>(fd));
}

Status PreadFully(int fd, uint64_t offset, std::span<char> dst, const std::string& display_name) {
  size_t done = 0;
  while (done < dst.size()) {
    ssize_t n =
        ::pread(fd, dst.data() + done, dst.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("read " + display_name, errno);
    }
    if (n == 0) {
      return Status::BackupDamaged("data file " + display_name + " is truncated at offset " +
                                   std::to_string(offset + done));
    }
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
