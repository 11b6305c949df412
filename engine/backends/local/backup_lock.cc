#include "engine/backends/local/backup_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>

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

// flock(LOCK_EX | LOCK_NB) on `fd`, tried again for a little while: a prune looking at the lock
// (LiveWriterIn) holds a shared lock for a moment, which must not make a writer give up.
bool LockExclusively(int fd) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    ::usleep(5000);
  }
  return false;
}

// Takes over a `.lock` no live writer holds, or reports who holds it. The lock taken is the
// file named `.lock` now (one its last writer unlinked while this opened it is not), and
// `.backup` is still absent once it is held: a writer that finished meanwhile keeps its backup.
StatusOr<UniqueFd> TakeLock(const std::string& dest, int dir_fd, const std::string& text,
                            bool* stale) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    UniqueFd lock(::openat(dir_fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!lock) return Status::IOError("create " + dest + "/.lock", errno);
    if (!LockExclusively(lock.get())) {
      return Status::BackupAlreadyExists("Backup " + dest + " is being written already");
    }
    struct stat held, named;
    if (::fstat(lock.get(), &held) != 0 ||
        ::fstatat(dir_fd, ".lock", &named, AT_SYMLINK_NOFOLLOW) != 0 ||
        held.st_ino != named.st_ino || held.st_dev != named.st_dev || held.st_nlink == 0) {
      continue;  // Unlinked (a writer finished) or replaced while this opened it: again.
    }
    if (::faccessat(dir_fd, ".backup", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
      // A finished backup has no `.lock`: this one is ours (made by the openat above, once the
      // writer we waited for had removed its own) or one a writer killed after its `.backup`
      // left. No writer holds it (we do): it goes, and the backup stays as it is.
      ::unlinkat(dir_fd, ".lock", 0);
      return Status::BackupAlreadyExists("Backup " + dest + " already exists");
    }
    *stale = held.st_size > 0;
    if (::ftruncate(lock.get(), 0) != 0 || ::pwrite(lock.get(), text.data(), text.size(), 0) < 0) {
      return Status::IOError("write " + dest + "/.lock", errno);
    }
    return lock;
  }
  return Status::BackupAlreadyExists("Backup " + dest + ": its .lock keeps changing");
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

// True if a process holds an exclusive flock on `fd`'s file (a shared one is taken and let go
// at once to tell: no file system's device numbering, nor another machine on NFS, can hide it).
bool FlockHeld(int fd) {
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
    return false;
  }
  return errno == EWOULDBLOCK;
}

}  // namespace

std::optional<LockFields> LiveWriterIn(const std::string& dir) {
  UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!d || ::faccessat(d.get(), ".backup", F_OK, AT_SYMLINK_NOFOLLOW) == 0) return std::nullopt;
  UniqueFd lock(::openat(d.get(), ".lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st;
  if (!lock || ::fstat(lock.get(), &st) != 0 || !S_ISREG(st.st_mode) || !FlockHeld(lock.get())) {
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
    l->RemoveData();  // (No `.backup`: TakeLock saw none once it held the lock.)
  }
  return l;
}

void BackupLock::RemoveContents() {
  if (::unlinkat(dir_.get(), ".backup", 0) != 0 && errno != ENOENT) return;
  RemoveData();
}

void BackupLock::RemoveData() {
  auto names = ListFolder(path_);
  if (!names.ok()) return;
  std::error_code ec;
  for (const std::string& n : *names) {
    if (n != ".lock" && n != ".backup") fs::remove_all(path_ + "/" + n, ec);
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
