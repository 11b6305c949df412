#include "engine/read/chain_walk.h"

#include "engine/storage/locator.h"
#include "engine/storage/manifest_cache.h"

namespace stitchfs::engine {
namespace {

std::string ParentDir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The first entry that reads from the base, if any.
std::optional<size_t> FirstBaseUser(const Manifest& m) {
  for (size_t i = 0; i < m.num_entries(); ++i) {
    if (m.entry(i).uses_base()) return i;
  }
  return std::nullopt;
}

// Finds and opens the base of `child` (level `level`), or explains why it cannot.
StatusOr<std::shared_ptr<const Backup>> OpenBase(const Backup& child, size_t level,
                                                 const ChainOptions& o, size_t user) {
  const FileEntry e = child.manifest().entry(user);
  std::string dir = level == 0 ? o.base_override : "";
  if (dir.empty()) {
    if (child.header().base_backup.empty()) {
      return Status::NoBaseBackup(child.Prefix() + "Entry " +
                                  ContentId(e.base_checksum, e.base_size) + " (\"" +
                                  std::string(e.name) +
                                  "\") is marked to be read from a base backup, but there is no "
                                  "base backup specified");
    }
    auto resolved = BaseDirOf(child.path(), child.header().base_backup, "", o.disks);
    if (!resolved.ok()) return resolved.status().WithPrefix(child.Prefix());
    dir = *resolved;
  }
  auto base = OpenBackup(dir, o);
  if (!base.ok() && base.status().code() == ErrorCode::kBackupNotFound) {
    return Status::NoBaseBackup(child.Prefix() + "base backup " +
                                RedactLocator(child.header().base_backup) +
                                " cannot be opened: " + base.status().message());
  }
  return base;
}

// Every entry of `child` that uses the base finds (base_size, base_checksum) in `base`.
Status CheckBaseEntries(const Backup& child, const Backup& base) {
  const Manifest& m = child.manifest();
  for (size_t i = 0; i < m.num_entries(); ++i) {
    const FileEntry e = m.entry(i);
    if (!e.uses_base() || base.manifest().FindByContent(e.base_size, e.base_checksum)) continue;
    return Status::WrongBaseBackup(child.Prefix() + "Entry " +
                                   ContentId(e.base_checksum, e.base_size) + " (\"" +
                                   std::string(e.name) +
                                   "\") is marked to be read from a base backup, but doesn't "
                                   "exist there (" +
                                   base.path() + ")");
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::string> BaseDirOf(const std::string& child_path, std::string_view locator,
                                const std::string& override,
                                const std::map<std::string, std::string>& disks) {
  if (!override.empty()) return NormalLocation(override);
  return ResolveLocator(locator, ParentDir(child_path), disks);
}

std::string ContentId(const Checksum& c, uint64_t size) { return c.ToHex() + std::to_string(size); }

StatusOr<std::shared_ptr<const Backup>> OpenBackup(const std::string& dir,
                                                   const ChainOptions& options) {
  return options.backups ? options.backups->Open(*options.storage, dir, options.cache)
                         : Backup::Open(*options.storage, dir, options.cache);
}

ChainWalk::ChainWalk(const ChainOptions& options, const Backup& top)
    : options_(options), seen_uuids_{top.header().uuid} {}

StatusOr<std::shared_ptr<const Backup>> OpenBaseOf(const Backup& child, size_t level,
                                                   const ChainOptions& o) {
  auto user = FirstBaseUser(child.manifest());
  if (!user) return std::shared_ptr<const Backup>();
  if (level + 1 >= o.max_depth) {
    return Status::WrongBaseBackup(child.Prefix() + "the chain of base backups is longer than " +
                                   std::to_string(o.max_depth));
  }
  return OpenBase(child, level, o, *user);
}

Status CheckBase(const Backup& child, const Backup& base) {
  const std::string expected = child.header().base_backup_uuid.value_or("");
  if (base.header().uuid != expected) {
    return Status::WrongBaseBackup(child.Prefix() + "The base backup " + base.path() +
                                   " has different UUID (" + base.header().uuid +
                                   " != " + expected + ")");
  }
  return CheckBaseEntries(child, base);
}

Status LoopError(const Backup& child, const std::string& base_path, const std::string& uuid) {
  return Status::WrongBaseBackup(child.Prefix() + "the chain of base backups loops back to " +
                                 base_path + " (uuid " + uuid + ")");
}

StatusOr<std::shared_ptr<const Backup>> ChainWalk::Next(const Backup& child, size_t level) {
  ASSIGN_OR_RETURN(auto base, OpenBaseOf(child, level, options_));
  if (!base) return base;
  RETURN_IF_ERROR(CheckBase(child, *base));
  if (!seen_uuids_.insert(base->header().uuid).second) {
    return LoopError(child, base->path(), base->header().uuid);
  }
  return base;
}

}  // namespace stitchfs::engine
