#include "engine/storage/locator.h"

#include <cctype>
#include <filesystem>

#include "engine/base/path_check.h"
#include "engine/s3/s3_address.h"
#include "engine/s3/s3_keyring.h"
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

std::string RedactLocator(std::string_view text) {
  auto loc = ParseLocator(text);
  if (!loc.ok() || loc->engine == "File" || loc->engine == "Disk") return std::string(text);
  if (loc->engine != "S3" || loc->args.empty()) return loc->engine + "(...)";
  auto a = ParseS3Address(loc->args[0]);
  std::string out = "S3(" + FileLocator(a.ok() ? a->Location() : "?").substr(5);
  out.pop_back();
  return out + (loc->args.size() > 1 ? ", '[HIDDEN]', '[HIDDEN]')" : ")");
}

std::string NormalLocation(const std::string& location) {
  if (!IsS3Location(location)) return AbsolutePath(location);
  auto a = ParseS3Address(location);
  return a.ok() ? a->Location() : location;
}

namespace {

// `rel` (a File locator's relative path) beside the S3 prefix `holder`: kInsecurePath if it
// climbs above the bucket.
StatusOr<std::string> S3Relative(const std::string& holder, const std::string& rel,
                                 const std::string& quoted) {
  ASSIGN_OR_RETURN(S3Address a, ParseS3Address(holder));
  std::vector<std::string> parts;
  for (const auto& p : std::filesystem::path(a.key + "/" + rel)) {
    const std::string part = p.string();
    if (part.empty() || part == "." || part == "/") continue;
    if (part != "..") {
      parts.push_back(part);
    } else if (parts.empty()) {
      return Status::InsecurePath("base locator " + quoted + " leaves the bucket of " + holder);
    } else {
      parts.pop_back();
    }
  }
  a.key.clear();
  for (const std::string& part : parts) a.key += (a.key.empty() ? "" : "/") + part;
  return a.Location();
}

StatusOr<std::string> ResolveS3(const Locator& loc, const std::string& quoted) {
  if (loc.args.size() != 1 && loc.args.size() != 3) {
    return Status::NotSupported("base backup locator " + quoted +
                                " is not supported (S3 takes 'url' or 'url', 'key', 'secret')");
  }
  auto a = ParseS3Address(loc.args[0]);
  if (!a.ok()) return a.status().WithPrefix("base locator " + quoted + ": ");
  if (loc.args.size() == 3) {
    S3Keyring::Global().Remember(*a, {loc.args[1], loc.args[2], "", "the base locator " + quoted});
  }
  return a->Location();
}

}  // namespace

StatusOr<std::string> ResolveLocator(std::string_view text, const std::string& holder_dir,
                                     const std::map<std::string, std::string>& disks) {
  ASSIGN_OR_RETURN(Locator loc, ParseLocator(text));
  const std::string quoted = RedactLocator(text);
  std::string path;
  if (loc.engine == "S3") return ResolveS3(loc, quoted);
  if (loc.engine == "File" && loc.args.size() == 1) {
    path = loc.args[0];
    if (path.empty()) return Status::InvalidArgument("empty path in base locator " + quoted);
    if (path.front() != '/' && IsS3Location(holder_dir))
      return S3Relative(holder_dir, path, quoted);
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
                                " is not supported (File('...'), Disk('name', '...') and "
                                "S3('url'[, 'key', 'secret']) are)");
  }
  return AbsolutePath(path);  // Absolute and normal: compared and shown in one spelling.
}

}  // namespace stitchfs::engine
