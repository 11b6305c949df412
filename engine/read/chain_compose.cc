#include "engine/read/chain_compose.h"

#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <vector>

#include "engine/base/civil_time.h"
#include "engine/format/manifest_cache.h"
#include "engine/read/chain_resolve.h"
#include "engine/read/chain_walk.h"
#include "engine/read/resolved_index.h"

namespace stitchfs::engine {
namespace {

bool UsesBase(const Manifest& m) {
  for (size_t i = 0; i < m.num_entries(); ++i) {
    if (m.entry(i).uses_base()) return true;
  }
  return false;
}

// The per-user cache's key for the index of the backup at `path` whose `.backup` is `id`.
std::string CacheKey(const std::string& path, const ManifestIdentity& id) {
  std::string key = path;
  for (int64_t v :
       {static_cast<int64_t>(id.dev), static_cast<int64_t>(id.ino), static_cast<int64_t>(id.size),
        id.mtime.sec, id.mtime.nsec, id.ctime.sec, id.ctime.nsec}) {
    key += '\0';
    key += std::to_string(v);
  }
  return key;
}

// For a backup that reads nothing from a base: every file's origin is itself, what
// ResolvedBackup::origin gives when no origins were kept, so none are computed.
ResolveOptions Alone() { return ResolveOptions(); }

ResolveOptions Full() {
  ResolveOptions r;
  r.origins = true;
  return r;
}

// The origins of `r` as `ro` asks: none, or stopped at the first base `ro.origin_ok` refuses
// (at the level above it, found by name in that level's manifest: one more manifest read);
// nullopt when they stay as they are.
std::optional<std::vector<ResolvedBackup::Origin>> OriginsAsAsked(
    const ResolvedBackup& r, std::span<const ResolvedBackup::Origin> all, const ResolveOptions& ro,
    const ChainOptions& o) {
  if (!ro.origins) return std::vector<ResolvedBackup::Origin>();
  if (!ro.origin_ok || all.empty()) return std::nullopt;
  size_t stop = 0;
  for (size_t j = 1; j < r.depth() && stop == 0; ++j) {
    ManifestHeader h;
    h.uuid = r.level(j).uuid;
    h.timestamp = r.level(j).timestamp;
    if (!ro.origin_ok(h)) stop = j;
  }
  if (stop == 0) return std::nullopt;
  std::shared_ptr<const Backup> above;
  if (stop > 1) {
    auto b = OpenBackup(r.level(stop - 1).path(), o);
    if (b.ok() && (*b)->identity() == r.level(stop - 1).manifest) above = std::move(*b);
  }
  const Manifest& m = r.top().manifest();
  std::vector<ResolvedBackup::Origin> origins(all.begin(), all.end());
  for (uint32_t i = 0; i < origins.size(); ++i) {
    if (origins[i].level < stop) continue;
    auto at = above ? above->manifest().FindByName(m.name(i)) : std::nullopt;
    origins[i] =
        at ? ResolvedBackup::Origin{static_cast<uint32_t>(stop - 1), static_cast<uint32_t>(*at)}
           : ResolvedBackup::Origin{0, i};
  }
  return origins;
}

constexpr uint32_t kNoEntry = UINT32_MAX;

// For each entry of `m`, the entry `bm.FindByName` gives for its name (kNoEntry if none): one
// merge of the two name orders rather than a search per entry.
std::vector<uint32_t> SameNames(const Manifest& m, const Manifest& bm) {
  std::vector<uint32_t> out(m.num_entries(), kNoEntry);
  std::vector<bool> first(m.num_entries(), false);  // The first entry of its name.
  const std::span<const uint32_t> a = m.by_name();
  const std::span<const uint32_t> b = bm.by_name();
  size_t j = 0;
  for (uint32_t i : a) {
    first[i] = true;
    const std::string_view name = m.name(i);
    while (j < b.size() && bm.name(b[j]) < name) ++j;
    if (j < b.size() && bm.name(b[j]) == name) out[i] = b[j];
  }
  for (uint32_t i = 0; i < m.num_entries(); ++i) {  // Names that repeat: rare.
    if (first[i]) continue;
    if (auto k = bm.FindByName(m.name(i))) out[i] = static_cast<uint32_t>(*k);
  }
  return out;
}

// Opens chains as chain_compose.h says. Not thread-safe.
class ChainComposer {
 public:
  static StatusOr<std::unique_ptr<ResolvedBackup>> OpenTop(std::shared_ptr<const Backup> top,
                                                           const ChainOptions& options,
                                                           const ResolveOptions& r) {
    if (r.prefixes) return ResolveByWalk(std::move(top), options, r);
    ASSIGN_OR_RETURN(auto out, ChainComposer(options, true).OpenUp(std::move(top)));
    if (auto origins = OriginsAsAsked(*out, out->tables().origins, r, options)) {
      ResolvedTables t = out->tables();
      t.SetOrigins(std::move(*origins));
      out = std::make_unique<ResolvedBackup>(out->shared_top(), options.storage, std::move(t));
    }
    return out;
  }

  ChainComposer(const ChainOptions& o, bool remember_top) : o_(o), remember_top_(remember_top) {}

  static Status WriteIndex(const std::string& dir, const ResolvedBackup& base,
                           const ChainOptions& options) {
    ASSIGN_OR_RETURN(std::shared_ptr<const Backup> top, OpenBackup(dir, options));
    // With one base, opening reads that base's manifest, about what an index would cost.
    if (!UsesBase(top->manifest()) || base.depth() < 2) return Status::OK();
    RETURN_IF_ERROR(CheckChain(*top, base, options));
    auto r = ChainComposer(options, false).Compose(top, base);
    return options.storage->WriteIndex(*top->folder(), ResolvedIndex::Encode(*r));
  }

  // `top` resolved with origins: from its index; else down the chain by headers alone to the
  // first level that resolves by itself (an index, a full backup, or where the way down ends:
  // resolved as Open does, which reports whatever stopped it), then up, composing each level
  // from the one below (each manifest read once; the index of every kCheckpoint-th level and
  // of the top kept in the cache).
  StatusOr<std::unique_ptr<ResolvedBackup>> OpenUp(std::shared_ptr<const Backup> top) {
    if (!UsesBase(top->manifest())) return ResolveByWalk(std::move(top), At(0), Alone());
    if (auto r = FromIndex(top, At(0))) return r;
    std::vector<std::string> paths{top->path()};
    std::unique_ptr<ResolvedBackup> below = Down(*top, paths);
    const size_t d = paths.size() - 1;
    if (!below) {
      ASSIGN_OR_RETURN(std::shared_ptr<const Backup> b, Level(top, paths, d));
      ASSIGN_OR_RETURN(below, Open(std::move(b), d));
    }
    for (size_t j = d; j-- > 0;) {
      ASSIGN_OR_RETURN(std::shared_ptr<const Backup> b, Level(top, paths, j));
      if (!UsesBase(b->manifest())) {
        ASSIGN_OR_RETURN(below, ResolveByWalk(std::move(b), At(j), Alone()));
        continue;
      }
      RETURN_IF_ERROR(CheckChain(*b, *below, At(j)));
      below = Compose(std::move(b), *below);
      if (j > 0 ? IsCheckpoint(below->depth()) : remember_top_) Remember(*below);
    }
    return below;
  }

  // `top` (at `depth` below the backup first asked for) resolved with origins, recursively.
  StatusOr<std::unique_ptr<ResolvedBackup>> Open(std::shared_ptr<const Backup> top, size_t depth) {
    const ChainOptions o = At(depth);
    if (!UsesBase(top->manifest())) return ResolveByWalk(std::move(top), o, Alone());
    if (auto r = FromIndex(top, o)) return r;
    if (depth >= kMaxCompose) {
      ASSIGN_OR_RETURN(auto r, ResolveByWalk(std::move(top), o, Full()));
      Remember(*r);
      return r;
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const Backup> base_top, OpenBaseOf(*top, 0, o));
    RETURN_IF_ERROR(CheckBase(*top, *base_top));
    // Manifests are held while the levels below open only within a budget; the others are
    // opened again afterwards (from the caches when large).
    const std::string dir = top->path();
    const size_t bytes = top->manifest_bytes();
    const bool hold = held_ + bytes <= kHoldBytes;
    if (hold) held_ += bytes;
    if (!hold) top.reset();
    auto base = Open(std::move(base_top), depth + 1);
    if (hold) held_ -= bytes;
    if (!base.ok()) return base.status();
    const bool reopened = !top;
    if (reopened) {
      ASSIGN_OR_RETURN(top, OpenBackup(dir, o));
    }
    // A manifest held throughout was checked against this base above.
    RETURN_IF_ERROR(CheckChain(*top, **base, o, /*check_base=*/reopened));
    auto r = Compose(std::move(top), **base);
    if (depth > 0 || remember_top_) Remember(*r);
    return r;
  }

 private:
  // The options for opening the backup `depth` levels down: --base applies to the first only.
  ChainOptions At(size_t depth) const {
    ChainOptions o = o_;
    if (depth > 0) o.base_override.clear();
    o.max_depth = o_.max_depth > depth ? o_.max_depth - depth : 1;
    return o;
  }

  // Level `j` of the way down: `top`, or the backup at paths[j].
  StatusOr<std::shared_ptr<const Backup>> Level(const std::shared_ptr<const Backup>& top,
                                                const std::vector<std::string>& paths,
                                                size_t j) const {
    if (j == 0) return top;
    return OpenBackup(paths[j], At(j));
  }

  // The way down from `top` (paths[0]): appends the path of each base, read by its header
  // alone, until one that resolves from an index (returned) or the last one reached.
  std::unique_ptr<ResolvedBackup> Down(const Backup& top, std::vector<std::string>& paths) const {
    std::set<std::string> uuids{top.header().uuid};
    ManifestHeader child = top.header();
    for (size_t j = 1; j + 1 < o_.max_depth && !child.base_backup.empty(); ++j) {
      std::map<std::string, std::pair<ManifestHeader, ManifestIdentity>> read;
      auto header_at = [&](const std::string& location) -> StatusOr<std::string> {
        ManifestIdentity id;
        FolderIdentity folder;
        ASSIGN_OR_RETURN(ManifestHeader h, ReadBackupHeader(*o_.storage, location, &id, &folder));
        std::string uuid = h.uuid;
        read[location] = {std::move(h), id};
        return uuid;
      };
      auto path = FindBase(paths.back(), child, j - 1, o_, "", header_at);
      if (!path.ok()) return nullptr;
      auto& [header, id] = read.at(*path);
      if (!uuids.insert(header.uuid).second) return nullptr;
      paths.push_back(*path);
      if (auto bytes = FindIndex(*path, id)) {
        auto b = OpenBackup(*path, At(j));
        if (!b.ok()) return nullptr;
        auto r = ResolvedIndex::Decode(*bytes, *b, At(j), /*keep_origins=*/true);
        if (r.ok()) return std::move(*r);
        if (auto other = FromIndex(*b, At(j))) return other;  // (Stale: the other copy, if any.)
      }
      child = std::move(header);
    }
    return nullptr;
  }

  // An index of the backup at `path` whose `.backup` is `id` (the cache's copy, else its own, as
  // FromIndex prefers), found without reading its manifest; nullopt if it has none.
  std::optional<SharedBytes> FindIndex(const std::string& path, const ManifestIdentity& id) const {
    if (o_.cache != nullptr) {
      if (auto cached = o_.cache->LoadIndex(CacheKey(path, id))) return cached;
    }
    auto folder = o_.storage->OpenFolder(path);
    if (!folder.ok()) return std::nullopt;
    auto own = o_.storage->ReadIndex(**folder);
    if (!own.ok()) return std::nullopt;
    return std::move(*own);
  }

  // The per-user cache's copy first: mapped, so its pages are shared, reclaimable and released
  // by a mount after use, where the backup's own index (not ours to map: it could be cut short
  // under us) is read into memory of the process's own; a valid own index is copied there for
  // the next open. Either is trusted only as ResolvedIndex::Decode checks it against the chain
  // as it is now.
  std::unique_ptr<ResolvedBackup> FromIndex(const std::shared_ptr<const Backup>& top,
                                            const ChainOptions& o) const {
    const ManifestCache* cache = o_.cache;
    const std::string key = cache ? CacheKey(top->path(), top->identity()) : std::string();
    if (cache != nullptr) {
      if (auto cached = cache->LoadIndex(key)) {
        auto r = ResolvedIndex::Decode(*cached, top, o, /*keep_origins=*/true);
        if (r.ok()) return std::move(*r);
        cache->DropIndex(key);
      }
    }
    auto own = o.storage->ReadIndex(*top->folder());
    if (!own.ok()) return nullptr;
    auto r = ResolvedIndex::Decode(*own, top, o, /*keep_origins=*/true);
    if (!r.ok()) return nullptr;
    if (cache != nullptr) cache->StoreIndex(key, own->view());
    return std::move(*r);
  }

  void Remember(const ResolvedBackup& r) const {
    const ManifestCache* cache = o_.cache;
    if (cache != nullptr && r.depth() > 1) {
      cache->StoreIndex(CacheKey(r.top().path(), r.top().identity()), ResolvedIndex::Encode(r));
    }
  }

  // `base` (resolved) may serve as the base of `top`: what it is, the depth, no loop.
  static Status CheckChain(const Backup& top, const ResolvedBackup& base, const ChainOptions& o,
                           bool check_base = true) {
    if (check_base) RETURN_IF_ERROR(CheckBase(top, base.top()));
    if (base.depth() + 1 > o.max_depth) {
      return Status::WrongBaseBackup(top.Prefix() + "the chain of base backups is longer than " +
                                     std::to_string(o.max_depth));
    }
    for (size_t j = 0; j < base.depth(); ++j) {
      if (base.level(j).uuid == top.header().uuid) {
        return LoopError(top, base.level(j).path(), top.header().uuid);
      }
    }
    return Status::OK();
  }

  std::unique_ptr<ResolvedBackup> Compose(std::shared_ptr<const Backup> top,
                                          const ResolvedBackup& base) const;
  static void ComposeExtents(const Manifest& m, const ResolvedBackup& base,
                             ResolvedTables::Built& t);
  static void ComposeOrigins(const Manifest& m, const ResolvedBackup& base,
                             ResolvedTables::Built& t);

  static constexpr size_t kHoldBytes = 8 << 20;
  // OpenUp keeps in the cache the index of each level below the top whose depth (levels from
  // it down to its full backup, the same however the chain grows above it) is a multiple of
  // the spacing for that depth: kCheckpoint, or an eighth of the depth rounded down to a
  // power of two, if more. A later open of any backup of the chain composes at most that many
  // levels before it finds one, and the indexes kept add up to a few times the top's (an index
  // holds every level and extent below it: one every 8 levels added up to depth^2 / 16).
  static constexpr size_t kCheckpoint = 8;
  static bool IsCheckpoint(size_t depth) {
    return depth % std::max(kCheckpoint, std::bit_floor(depth) / 8) == 0;
  }

  const ChainOptions& o_;
  const bool remember_top_;
  size_t held_ = 0;  // Bytes of the manifests of the levels above, held while this one opens.
};

std::unique_ptr<ResolvedBackup> ChainComposer::Compose(std::shared_ptr<const Backup> top,
                                                       const ResolvedBackup& base) const {
  const Backup& b = *top;
  ResolvedTables tables;
  tables.levels.reserve(base.depth() + 1);
  tables.AddLevel({b.folder(), b.header().uuid, b.header().timestamp,
                   CivilToEpochSeconds(b.header().time), b.identity(), b.header().base_backup});
  const auto& below = base.tables().levels;
  tables.levels.insert(tables.levels.end(), below.begin(), below.end());
  ResolvedTables::Built t;
  ComposeExtents(b.manifest(), base, t);
  ComposeOrigins(b.manifest(), base, t);
  tables.Adopt(std::move(t));
  return std::make_unique<ResolvedBackup>(std::move(top), o_.storage, std::move(tables));
}

// Each file that extends a file of the base: that file's extents, one level down, then its
// own tail.
void ChainComposer::ComposeExtents(const Manifest& m, const ResolvedBackup& base,
                                   ResolvedTables::Built& t) {
  const Manifest& bm = base.top().manifest();
  // Ours for each data file of the base: its bases' (by number), its own (by entry).
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> of_file(base.tables().files.size(), kNone), of_own(bm.num_entries(), kNone);
  const size_t n = m.num_entries();
  t.first_extent.assign(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    t.first_extent[i] = static_cast<uint32_t>(t.extents.size());
    const FileEntry e = m.entry(i);
    if (e.size == 0 || !m.IsContentRep(i) || !e.uses_base()) continue;
    const size_t b = *bm.FindByContent(e.base_size, e.base_checksum);  // CheckBase saw it.
    const size_t brep = base.Rep(b);
    for (const ResolvedBackup::FlatExtent& x : base.Extents(b)) {
      const bool own = x.file == ResolvedBackup::kOwnFile;
      uint32_t& id = own ? of_own[brep] : of_file[x.file];
      if (id == kNone) {
        id = static_cast<uint32_t>(t.files.size());
        const std::string_view name = own ? bm.entry(brep).data_file : base.FileName(x.file);
        if (name == m.name(i)) {
          t.files.push_back({x.level + 1, i, ResolvedBackup::kEntryName});
        } else {
          t.files.push_back({x.level + 1, static_cast<uint32_t>(t.names.size()),
                             static_cast<uint32_t>(name.size())});
          t.names += name;
        }
      }
      t.extents.push_back({id, x.level + 1, x.length});
    }
    if (e.has_data_file()) t.extents.push_back({ResolvedBackup::kOwnFile, 0, e.stored_size()});
  }
  t.first_extent[n] = static_cast<uint32_t>(t.extents.size());
  if (t.extents.empty()) t.first_extent.clear();
}

// A file unchanged since the base (same name, bytes, attributes) has the base file's origin.
void ChainComposer::ComposeOrigins(const Manifest& m, const ResolvedBackup& base,
                                   ResolvedTables::Built& t) {
  const Manifest& bm = base.top().manifest();
  const std::vector<uint32_t> same = SameNames(m, bm);
  t.origins.resize(m.num_entries());
  for (uint32_t i = 0; i < m.num_entries(); ++i) {
    const uint32_t b = same[i];
    if (b == kNoEntry || !Unchanged(m.entry(i), bm.entry(b))) {
      t.origins[i] = {0, i};
      continue;
    }
    const ResolvedBackup::Origin o = base.origin(b);
    t.origins[i] = {o.level + 1, o.entry};
  }
}

}  // namespace

StatusOr<std::unique_ptr<ResolvedBackup>> OpenChain(const std::string& dir,
                                                    const ChainOptions& options,
                                                    const ResolveOptions& r) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Backup> top, OpenBackup(dir, options));
  return ChainComposer::OpenTop(std::move(top), options, r);
}

StatusOr<std::unique_ptr<ResolvedBackup>> OpenChain(std::shared_ptr<const Backup> top,
                                                    const ChainOptions& options,
                                                    const ResolveOptions& r) {
  return ChainComposer::OpenTop(std::move(top), options, r);
}

Status WriteResolvedIndex(const std::string& dir, const ResolvedBackup& base,
                          const ChainOptions& options) {
  return ChainComposer::WriteIndex(dir, base, options);
}

}  // namespace stitchfs::engine
