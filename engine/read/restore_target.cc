#include "engine/read/restore_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>

#include "engine/base/unique_fd.h"

namespace stitchfs::engine {
namespace {

bool Holds(int dir, const char* name) {
  struct stat st;
  return ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

StatusOr<std::pair<dev_t, ino_t>> IdOf(int fd, const std::string& what) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IOError("stat " + what, errno);
  return std::make_pair(st.st_dev, st.st_ino);
}

}  // namespace

StatusOr<RestoreTarget> RestoreTarget::Check(int root, const std::string& target,
                                             const ResolvedBackup& chain) {
  ASSIGN_OR_RETURN(Id id, IdOf(root, target));
  RestoreTarget t(id);
  for (size_t i = 0; i < chain.depth(); ++i) {
    struct stat st;  // Folders on this machine only (not object storage, not an archive).
    if (::stat(chain.level(i).path().c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      t.chain_.insert({st.st_dev, st.st_ino});
    }
  }
  // The target and each folder above it, to the root of the file system.
  UniqueFd cur(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  for (int up = 0; cur && up < 4096; ++up) {
    auto at = IdOf(cur.get(), target);
    if (!at.ok()) break;
    // Above the target only a backup counts (`.lock` is a common name elsewhere).
    if (std::string why = t.Refusal(cur.get(), *at, /*lock=*/up == 0); !why.empty()) {
      return Status::InvalidArgument("restore target " + target + (up ? " is inside " : " is ") +
                                     why + ": choose another target");
    }
    UniqueFd parent(::openat(cur.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent) break;
    auto above = IdOf(parent.get(), target);
    if (!above.ok() || *above == *at) break;  // The root of the file system.
    cur = std::move(parent);
  }
  t.safe_.insert(id);
  return t;
}

std::string RestoreTarget::Refusal(int fd, Id id, bool lock) const {
  if (chain_.count(id)) return "a folder of the backup being read, whose data files it reads";
  if (Holds(fd, ".backup")) return "a backup (it holds a .backup)";
  if (lock && Holds(fd, ".lock")) return "a backup being written (it holds a .lock)";
  return "";
}

Status RestoreTarget::MayWriteIn(int dir, const std::string& name) {
  ASSIGN_OR_RETURN(Id id, IdOf(dir, name));
  if (safe_.count(id)) return Status::OK();
  UniqueFd cur(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  std::vector<Id> checked;
  for (Id at = id; cur && !safe_.count(at);) {
    if (std::string why = Refusal(cur.get(), at, /*lock=*/true); !why.empty()) {
      return Status::InvalidArgument("restore would write into folder \"" + name + "\", " +
                                     (at == id ? "" : "inside ") + why + ": choose another target");
    }
    checked.push_back(at);
    UniqueFd parent(::openat(cur.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent) return Status::IOError("open the folder above " + name, errno);
    ASSIGN_OR_RETURN(Id above, IdOf(parent.get(), name));
    if (above == at) {  // Reached the root of the file system: not beneath the target.
      return Status::InvalidArgument("restore would write into folder \"" + name +
                                     "\", which is not beneath the target");
    }
    cur = std::move(parent);
    at = above;
  }
  safe_.insert(checked.begin(), checked.end());
  return Status::OK();
}

std::string RestoreTarget::TempName(const std::string& leaf) {
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(leaf.data(), leaf.size())));
  return ".stitch-restore-" + std::to_string(::getpid()) + "-" + hash;
}

}  // namespace stitchfs::engine
