#include "engine/storage/base_candidates.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>

#include "engine/location/location.h"
#include "engine/location/s3_address.h"
#include "engine/storage/backup_folder.h"

namespace stitchfs::engine {
namespace {

constexpr size_t kMaxCandidates = 256;
constexpr size_t kMaxTail = 8;  // A moved chain: the locator's last 1..kMaxTail components.

std::vector<std::string> Components(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) out.emplace_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// `parts` followed by `rel`, "." and ".." resolved; false if ".." climbs above `parts`' start.
bool Append(std::vector<std::string>& parts, std::string_view rel) {
  for (std::string& part : Components(rel)) {
    if (part == ".") continue;
    if (part != "..") {
      parts.push_back(std::move(part));
    } else if (parts.empty()) {
      return false;
    } else {
      parts.pop_back();
    }
  }
  return true;
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

// The folder or S3 prefix holding `location`; "" at the top (`/`, a bucket's root).
std::string ParentLocation(const std::string& location) {
  if (LocationOf(location).in_object_storage()) {
    auto a = ParseS3Address(location);
    if (!a.ok() || a->key.empty()) return "";
    const size_t slash = a->key.rfind('/');
    a->key = slash == std::string::npos ? "" : a->key.substr(0, slash);
    return a->Location();
  }
  if (location.empty() || location == "/") return "";
  const size_t slash = location.find_last_of('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : location.substr(0, slash);
}

// `rel` inside `dir` (a folder or an S3 prefix), normal; "" if it climbs above the top.
std::string JoinLocation(const std::string& dir, std::string_view rel) {
  if (LocationOf(dir).in_object_storage()) {
    auto a = ParseS3Address(dir);
    if (!a.ok()) return "";
    std::vector<std::string> parts = Components(a->key);
    if (!Append(parts, rel) || parts.empty()) return "";
    a->key = Joined(parts);
    return a->Location();
  }
  std::vector<std::string> parts = Components(dir);
  if (!Append(parts, rel) || parts.empty()) return "";
  return "/" + Joined(parts);
}

// The key components of an S3 location, or a local path's.
std::vector<std::string> PathComponents(const std::string& location) {
  if (!LocationOf(location).in_object_storage()) return Components(location);
  auto a = ParseS3Address(location);
  return a.ok() ? Components(a->key) : std::vector<std::string>();
}

class Search {
 public:
  Search(const std::string& child, std::string quoted)
      : holder_(ParentLocation(child)), quoted_(std::move(quoted)) {}

  // Adds a candidate; one already there for the location becomes primary if this one is.
  void Add(std::string location, std::string why, bool primary) {
    if (location.empty() || out_.candidates.size() >= kMaxCandidates) return;
    for (BaseCandidate& c : out_.candidates) {
      if (c.location != location) continue;
      if (primary) c = {std::move(location), std::move(why), true};
      return;
    }
    out_.candidates.push_back({std::move(location), std::move(why), primary});
  }

  // The last component of `location` beside the backup: a chain copied or moved whole keeps
  // its backups side by side, and its bases are read there before where the locator points.
  void Sibling(const std::string& location) {
    const std::vector<std::string> parts = PathComponents(location);
    if (parts.empty()) return;
    Add(JoinLocation(holder_, parts.back()),
        "beside the backup, with the uuid the backup records (read before where the locator "
        "points: a copied or moved chain reads its own bases)",
        false);
  }

  // `rel` beside the backup, then in every folder above it.
  void Above(std::string_view rel) {
    if (Components(rel).empty()) return;
    for (std::string a = holder_; !a.empty(); a = ParentLocation(a)) {
      Add(JoinLocation(a, rel),
          a == holder_ ? "the locator's path beside the backup, with the uuid the backup records"
                       : "the locator's path under " + a +
                             ", a folder above the backup, with the uuid the backup records",
          false);
    }
  }

  // A chain moved as a whole: the last components of `original` under the backup's folder
  // and every folder above it.
  void Moved(const std::string& original) {
    const std::vector<std::string> parts = PathComponents(original);
    for (std::string a = holder_; !a.empty(); a = ParentLocation(a)) {
      for (size_t k = 1; k <= std::min(parts.size(), kMaxTail); ++k) {
        const std::vector<std::string> tail(parts.end() - static_cast<std::ptrdiff_t>(k),
                                            parts.end());
        Add(JoinLocation(a, Joined(tail)),
            "not at " + original + ": found under " + a +
                " with the uuid the backup records (a chain moved as a whole)",
            false);
      }
    }
  }

  const std::string& holder() const { return holder_; }
  const std::string& quoted() const { return quoted_; }
  BaseSearch& out() { return out_; }

 private:
  const std::string holder_;
  const std::string quoted_;
  BaseSearch out_;
};

std::string Origin(const LocatorContext& c) {
  return c.origin.empty() ? "" : " (" + c.origin + ")";
}

Status AddFile(Search& s, const std::string& path, const LocatorContext& c) {
  if (path.empty()) return Status::BackupDamaged("empty path in base locator " + s.quoted());
  if (path.front() == '/') {
    const std::string abs = AbsolutePath(path);
    s.Sibling(abs);
    s.Add(abs, "the absolute path of the locator", true);
    s.Moved(abs);
  } else if (!c.backups_root.empty()) {
    s.Sibling(path);
    s.Add(JoinLocation(c.backups_root, path),
          "the locator's path under the backups root " + c.backups_root + Origin(c), true);
    s.Above(path);
  } else {
    std::string beside = JoinLocation(s.holder(), path);
    if (beside.empty()) {
      return Status::InsecurePath("base locator " + s.quoted() + " leaves the top of " +
                                  s.holder());
    }
    s.Sibling(path);
    s.Add(std::move(beside), "the locator's path beside the backup (no backups root given)", true);
    s.Above(path);
  }
  return Status::OK();
}

Status AddDisk(Search& s, const Locator& loc, const LocatorContext& c) {
  auto rel = PathInDisk(loc.args[1]);
  if (!rel.ok()) return rel.status().WithPrefix("base locator " + s.quoted() + ": ");
  s.Sibling(*rel);
  auto disk = c.disks.find(loc.args[0]);
  if (disk != c.disks.end()) {
    s.Add(rel->empty() ? NormalLocation(disk->second) : JoinLocation(disk->second, *rel),
          "on disk '" + loc.args[0] + "' at " + disk->second + Origin(c), true);
  } else {
    s.out().no_primary = "disk '" + loc.args[0] + "' is not mapped (--disk " + loc.args[0] +
                         "=DIR or --clickhouse-config FILE)";
  }
  s.Above(*rel);
  return Status::OK();
}

}  // namespace

StatusOr<BaseSearch> FindBaseCandidates(std::string_view locator, const std::string& child,
                                        const LocatorContext& context,
                                        const std::string& override) {
  if (!override.empty()) {
    BaseSearch out;
    out.candidates.push_back({NormalLocation(override), "given with --base", true});
    return out;
  }
  // The locator is a manifest's: text that does not parse, or an S3 URL that names no place,
  // is the backup's fault (BACKUP_DAMAGED), not the user's.
  auto parsed = ParseLocator(locator);
  if (!parsed.ok()) return Status::BackupDamaged(parsed.status().message());
  const Locator& loc = *parsed;
  Search s(child, RedactLocator(locator));
  if (loc.engine == "S3") {
    auto url = S3LocatorLocation(loc, locator);
    if (!url.ok()) {
      if (url.status().code() != ErrorCode::kInvalidArgument) return url.status();
      return Status::BackupDamaged(url.status().message());
    }
    if (LocationOf(s.holder()).in_object_storage()) s.Sibling(*url);
    s.Add(*url, "the URL of the locator", true);
    if (LocationOf(s.holder()).in_object_storage()) s.Moved(*url);
  } else if (loc.engine == "File" && loc.args.size() == 1) {
    RETURN_IF_ERROR(AddFile(s, loc.args[0], context));
  } else if (loc.engine == "Disk" && loc.args.size() == 2) {
    RETURN_IF_ERROR(AddDisk(s, loc, context));
  } else {
    return Status::NotSupported("base backup locator " + s.quoted() +
                                " is not supported (File('...'), Disk('name', '...') and "
                                "S3('url'[, 'key', 'secret']) are)");
  }
  return std::move(s.out());
}

bool MayStandIn(const std::string& child, const std::string& candidate) {
  if (LocationOf(candidate).in_object_storage()) return true;
  struct stat c, k;
  if (::lstat(candidate.c_str(), &c) != 0) return false;
  if (LocationOf(child).in_object_storage()) return c.st_uid == 0 || c.st_uid == ::geteuid();
  if (::lstat(child.c_str(), &k) != 0) return false;
  return c.st_uid == 0 || c.st_uid == k.st_uid;
}

std::string WhyBaseFound(std::string_view locator, const std::string& child,
                         const std::string& found, const LocatorContext& context,
                         const std::string& override) {
  auto search = FindBaseCandidates(locator, child, context, override);
  if (!search.ok()) return "";
  for (const BaseCandidate& c : search->candidates) {
    if (c.location == found) return c.why;
  }
  return "";
}

}  // namespace stitchfs::engine
