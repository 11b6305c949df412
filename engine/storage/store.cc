#include "engine/storage/store.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "engine/location/location.h"
#include "engine/storage/base_candidates.h"

namespace stitchfs::engine {

namespace {

void FillFigures(StoreEntry& s) {
  const Manifest& m = s.backup->manifest();
  std::unordered_set<std::string_view> files;  // Each data file counts once (dedup shares).
  for (size_t i = 0; i < m.num_entries(); ++i) {
    const FileEntry e = m.entry(i);
    s.total_size += e.size;
    if (e.has_data_file() && files.insert(e.data_file).second) s.stored_bytes += e.stored_size();
  }
  s.stored_bytes += s.backup->manifest_bytes();
  s.time = s.backup->header().time;
}

// The store entry that entry `e`'s base locator names, if it is in the store: the first
// candidate (FindBaseCandidates) whose `.backup` is a store entry's (by identity) with the
// uuid `e` records (or, the primary one, any uuid: the uuid is checked when it is opened).
std::optional<size_t> BaseInStore(const Storage& storage, const StoreEntry& e,
                                  const std::vector<StoreEntry>& all,
                                  const std::map<ManifestIdentity, size_t>& by_id,
                                  const LocatorContext& locators) {
  if (!e.backup || e.backup->header().base_backup.empty()) return std::nullopt;
  const ManifestHeader& h = e.backup->header();
  auto search = FindBaseCandidates(h.base_backup, e.backup->path(), locators);
  if (!search.ok()) return std::nullopt;
  for (const BaseCandidate& c : search->candidates) {
    auto id = storage.StatManifest(c.location);
    if (!id.ok() || !*id) continue;
    auto it = by_id.find(**id);
    if (it == by_id.end()) continue;
    const std::string& uuid = all[it->second].backup->header().uuid;
    if (c.primary || uuid == h.base_backup_uuid) return it->second;
  }
  return std::nullopt;
}

// Chain depths from the base locators, following bases that are in the store (iteratively:
// chains may be very long; a loop stops at its start).
void FillDepths(const Storage& storage, std::vector<StoreEntry>& all,
                const LocatorContext& locators) {
  std::map<ManifestIdentity, size_t> by_id;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].backup) by_id[all[i].backup->identity()] = i;
  }
  std::vector<std::optional<size_t>> base(all.size());
  for (size_t i = 0; i < all.size(); ++i)
    base[i] = BaseInStore(storage, all[i], all, by_id, locators);
  for (size_t i = 0; i < all.size(); ++i) {
    int depth = 1;
    for (auto b = base[i]; b && *b != i && depth <= static_cast<int>(all.size()); b = base[*b]) {
      ++depth;
    }
    all[i].depth = depth;
  }
}

}  // namespace

StatusOr<std::vector<StoreEntry>> ListStore(const Context& ctx, const std::string& store) {
  RETURN_IF_ERROR(RequireStorage(ctx, "Store " + store));
  const Storage& storage = *ctx.storage;
  ASSIGN_OR_RETURN(std::vector<StoreFolder> folders, storage.ScanStore(store));
  std::vector<StoreEntry> out;
  for (const StoreFolder& f : folders) {
    StoreEntry s;
    s.name = f.name;
    s.path = f.path;
    s.folder = f.folder;
    auto b = Backup::Open(storage, s.path, ctx.cache);
    if (!b.ok() && b.status().code() == ErrorCode::kBackupNotFound &&
        LocationOf(s.path).is_archive()) {
      continue;  // An archive that holds no `.backup` (or is gone): not a backup, as a folder.
    }
    if (b.ok() && (*b)->folder()->identity() == f.folder) {
      s.backup = *b;
      FillFigures(s);
    } else {
      s.status = b.ok() ? Status::BackupNotFound("Backup " + s.path + " was replaced while listed")
                        : b.status();
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const StoreEntry& a, const StoreEntry& b) {
    return std::tie(a.time, a.name) < std::tie(b.time, b.name);
  });
  FillDepths(storage, out, ctx.locators);
  return out;
}

}  // namespace stitchfs::engine
