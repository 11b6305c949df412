#include "engine/base/folder_above.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace stitchfs::engine {
namespace {

// The mount id of open `fd` (its /proc/self/fdinfo line "mnt_id:").
StatusOr<uint64_t> MountIdOf(int fd) {
  std::ifstream in("/proc/self/fdinfo/" + std::to_string(fd));
  for (std::string key; in >> key;) {
    uint64_t v = 0;
    if (key == "mnt_id:" && in >> v) return v;
    in.ignore(1 << 16, '\n');
  }
  return Status::IOError("no mount id in /proc/self/fdinfo", EIO);
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string oct = s.substr(i + 1, 3);
      if (oct.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::stoi(oct, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

struct MountLine {
  uint64_t id = 0;
  std::string device, root, point;  // "major:minor", the root within its file system, where.
};

std::vector<MountLine> Mounts() {
  std::vector<MountLine> out;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    MountLine m;
    uint64_t parent = 0;
    std::string root, point;
    if (f >> m.id >> parent >> m.device >> root >> point) {
      m.root = Unescape(root);
      m.point = Unescape(point);
      out.push_back(std::move(m));
    }
  }
  return out;
}

bool SameFolder(int a, int b) {
  struct stat x, y;
  return ::fstat(a, &x) == 0 && ::fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

// The folder holding the root of bind mount `mnt` (whose root is the open folder `dir`), found
// through a mount of the whole file system.
StatusOr<UniqueFd> AboveBindRoot(int dir, const MountLine& mnt, const std::vector<MountLine>& all) {
  for (const MountLine& whole : all) {
    if (whole.device != mnt.device || whole.root != "/") continue;
    const std::string real = (whole.point == "/" ? "" : whole.point) + mnt.root;
    UniqueFd same(::open(real.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!same || !SameFolder(same.get(), dir)) continue;
    UniqueFd up(::openat(same.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!up) return Status::IOError("open the folder above " + real, errno);
    return up;
  }
  return Status::NotSupported("the folder mounted at " + mnt.point + " (" + mnt.root +
                              " of its file system) cannot be placed: no mount of its whole file "
                              "system is visible");
}

}  // namespace

StatusOr<Above> FolderAbove(int dir) {
  Above out;
  UniqueFd up(::openat(dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!up) return Status::IOError("open the folder above", errno);
  if (SameFolder(up.get(), dir)) return out;  // "/": nothing above.
  ASSIGN_OR_RETURN(uint64_t mine, MountIdOf(dir));
  ASSIGN_OR_RETURN(uint64_t its, MountIdOf(up.get()));
  if (mine == its) {
    out.folder = std::move(up);
    return out;
  }
  const std::vector<MountLine> all = Mounts();
  for (const MountLine& m : all) {
    if (m.id != mine) continue;
    if (m.root == "/") {  // A whole file system: above it is where it is mounted.
      out.folder = std::move(up);
      return out;
    }
    ASSIGN_OR_RETURN(out.folder, AboveBindRoot(dir, m, all));
    out.crossed = true;
    return out;
  }
  return Status::IOError("mount " + std::to_string(mine) + " is not in /proc/self/mountinfo", EIO);
}

}  // namespace stitchfs::engine
