#include "engine/path_check.h"

#include <string>

namespace stitchfs::engine {

namespace {
std::string Quoted(std::string_view path) { return "\"" + std::string(path) + "\""; }
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
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      return Status::InsecurePath("path " + Quoted(path) +
                                  " resolves to a path outside the backup");
    }
    if (part.empty() || part == ".") {
      return Status::InsecurePath("path " + Quoted(path) + " is not a normalized path");
    }
    start = end + 1;
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
