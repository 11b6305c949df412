#include "tests/testutil/tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "tests/testutil/fixture.h"

namespace fs = std::filesystem;

namespace stitchfs::testutil {

std::string DescribeTree(const std::string& root, bool with_times) {
  std::set<std::string> lines;
  std::map<std::pair<dev_t, ino_t>, std::string> groups;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string path = it->path().string();
    const std::string rel = path.substr(root.size() + 1);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    std::ostringstream line;
    line << rel << " ";
    if (S_ISDIR(st.st_mode)) {
      line << "dir";
    } else if (S_ISLNK(st.st_mode)) {
      line << "link " << fs::read_symlink(it->path()).string();
    } else {
      auto [g, inserted] = groups.emplace(std::make_pair(st.st_dev, st.st_ino), rel);
      line << "file " << std::hash<std::string>{}(ReadFile(path)) << " size=" << st.st_size
           << " group=" << g->second;
    }
    line << " mode=" << std::oct << (st.st_mode & 07777) << std::dec << " uid=" << st.st_uid
         << " gid=" << st.st_gid;
    if (with_times && !S_ISLNK(st.st_mode)) {
      line << " mtime=" << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec;
    }
    lines.insert(line.str());
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace stitchfs::testutil
