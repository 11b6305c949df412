#include "engine/read/restore_meta.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "engine/base/posix_file.h"

namespace stitchfs::engine {
namespace {

bool IsRoot() { return ::geteuid() == 0; }

}  // namespace

std::pair<std::string, std::string> SplitParent(const std::string& name) {
  const size_t slash = name.rfind('/');
  if (slash == std::string::npos) return {"", name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

Status ApplyMeta(int fd, const PosixMeta& m, const std::string& what) {
  // chown first: it clears set-user-ID bits that chmod then restores.
  if (IsRoot() && ::fchown(fd, m.uid, m.gid) != 0) return Status::IOError("chown " + what, errno);
  if (::fchmod(fd, m.mode) != 0) return Status::IOError("chmod " + what, errno);
  const struct timespec times[2] = {m.mtime.ToTimespec(), m.mtime.ToTimespec()};
  if (::futimens(fd, times) != 0) return Status::IOError("set times of " + what, errno);
  return Status::OK();
}

Status RestoreSymlink(int root, const Node& n, RestoreTarget& target) {
  const std::string name(n.name);
  auto [dir, leaf] = SplitParent(name);
  ASSIGN_OR_RETURN(UniqueFd parent, target.OpenDir(root, dir));
  const std::string tmp = RestoreTarget::TempName(leaf);
  ::unlinkat(parent.get(), tmp.c_str(), 0);
  if (::symlinkat(std::string(n.target).c_str(), parent.get(), tmp.c_str()) != 0) {
    return Status::IOError("create symlink " + name, errno);
  }
  if (::renameat(parent.get(), tmp.c_str(), parent.get(), leaf.c_str()) != 0) {
    int e = errno;
    ::unlinkat(parent.get(), tmp.c_str(), 0);
    return Status::IOError("rename symlink into " + name, e);
  }
  if (IsRoot() &&
      ::fchownat(parent.get(), leaf.c_str(), n.meta.uid, n.meta.gid, AT_SYMLINK_NOFOLLOW) != 0) {
    return Status::IOError("chown " + name, errno);
  }
  const struct timespec times[2] = {n.meta.mtime.ToTimespec(), n.meta.mtime.ToTimespec()};
  if (::utimensat(parent.get(), leaf.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
    return Status::IOError("set times of " + name, errno);
  }
  return Status::OK();
}

Status RestoreDir(int root, const Node& n, RestoreTarget& target) {
  return target.OpenDir(root, n.name).status();
}

Status FinishDirs(int root, const std::vector<Node>& dirs) {
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    const std::string name(it->name);
    ASSIGN_OR_RETURN(UniqueFd fd, OpenBeneath(root, name, O_DIRECTORY));
    RETURN_IF_ERROR(ApplyMeta(fd.get(), it->meta, name));
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
