#include "engine/location/locator.h"

#include <cctype>
#include <filesystem>

#include "engine/base/path_check.h"
#include "engine/location/location.h"
#include "engine/location/s3_address.h"
#include "engine/location/s3_keyring.h"

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

std::string Quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "'";
}

// True for `S3('url')` and `S3('url', 'key', 'secret')` (not a named collection: its
// `key = 'value'` overrides may hold secrets of their own).
bool IsS3UrlForm(const Locator& loc) {
  if (loc.engine != "S3" || (loc.args.size() != 1 && loc.args.size() != 3)) return false;
  return loc.args[0].find("://") != std::string::npos;
}

}  // namespace

std::string RedactUnparsable(std::string_view text) {
  std::string_view s = text;
  SkipSpaces(s);
  std::string engine;
  while (!s.empty() && IsWordChar(s.front())) {
    engine.push_back(s.front());
    s.remove_prefix(1);
  }
  return engine + "(...)";
}

StatusOr<Locator> ParseLocator(std::string_view text) {
  std::string_view s = text;
  // Never the text itself: a locator that does not parse may still hold a secret.
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("cannot parse base backup locator " + RedactUnparsable(text) +
                                   ": " + why + " at byte " +
                                   std::to_string(text.size() - s.size()));
  };
  SkipSpaces(s);
  Locator loc;
  while (!s.empty() && IsWordChar(s.front())) {
    loc.engine.push_back(s.front());
    s.remove_prefix(1);
  }
  SkipSpaces(s);
  if (loc.engine.empty()) return bad("no engine name");
  if (s.empty() || s.front() != '(') return bad("no '(' after the engine name");
  s.remove_prefix(1);
  SkipSpaces(s);
  while (!s.empty() && s.front() != ')') {
    auto arg = ReadArg(s);
    if (!arg.ok()) return bad(arg.status().message().c_str());
    loc.args.push_back(std::move(*arg));
    SkipSpaces(s);
    if (!s.empty() && s.front() == ',') {
      s.remove_prefix(1);
      SkipSpaces(s);
    } else if (!s.empty() && s.front() != ')') {
      return bad("no ',' between arguments");
    }
  }
  if (s.empty()) return bad("no ')' at the end");
  s.remove_prefix(1);
  SkipSpaces(s);
  if (!s.empty()) return bad("text after the ')'");
  return loc;
}

bool LooksLikeLocator(std::string_view arg) {
  for (std::string_view engine : {"File(", "Disk(", "S3("}) {
    if (arg.substr(0, engine.size()) == engine && !arg.empty() && arg.back() == ')') return true;
  }
  return false;
}

std::string FileLocator(std::string_view path) { return "File(" + Quoted(path) + ")"; }

std::string DiskLocator(std::string_view disk, std::string_view path) {
  return "Disk(" + Quoted(disk) + ", " + Quoted(path) + ")";
}

std::string RedactLocator(std::string_view text) {
  auto loc = ParseLocator(text);
  if (!loc.ok()) return RedactUnparsable(text);
  if (loc->engine == "File" || loc->engine == "Disk") return std::string(text);
  if (!IsS3UrlForm(*loc)) return loc->engine + "(...)";
  auto a = ParseS3LocatorUrl(loc->args[0]);
  std::string out = "S3(" + Quoted(a.ok() ? a->Location() : RedactUrl(loc->args[0]));
  return out + (loc->args.size() > 1 ? ", '[HIDDEN]', '[HIDDEN]')" : ")");
}

std::string StripLocatorCredentials(std::string_view text) {
  if (text.empty()) return "";  // No base.
  auto loc = ParseLocator(text);
  if (!loc.ok()) return RedactUnparsable(text);
  if (loc->engine == "File" || loc->engine == "Disk") return std::string(text);
  if (!IsS3UrlForm(*loc)) return loc->engine + "(...)";
  const std::string url = StripUrlCredentials(loc->args[0]);
  if (loc->args.size() == 1 && url == loc->args[0]) return std::string(text);
  return "S3(" + Quoted(url) + ")";
}

bool LocatorHasCredentials(std::string_view text) { return StripLocatorCredentials(text) != text; }

std::string NormalLocation(const std::string& location) {
  if (!LocationOf(location).in_object_storage()) return AbsolutePath(location);
  auto a = ParseS3Address(location);
  return a.ok() ? a->Location() : location;
}

StatusOr<std::string> PathInDisk(std::string_view p) {
  std::string rel = std::filesystem::path(p).lexically_normal().string();
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  if (rel == ".") rel.clear();
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  if (!rel.empty()) RETURN_IF_ERROR(CheckRelativePath(rel));
  return rel;
}

StatusOr<std::string> S3LocatorLocation(const Locator& loc, std::string_view text) {
  const std::string quoted = RedactLocator(text);
  if (!IsS3UrlForm(loc)) {
    return Status::NotSupported("base backup locator " + quoted +
                                " is not supported (S3 takes 'url' or 'url', 'key', 'secret')");
  }
  auto a = ParseS3LocatorUrl(loc.args[0]);
  if (!a.ok()) return a.status().WithPrefix("base locator " + quoted + ": ");
  if (loc.args.size() == 3) {
    S3Keyring::Global().Remember(*a, {loc.args[1], loc.args[2], "", "the base locator " + quoted});
  }
  return a->Location();
}

StatusOr<std::string> ResolveUserLocator(std::string_view text, const LocatorContext& context) {
  ASSIGN_OR_RETURN(Locator loc, ParseLocator(text));
  const std::string quoted = RedactLocator(text);
  if (loc.engine == "S3") {
    // Typed by a user: what ClickHouse would strip from a URL is refused, not dropped.
    if (!loc.args.empty()) RETURN_IF_ERROR(CheckNoUrlCredentials(loc.args[0], quoted + ": URL"));
    return S3LocatorLocation(loc, text);
  }
  if (loc.engine == "File" && loc.args.size() == 1 && !loc.args[0].empty()) {
    if (loc.args[0].front() == '/') return AbsolutePath(loc.args[0]);
    if (context.backups_root.empty()) {
      return Status::InvalidArgument(quoted +
                                     " is relative to ClickHouse's backups root: name it with "
                                     "--backups-root DIR or --clickhouse-config FILE");
    }
    return AbsolutePath(context.backups_root + "/" + loc.args[0]);
  }
  if (loc.engine == "Disk" && loc.args.size() == 2) {
    auto disk = context.disks.find(loc.args[0]);
    if (disk == context.disks.end()) {
      return Status::InvalidArgument(quoted + " is on disk '" + loc.args[0] +
                                     "', which is not known: map it with --disk " + loc.args[0] +
                                     "=DIR or --clickhouse-config FILE");
    }
    auto rel = PathInDisk(loc.args[1]);
    if (!rel.ok()) return rel.status().WithPrefix(quoted + ": ");
    return AbsolutePath(rel->empty() ? disk->second : disk->second + "/" + *rel);
  }
  return Status::NotSupported(quoted +
                              " is not supported (File('...'), Disk('name', '...') and "
                              "S3('url'[, 'key', 'secret']) are)");
}

StatusOr<std::string> ResolveUserLocation(const std::string& arg, const LocatorContext& context) {
  if (LooksLikeLocator(arg)) return ResolveUserLocator(arg, context);
  if (!LocationOf(arg).in_object_storage()) return AbsolutePath(arg);
  ASSIGN_OR_RETURN(S3Address a, ParseS3Address(arg));
  return a.Location();
}

}  // namespace stitchfs::engine
