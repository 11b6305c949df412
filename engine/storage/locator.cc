#include "engine/storage/locator.h"

#include <cctype>
#include <filesystem>

#include "engine/base/path_check.h"
#include "engine/storage/backup_folder.h"

namespace stitchfs::engine {
namespace {

void SkipSpaces(std::string_view& s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Reads one argument: a quoted string or a bare word (identifier, number, key = 'value').
StatusOr<std::string> ReadArg(std::string_view& s) {
  std::string out;
  if (!s.empty() && s.front() == '\'') {
    s.remove_prefix(1);
    while (!s.empty() && s.front() != '\'') {
      if (s.front() == '\\' && s.size() > 1) s.remove_prefix(1);
      out.push_back(s.front());
      s.remove_prefix(1);
    }
    if (s.empty()) return Status::InvalidArgument("unterminated string");
    s.remove_prefix(1);
    return out;
  }
  while (!s.empty() && s.front() != ',' && s.front() != ')') {
    out.push_back(s.front());
    s.remove_prefix(1);
  }
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  if (out.empty()) return Status::InvalidArgument("empty argument");
  return out;
}

bool IsArchive(std::string_view p) {
  for (std::string_view ext : {".zip", ".zipx", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.lzma",
                               ".tar.zst", ".tzst", ".tar.xz"}) {
    if (p.size() >= ext.size() && p.substr(p.size() - ext.size()) == ext) return true;
  }
  return false;
}

std::string TrimSlashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

}  // namespace

StatusOr<Locator> ParseLocator(std::string_view text) {
  const std::string whole(text);
  std::string_view s = text;
  SkipSpaces(s);
  Locator loc;
  while (!s.empty() && IsWordChar(s.front())) {
    loc.engine.push_back(s.front());
    s.remove_prefix(1);
  }
  SkipSpaces(s);
  if (loc.engine.empty() || s.empty() || s.front() != '(') {
    return Status::InvalidArgument("cannot parse base backup locator " + whole);
  }
  s.remove_prefix(1);
  SkipSpaces(s);
  while (!s.empty() && s.front() != ')') {
    auto arg = ReadArg(s);
    if (!arg.ok()) return Status::InvalidArgument("cannot parse base backup locator " + whole);
    loc.args.push_back(std::move(*arg));
    SkipSpaces(s);
    if (!s.empty() && s.front() == ',') s.remove_prefix(1);
    SkipSpaces(s);
  }
  if (s.empty()) return Status::InvalidArgument("cannot parse base backup locator " + whole);
  s.remove_prefix(1);
  SkipSpaces(s);
  if (!s.empty()) return Status::InvalidArgument("cannot parse base backup locator " + whole);
  return loc;
}

std::string FileLocator(std::string_view path) {
  std::string out = "File('";
  for (char c : path) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "')";
}

StatusOr<std::string> ResolveLocator(std::string_view text, const std::string& holder_dir,
                                     const std::map<std::string, std::string>& disks) {
  ASSIGN_OR_RETURN(Locator loc, ParseLocator(text));
  const std::string quoted(text);
  std::string path;
  if (loc.engine == "File" && loc.args.size() == 1) {
    path = loc.args[0];
    if (path.empty()) return Status::InvalidArgument("empty path in base locator " + quoted);
    if (path.front() != '/') path = holder_dir + "/" + path;
  } else if (loc.engine == "Disk" && loc.args.size() == 2) {
    auto disk = disks.find(loc.args[0]);
    if (disk == disks.end()) {
      return Status::NoBaseBackup("base backup " + quoted + " is on disk '" + loc.args[0] +
                                  "', which is not mapped; pass --disk " + loc.args[0] + "=DIR");
    }
    // Relative to the disk whatever its spelling ("/b", "./b", "b/", "."); never above it.
    std::string rel = std::filesystem::path(loc.args[1]).lexically_normal().string();
    while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
    rel = TrimSlashes(rel == "." ? "" : rel);
    if (!rel.empty())
      RETURN_IF_ERROR(CheckRelativePath(rel).WithPrefix("base locator " + quoted + ": "));
    path = rel.empty() ? disk->second : disk->second + "/" + rel;
  } else {
    return Status::NotSupported("base backup locator " + quoted +
                                " is not supported (only File('...') and Disk('name', '...'))");
  }
  if (IsArchive(path)) {
    return Status::NotSupported("base backup " + quoted + " is an archive; unpack it first");
  }
  return AbsolutePath(path);  // Absolute and normal: compared and shown in one spelling.
}

}  // namespace stitchfs::engine
