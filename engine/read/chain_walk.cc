#include "engine/read/chain_walk.h"

#include "engine/format/manifest_cache.h"
#include "engine/location/locator.h"
#include "engine/storage/base_candidates.h"

namespace stitchfs::engine {
namespace {

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
  if (child.header().base_backup.empty() && (level > 0 || o.base_override.empty())) {
    return Status::NoBaseBackup(child.Prefix() + "Entry " +
                                ContentId(e.base_checksum, e.base_size) + " (\"" +
                                std::string(e.name) +
                                "\") is marked to be read from a base backup, but there is no "
                                "base backup specified");
  }
  std::map<std::string, std::shared_ptr<const Backup>> opened;
  auto open = [&](const std::string& location) -> StatusOr<std::string> {
    ASSIGN_OR_RETURN(auto b, OpenBackup(location, o));
    opened[location] = b;
    return b->header().uuid;
  };
  ASSIGN_OR_RETURN(std::string dir,
                   FindBase(child.path(), child.header(), level, o, child.Prefix(), open));
  return opened.at(dir);
}

// The message of a base that none of the candidates of `search` gave.
Status NotFound(const ManifestHeader& child, const BaseSearch& search, const std::string& prefix,
                const std::optional<Status>& primary_error, size_t others,
                const std::vector<std::string>& other_uuids) {
  std::string msg = prefix + "base backup " + RedactLocator(child.base_backup);
  msg += primary_error ? " cannot be opened: " + primary_error->message()
                       : " not found: " + search.no_primary;
  if (others > 0) {
    msg += "; nor is it (uuid " + child.base_backup_uuid.value_or("") + ") in the " +
           std::to_string(others) + " other places looked at (the folders above the backup)";
  }
  for (const std::string& o : other_uuids) msg += "; " + o;
  return Status::NoBaseBackup(msg);
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

StatusOr<std::string> FindBase(
    const std::string& child_path, const ManifestHeader& child, size_t level, const ChainOptions& o,
    const std::string& prefix,
    const std::function<StatusOr<std::string>(const std::string&)>& uuid_at) {
  auto search = FindBaseCandidates(child.base_backup, child_path, o.locators,
                                   level == 0 ? o.base_override : std::string());
  if (!search.ok()) return search.status().WithPrefix(prefix);
  const std::string want = child.base_backup_uuid.value_or("");
  std::optional<Status> primary_error;
  std::optional<std::string> primary;
  std::vector<std::string> other_uuids;  // Backups found where the search looked.
  size_t others = 0;
  for (const BaseCandidate& c : search->candidates) {
    if (!c.primary) {
      if (want.empty()) continue;  // Only a uuid makes another place the same base,
      ++others;
      if (!MayStandIn(child_path, c.location)) continue;  // and a place its owner could make.
    }
    auto uuid = uuid_at(c.location);
    if (uuid.ok() && (*uuid == want || (c.primary && want.empty()))) return c.location;
    if (c.primary) {
      if (uuid.ok()) {
        primary = c.location;
      } else if (uuid.status().code() == ErrorCode::kBackupNotFound) {
        primary_error = uuid.status();
      } else {
        return uuid.status();  // What the locator names is there but broken: say so.
      }
      continue;
    }
    if (uuid.ok() && other_uuids.size() < 3) {
      other_uuids.push_back(c.location + " holds another backup (uuid " + *uuid + ")");
    }
  }
  if (primary) return *primary;
  return NotFound(child, *search, prefix, primary_error, others, other_uuids);
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
