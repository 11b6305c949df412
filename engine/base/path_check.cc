#include "engine/base/path_check.h"

#include <cstring>
#include <filesystem>
#include <string>

namespace stitchfs::engine {

namespace {
std::string Quoted(std::string_view path) {
  std::string out;
  out.reserve(path.size() + 2);
  out += '"';
  out.append(path);
  out += '"';
  return out;
}
}  // namespace

// Runs once per manifest entry: builds no string unless the path is bad.
Status CheckRelativePath(std::string_view path) {
  if (path.empty() || path == ".") return Status::BackupDamaged("empty file name " + Quoted(path));
  if (path.find('\0') != std::string_view::npos) {
    return Status::InsecurePath("path " + Quoted(path) + " contains a NUL byte");
  }
  if (path.front() == '/') {
    return Status::InsecurePath("path " + Quoted(path) + " is an absolute path");
  }
  // Component by component, memchr finding each '/' (this runs for every name of every
  // manifest loaded).
  const char* p = path.data();
  const char* const end = p + path.size();
  for (;;) {
    const char* slash = static_cast<const char*>(std::memchr(p, '/', end - p));
    const char* stop = slash ? slash : end;
    const size_t len = stop - p;
    if (len <= 2 && (len == 0 || p[0] == '.')) {
      if (len == 2 && p[1] == '.') {
        return Status::InsecurePath("path " + Quoted(path) +
                                    " resolves to a path outside the backup");
      }
      if (len < 2)
        return Status::InsecurePath("path " + Quoted(path) + " is not a normalized path");
    }
    if (slash == nullptr) break;
    p = slash + 1;
  }
  return Status::OK();
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::string out = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec || out.empty()) out = path;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace stitchfs::engine
