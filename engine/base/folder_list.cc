#include "engine/base/folder_list.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "engine/base/unique_fd.h"

namespace stitchfs::engine {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

}  // namespace

StatusOr<std::vector<std::string>> ListFolder(const std::string& dir) {
  std::unique_ptr<DIR, DirCloser> d(::opendir(dir.c_str()));
  if (!d) return Status::IOError("list " + dir, errno);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const struct dirent* e = ::readdir(d.get());
    if (e == nullptr) break;
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      names.emplace_back(e->d_name);
    }
  }
  if (errno != 0) return Status::IOError("list " + dir, errno);
  return names;
}

uint64_t BytesBeneath(const std::string& dir) {
  struct stat top;
  if (::lstat(dir.c_str(), &top) == 0 && S_ISREG(top.st_mode)) {
    return static_cast<uint64_t>(top.st_size);  // An archive backup.
  }
  uint64_t total = 0;
  std::vector<std::string> pending = {dir};
  while (!pending.empty()) {
    const std::string folder = std::move(pending.back());
    pending.pop_back();
    auto names = ListFolder(folder);
    if (!names.ok()) continue;
    for (const std::string& n : *names) {
      const std::string path = folder + "/" + n;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) pending.push_back(path);
      if (S_ISREG(st.st_mode)) total += static_cast<uint64_t>(st.st_size);
    }
  }
  return total;
}

}  // namespace stitchfs::engine
