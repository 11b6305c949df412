#include "engine/base/folder_list.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

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

std::vector<uint64_t> DiskUsage(const std::vector<std::string>& paths) {
  struct Inode {
    uint64_t bytes, links, seen;
    size_t owner;
  };
  std::map<std::pair<dev_t, ino_t>, Inode> inodes;
  auto count = [&](const std::string& path, size_t owner) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return false;
    // A folder goes with its tree whatever its link count (its sub-folders' "..").
    const uint64_t links = S_ISDIR(st.st_mode) ? 1 : static_cast<uint64_t>(st.st_nlink);
    auto [it, added] = inodes.try_emplace(
        {st.st_dev, st.st_ino}, Inode{static_cast<uint64_t>(st.st_blocks) * 512, links, 0, owner});
    ++it->second.seen;
    return added && S_ISDIR(st.st_mode);
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    std::vector<std::string> pending;
    if (count(paths[i], i)) pending.push_back(paths[i]);
    while (!pending.empty()) {
      const std::string folder = std::move(pending.back());
      pending.pop_back();
      auto names = ListFolder(folder);
      if (!names.ok()) continue;
      for (const std::string& n : *names) {
        if (count(folder + "/" + n, i)) pending.push_back(folder + "/" + n);
      }
    }
  }
  std::vector<uint64_t> usage(paths.size(), 0);
  for (const auto& [id, inode] : inodes) {
    if (inode.seen >= inode.links) usage[inode.owner] += inode.bytes;
  }
  return usage;
}

}  // namespace stitchfs::engine
