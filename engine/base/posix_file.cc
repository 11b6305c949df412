#include "engine/base/posix_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

namespace stitchfs::engine {

StatusOr<UniqueFd> OpenBeneath(int dir_fd, const std::string& relative, int extra_flags) {
  struct open_how how = {};
  // O_PATH opens nothing (and openat2 refuses other flags with it).
  const int flags =
      O_RDONLY | O_CLOEXEC | O_NOFOLLOW | ((extra_flags & O_PATH) ? 0 : O_NONBLOCK) | extra_flags;
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, dir_fd, relative.c_str(), &how, sizeof(how));
  if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {
    // Older kernels (or seccomp filters, as older container runtimes') lack openat2.
    return OpenByComponents(dir_fd, relative, flags);
  }
  if (fd < 0) return Status::IOError("open " + relative, errno);
  return UniqueFd(static_cast<int>(fd));
}

StatusOr<UniqueFd> OpenByComponents(int dir_fd, const std::string& relative, int flags) {
  UniqueFd dir;  // The folder reached so far (dir_fd itself at first).
  size_t at = 0;
  for (size_t slash; (slash = relative.find('/', at)) != std::string::npos; at = slash + 1) {
    const std::string name = relative.substr(at, slash - at);
    if (name.empty() || name == "." || name == "..") {
      return Status::IOError("open " + relative + ": not a plain path beneath its folder", EXDEV);
    }
    // O_PATH | O_NOFOLLOW opens a symlink itself, which O_DIRECTORY then refuses (ENOTDIR).
    const int at_fd = dir ? dir.get() : dir_fd;
    const int next = ::openat(at_fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int err = errno;
      struct stat st;  // A symlink is ELOOP, as openat2 says, not "not a folder".
      if (err == ENOTDIR && ::fstatat(at_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        err = ELOOP;
      }
      return Status::IOError("open " + relative, err);
    }
    dir = UniqueFd(next);
  }
  const std::string last = relative.substr(at);
  if (last.empty() || last == "." || last == "..") {
    return Status::IOError("open " + relative + ": not a plain path beneath its folder", EXDEV);
  }
  const int fd = ::openat(dir ? dir.get() : dir_fd, last.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::IOError("open " + relative, errno);
  return UniqueFd(fd);
}

Status WriteFully(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("write " + what, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

StatusOr<std::string> ReadLinkWhole(int dir_fd, const char* name, size_t size_hint) {
  constexpr size_t kMost = size_t{1} << 16;
  std::string target(std::clamp<size_t>(size_hint + 1, 256, kMost + 1), '\0');
  for (;;) {
    const ssize_t n = ::readlinkat(dir_fd, name, target.data(), target.size());
    if (n < 0) return Status::IOError("readlink", errno);
    if (static_cast<size_t>(n) < target.size()) {  // Not filled: the whole target.
      target.resize(static_cast<size_t>(n));
      return target;
    }
    if (target.size() > kMost) return Status::InvalidArgument("a symlink target over 64 KiB");
    target.resize(std::min(target.size() * 2, kMost + 1));
  }
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

// One component at a time, so a symlink planted in the tree cannot redirect writes elsewhere.
StatusOr<UniqueFd> MakeDirsBeneath(int root, std::string_view rel, const BeforeMaking& before) {
  UniqueFd cur(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  if (!cur) return Status::IOError("dup", errno);
  size_t start = 0;
  while (start < rel.size()) {
    if (before) RETURN_IF_ERROR(before(cur.get(), rel.substr(0, start == 0 ? 0 : start - 1)));
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    const std::string part(rel.substr(start, end - start));
    if (::mkdirat(cur.get(), part.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IOError("mkdir " + std::string(rel.substr(0, end)), errno);
    }
    UniqueFd next(
        ::openat(cur.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return Status::IOError("open folder " + std::string(rel.substr(0, end)), errno);
    cur = std::move(next);
    start = end + 1;
  }
  return cur;
}

}  // namespace stitchfs::engine
