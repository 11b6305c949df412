#include "engine/base/path_check.h"

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
  // One pass over the characters (this runs for every name of every manifest loaded).
  size_t start = 0;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i < path.size() && path[i] != '/') continue;
    const size_t len = i - start;
    if (len == 2 && path[start] == '.' && path[start + 1] == '.') {
      return Status::InsecurePath("path " + Quoted(path) +
                                  " resolves to a path outside the backup");
    }
    if (len == 0 || (len == 1 && path[start] == '.')) {
      return Status::InsecurePath("path " + Quoted(path) + " is not a normalized path");
    }
    start = i + 1;
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
