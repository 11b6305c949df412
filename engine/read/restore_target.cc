#include "engine/read/restore_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>

#include "engine/base/folder_above.h"
#include "engine/base/posix_file.h"

namespace stitchfs::engine {
namespace {

// True if folder `dir` holds a regular file `name` (a folder or a symlink of that name is no
// backup's).
bool HoldsFile(int dir, const char* name) {
  struct stat st;
  return ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

StatusOr<std::pair<dev_t, ino_t>> IdOf(int fd, std::string_view what) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IOError("stat " + std::string(what), errno);
  return std::make_pair(st.st_dev, st.st_ino);
}

// "a/b" for "a/b/c", "" for "a".
std::string ParentOf(const std::string& rel) {
  const size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}

}  // namespace

StatusOr<RestoreTarget> RestoreTarget::Check(int root, const std::string& target,
                                             const ResolvedBackup& chain) {
  ASSIGN_OR_RETURN(Id id, IdOf(root, target));
  RestoreTarget t(id, chain.top().manifest());
  for (size_t i = 0; i < chain.depth(); ++i) {
    struct stat st;  // Folders on this machine only (not object storage, not an archive).
    if (::stat(chain.level(i).path().c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      t.chain_.insert({st.st_dev, st.st_ino});
    }
  }
  // The target and each folder above it, to the root of the file system tree.
  UniqueFd cur(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  const std::string top;
  for (int up = 0; cur && up < 4096; ++up) {
    ASSIGN_OR_RETURN(Id at, IdOf(cur.get(), target));
    // Above the target only a backup counts (`.lock` is a common name elsewhere).
    if (std::string why = t.Refusal(cur.get(), at, up ? nullptr : &top, /*lock=*/up == 0);
        !why.empty()) {
      return Status::InvalidArgument("restore target " + target + (up ? " is inside " : " is ") +
                                     why + ": choose another target");
    }
    auto above = FolderAbove(cur.get());
    if (!above.ok()) {
      return Status::InvalidArgument("restore target " + target + ": " + above.status().message() +
                                     ": choose another target");
    }
    cur = std::move(above->folder);
  }
  t.safe_.insert(id);
  return t;
}

std::string RestoreTarget::Refusal(int fd, Id id, const std::string* rel, bool lock) const {
  if (chain_.count(id)) return "a folder of the backup being read, whose data files it reads";
  // A backup of backups restored again finds the `.backup` it restored there before.
  auto restores = [&](const char* name) {
    return rel != nullptr && m_->FindByName(rel->empty() ? name : *rel + "/" + name).has_value();
  };
  if (HoldsFile(fd, ".backup") && !restores(".backup")) return "a backup (it holds a .backup)";
  if (lock && HoldsFile(fd, ".lock") && !restores(".lock")) {
    return "a backup being written (it holds a .lock)";
  }
  return "";
}

Status RestoreTarget::MayWriteIn(int dir, std::string_view rel_view) {
  const std::string name = rel_view.empty() ? "." : std::string(rel_view);
  ASSIGN_OR_RETURN(Id id, IdOf(dir, name));
  if (safe_.count(id)) return Status::OK();
  UniqueFd cur(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  std::vector<Id> checked;
  std::string rel(rel_view);
  bool inside = true;  // `cur` lies beneath the target, at `rel` (no mount crossed yet).
  bool crossed = false;
  for (Id at = id; !safe_.count(at);) {
    if (std::string why = Refusal(cur.get(), at, inside ? &rel : nullptr, /*lock=*/true);
        !why.empty()) {
      return Status::InvalidArgument("would write into folder \"" + name + "\", " +
                                     (at == id ? "" : "inside ") + why + ": choose another target");
    }
    checked.push_back(at);
    auto above = FolderAbove(cur.get());
    if (!above.ok()) {
      return Status::InvalidArgument("would write into folder \"" + name +
                                     "\": " + above.status().message());
    }
    crossed = crossed || above->crossed;
    if (!above->folder) {  // The root of the tree: it was not beneath the target.
      return Status::InvalidArgument(
          "would write into folder \"" + name + "\", which " +
          (crossed ? "is another place mounted beneath the target (a bind mount): restore into "
                     "it directly"
                   : "is not beneath the target"));
    }
    inside = inside && !above->crossed && !rel.empty();
    rel = ParentOf(rel);
    cur = std::move(above->folder);
    ASSIGN_OR_RETURN(at, IdOf(cur.get(), name));
  }
  safe_.insert(checked.begin(), checked.end());
  return Status::OK();
}

StatusOr<UniqueFd> RestoreTarget::OpenDir(int root, std::string_view rel) {
  ASSIGN_OR_RETURN(UniqueFd dir, MakeDirsBeneath(root, rel, [this](int at, std::string_view path) {
                     return MayWriteIn(at, path);
                   }));
  RETURN_IF_ERROR(MayWriteIn(dir.get(), rel));
  return dir;
}

std::string RestoreTarget::TempName(const std::string& leaf) {
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(leaf.data(), leaf.size())));
  return ".stitch-restore-" + std::to_string(::getpid()) + "-" + hash;
}

}  // namespace stitchfs::engine
