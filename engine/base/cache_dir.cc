#include "engine/base/cache_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <vector>

#include "engine/base/folder_list.h"
#include "engine/base/posix_meta.h"
#include "engine/base/temp_name.h"

namespace stitchfs::engine {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string ConfiguredCacheDir() {
  std::string dir = Env("STITCH_CACHE_DIR");
  if (dir == "off") return "";
  if (dir.empty() && !Env("XDG_CACHE_HOME").empty()) dir = Env("XDG_CACHE_HOME") + "/stitchfs";
  if (dir.empty() && !Env("HOME").empty()) dir = Env("HOME") + "/.cache/stitchfs";
  if (dir.empty()) return "";
  return std::filesystem::absolute(dir).lexically_normal().string();
}

// `dir`, which exists as `st`, made private; see PrivateFolder.
Status MakePrivate(const std::string& dir, const struct stat& st) {
  const std::string fix = ": caching is off (set STITCH_CACHE_DIR to a folder of your own)";
  if (!S_ISDIR(st.st_mode)) {
    return Status::IOError("cache folder " + EscapeForMessage(dir) + " is not a folder" + fix,
                           ENOTDIR);
  }
  if (st.st_uid != ::geteuid()) {
    return Status::IOError("cache folder " + EscapeForMessage(dir) + " belongs to uid " +
                               std::to_string(st.st_uid) + ", not to this user (uid " +
                               std::to_string(::geteuid()) + ")" + fix,
                           EACCES);
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::IOError("cache folder " + EscapeForMessage(dir) + " is mode " + mode +
                               " and cannot be made private (0700)" + fix,
                           errno);
  }
  return Status::OK();
}

// Makes each existing folder of `dirs` private; the first failure.
Status MakeEachPrivate(const std::vector<std::string>& dirs) {
  for (const std::string& d : dirs) {
    struct stat st;
    if (::stat(d.c_str(), &st) != 0) continue;  // Not there: made 0700 when needed.
    RETURN_IF_ERROR(MakePrivate(d, st));
  }
  return Status::OK();
}

struct Checked {
  std::string dir;      // "" if the caches are off.
  std::string message;  // For the user.
};

const Checked& CheckedCacheDir() {
  static const Checked checked = [] {
    Checked c{ConfiguredCacheDir(), ""};
    if (c.dir.empty()) return c;
    std::vector<std::string> dirs = {c.dir, c.dir + "/archives", c.dir + "/s3-blocks"};
    if (auto blocks = ListFolder(c.dir + "/s3-blocks"); blocks.ok()) {
      for (const std::string& name : *blocks) dirs.push_back(c.dir + "/s3-blocks/" + name);
    }
    if (Status s = MakeEachPrivate(dirs); !s.ok()) {
      c.message = s.message();
      c.dir.clear();
    }
    return c;
  }();
  return checked;
}

}  // namespace

std::string DefaultCacheDir() { return CheckedCacheDir().dir; }

const std::string& CheckDefaultCacheDir() { return CheckedCacheDir().message; }

Status PrivateFolder(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) return MakePrivate(dir, st);
  if (errno != ENOENT) return Status::IOError("cache folder " + EscapeForMessage(dir), errno);
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty() && parent != dir && ::stat(parent.c_str(), &st) != 0) {
    RETURN_IF_ERROR(PrivateFolder(parent.string()));  // Only missing parents are made (0700).
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IOError("create cache folder " + EscapeForMessage(dir), errno);
  }
  if (::stat(dir.c_str(), &st) != 0) {
    return Status::IOError("cache folder " + EscapeForMessage(dir), errno);
  }
  return MakePrivate(dir, st);  // Another process may have made it first, in another mode.
}

bool IsLeftoverTemp(std::string_view name, int64_t mtime_sec) {
  switch (OwnerOfTemp(name)) {
    case TempOwner::kNotTemp:
    case TempOwner::kAlive:
      return false;
    case TempOwner::kDead:
      return true;
    case TempOwner::kUnknown:
      return mtime_sec < static_cast<int64_t>(::time(nullptr)) - kUnjudgedTempSec;
  }
  return false;
}

void TrimCacheFolder(const std::string& dir, std::initializer_list<std::string_view> extensions,
                     uint64_t max_bytes) {
  struct File {
    std::filesystem::path path;
    FileTime mtime;
    uint64_t size;
  };
  std::vector<File> files;
  uint64_t total = 0;
  std::error_code ec;
  auto names = ListFolder(dir);
  if (!names.ok()) return;
  for (const std::string& name : *names) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (OwnerOfTemp(name) != TempOwner::kNotTemp) {
      // A writer killed midway (a decode of a large archive) may have left gigabytes.
      if (IsLeftoverTemp(name, st.st_mtime) && std::filesystem::remove(path, ec)) continue;
      total += static_cast<uint64_t>(st.st_size);  // Still being written: it takes room.
      continue;
    }
    if (std::none_of(extensions.begin(), extensions.end(),
                     [&](std::string_view e) { return std::string_view(name).ends_with(e); })) {
      continue;
    }
    files.push_back({path, FileTime::From(st.st_mtim), static_cast<uint64_t>(st.st_size)});
    total += files.back().size;
  }
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.mtime < b.mtime; });
  for (size_t i = 0; i + 1 < files.size() && total > max_bytes; ++i) {  // The newest stays.
    std::filesystem::remove(files[i].path, ec);
    total -= files[i].size;
  }
}

bool StartTrimDue(const std::string& dir) {
  const std::string stamp = dir + "/.trimmed";
  struct stat st;
  if (::lstat(stamp.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      st.st_mtime > static_cast<int64_t>(::time(nullptr)) - kStartTrimEverySec &&
      st.st_mtime <= static_cast<int64_t>(::time(nullptr)) + 60) {  // Not stamped in the future.
    return false;
  }
  const int fd =
      ::open(stamp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd >= 0) {
    ::futimens(fd, nullptr);
    ::close(fd);
  }
  return true;
}

}  // namespace stitchfs::engine
