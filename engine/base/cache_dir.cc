#include "engine/base/cache_dir.h"

#include <sys/stat.h>

#include <algorithm>
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

}  // namespace

std::string DefaultCacheDir() {
  std::string dir = Env("STITCH_CACHE_DIR");
  if (dir == "off") return "";
  if (dir.empty() && !Env("XDG_CACHE_HOME").empty()) dir = Env("XDG_CACHE_HOME") + "/stitchfs";
  if (dir.empty() && !Env("HOME").empty()) dir = Env("HOME") + "/.cache/stitchfs";
  if (dir.empty()) return "";
  return std::filesystem::absolute(dir).string();
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

}  // namespace stitchfs::engine
