#include "engine/storage/backup_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/base/atomic_file.h"
#include "engine/base/folder_list.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {
namespace {

bool IsEmptyBut(const std::string& dir, const char* except) {
  auto names = ListFolder(dir);
  if (!names.ok()) return false;
  for (const std::string& n : *names) {
    if (n != except) return false;
  }
  return true;
}

// Takes over a `.lock` no live writer holds, or reports who holds it.
StatusOr<UniqueFd> TakeLock(const std::string& dest, int dir_fd, const std::string& text,
                            bool* stale) {
  UniqueFd lock(::openat(dir_fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!lock) return Status::IOError("create " + dest + "/.lock", errno);
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return Status::BackupAlreadyExists("Backup " + dest + " is being written already");
  }
  struct stat st;
  *stale = ::fstat(lock.get(), &st) == 0 && st.st_size > 0;
  if (::ftruncate(lock.get(), 0) != 0 || ::pwrite(lock.get(), text.data(), text.size(), 0) < 0) {
    return Status::IOError("write " + dest + "/.lock", errno);
  }
  return lock;
}

// Why the destination `dest` did not open as a folder (`err`): a symlink is never written
// through (the backup's folder is opened and cleaned up by name, and a link swapped meanwhile
// would lead elsewhere), so it is refused saying where it leads.
Status WhyNotAFolder(const std::string& dest, int err) {
  struct stat st;
  if ((err == ENOTDIR || err == ELOOP) && ::lstat(dest.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const std::string target = fs::read_symlink(dest, ec).string();
      return Status::InvalidArgument(
          "destination " + dest + " is a symlink (to " + target +
          "): a backup is written into a real folder only; name the folder it leads to, or a "
          "new folder inside it");
    }
    if (!S_ISDIR(st.st_mode)) {
      return Status::BackupAlreadyExists("destination " + dest + " exists and is not a folder");
    }
  }
  return Status::IOError("open " + dest, err);
}

}  // namespace

namespace {

// kBackupAlreadyExists if a folder above `dest` holds a backup (a `.backup`) or one being
// written (a `.lock`): a backup is never written inside another, whose prune would take it
// along. Symlinks in `dest` are resolved first.
Status RefuseInsideABackup(const std::string& dest) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(dest), ec);
  if (ec) p = fs::absolute(dest).lexically_normal();
  for (fs::path up = p.parent_path(); !up.empty(); up = up.parent_path()) {
    for (const char* name : {".backup", ".lock"}) {
      struct stat st;
      if (::lstat((up / name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        return Status::BackupAlreadyExists("cannot write backup " + dest + " inside backup " +
                                           up.string() + " (it holds " + name + ")");
      }
    }
    if (up == up.root_path()) break;
  }
  return Status::OK();
}

// True if /proc/locks lists a FLOCK on the file `st` describes.
bool FlockHeld(const struct stat& st) {
  std::ifstream locks("/proc/locks");
  std::string line;
  char want[64];
  std::snprintf(want, sizeof want, " %02x:%02x:%llu ", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  while (std::getline(locks, line)) {
    if (line.find(" FLOCK ") != std::string::npos && line.find(want) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<LockFields> LiveWriterIn(const std::string& dir) {
  UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!d || ::faccessat(d.get(), ".backup", F_OK, AT_SYMLINK_NOFOLLOW) == 0) return std::nullopt;
  UniqueFd lock(::openat(d.get(), ".lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st;
  if (!lock || ::fstat(lock.get(), &st) != 0 || !S_ISREG(st.st_mode) || !FlockHeld(st)) {
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(std::min<off_t>(st.st_size, 1 << 16)), '\0');
  const ssize_t n = ::pread(lock.get(), text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return ParseLockText(text);
}

StatusOr<std::unique_ptr<BackupLock>> BackupLock::Acquire(const std::string& dest,
                                                          const WriterIntent& intent,
                                                          std::string* notice) {
  RETURN_IF_ERROR(RefuseInsideABackup(dest));
  std::error_code ec;
  if (fs::path parent = fs::path(dest).parent_path(); !parent.empty())
    fs::create_directories(parent, ec);
  bool created = ::mkdir(dest.c_str(), 0755) == 0;
  if (!created && errno != EEXIST) return Status::IOError("create " + dest, errno);
  UniqueFd dir(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!dir) return WhyNotAFolder(dest, errno);
  if (::faccessat(dir.get(), ".backup", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
    return Status::BackupAlreadyExists("Backup " + dest + " already exists");
  }
  const bool had_lock = ::faccessat(dir.get(), ".lock", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
  if (!had_lock && !IsEmptyBut(dest, "")) {
    return Status::BackupAlreadyExists("destination " + dest + " is not empty");
  }
  bool stale = false;
  ASSIGN_OR_RETURN(UniqueFd lock, TakeLock(dest, dir.get(), LockText(intent), &stale));
  std::unique_ptr<BackupLock> l(new BackupLock(dest, std::move(dir), std::move(lock), created));
  if (had_lock) {
    *notice = "took over " + dest + "/.lock left by a backup that did not finish" +
              (stale ? "; removed its partial data" : "");
    l->RemoveContents();
  }
  return l;
}

void BackupLock::RemoveContents() {
  if (::unlinkat(dir_.get(), ".backup", 0) != 0 && errno != ENOENT) return;
  auto names = ListFolder(path_);
  if (!names.ok()) return;
  std::error_code ec;
  for (const std::string& n : *names) {
    if (n != ".lock") fs::remove_all(path_ + "/" + n, ec);
  }
}

Status BackupLock::Commit() {
  if (::unlinkat(dir_.get(), ".lock", 0) != 0)
    return Status::IOError("remove " + path_ + "/.lock", errno);
  committed_ = true;
  lock_.Reset(-1);
  if (::fsync(dir_.get()) != 0) return Status::IOError("fsync " + path_, errno);
  return Status::OK();
}

BackupLock::~BackupLock() {
  if (committed_) return;
  RemoveContents();
  ::unlinkat(dir_.get(), ".lock", 0);
  if (created_) ::rmdir(path_.c_str());
}

}  // namespace stitchfs::engine
