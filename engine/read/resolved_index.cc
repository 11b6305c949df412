#include "engine/read/resolved_index.h"

#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>

#include "engine/base/index_codec.h"
#include "engine/location/locator.h"
#include "engine/read/chain_walk.h"
#include "engine/storage/backup.h"
#include "engine/storage/base_candidates.h"

namespace stitchfs::engine {
namespace {

// Sections (index_codec.h): the entries' count, then tables of fixed-size records, then the
// two string areas.
constexpr uint32_t kHead = IndexTag("HEAD"), kLevels = IndexTag("LEVL"), kFiles = IndexTag("FILE"),
                   kFirst = IndexTag("FRST"), kExtents = IndexTag("EXTN"),
                   kOrigins = IndexTag("ORIG"), kNames = IndexTag("NAME"),
                   kTexts = IndexTag("TEXT");
constexpr uint32_t kTags[] = {kHead, kLevels, kFiles, kFirst, kExtents, kOrigins, kNames, kTexts};
// 2: tables 8-byte aligned, names of entries by reference. 3: locators without credentials.
// 4: in the index codec's container.
constexpr IndexKind kKind{"resolved index", {'S', 'T', 'F', 'S', 'R', 'I', 'D', 'X'}, 4, kTags};

struct Head {
  uint64_t num_entries;  // Of the top's manifest.
};

struct Text {  // A string of the string area.
  uint32_t offset, length;
};

struct LevelRecord {
  uint64_t folder_dev, folder_ino;
  uint64_t dev, ino, size;  // The `.backup`'s identity.
  int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
  int64_t time_sec;
  Text path, uuid, timestamp, base_backup;  // base_backup: StripLocatorCredentials.
  uint64_t flags;                           // kLocatorStripped.
};

// The level's locator held credentials: `base_backup` is what is left without them.
constexpr uint64_t kLocatorStripped = 1;

using FlatExtent = ResolvedBackup::FlatExtent;
using Origin = ResolvedBackup::Origin;
static_assert(std::is_trivially_copyable_v<FlatExtent> && sizeof(FlatExtent) == 16);
static_assert(std::is_trivially_copyable_v<Origin> && sizeof(Origin) == 8);

Status Stale(const std::string& why) { return Status::WrongBaseBackup("index: " + why); }
Status Malformed(const std::string& why) { return Status::BackupDamaged("index: " + why); }

Text Intern(std::string* area, const std::string& s) {
  Text t{static_cast<uint32_t>(area->size()), static_cast<uint32_t>(s.size())};
  *area += s;
  return t;
}

std::optional<std::string> TextOf(std::string_view area, Text t) {
  if (t.offset > area.size() || t.length > area.size() - t.offset) return std::nullopt;
  return std::string(area.substr(t.offset, t.length));
}

LevelRecord RecordOf(const ResolvedBackup::Level& l, std::string* area) {
  const ManifestIdentity& m = l.manifest;
  return {l.folder->identity().dev,
          l.folder->identity().ino,
          m.dev,
          m.ino,
          m.size,
          m.mtime.sec,
          m.mtime.nsec,
          m.ctime.sec,
          m.ctime.nsec,
          l.mtime_sec,
          Intern(area, l.path()),
          Intern(area, l.uuid),
          Intern(area, l.timestamp),
          Intern(area, StripLocatorCredentials(l.base_backup)),
          l.base_stripped || LocatorHasCredentials(l.base_backup) ? kLocatorStripped : 0};
}

ManifestIdentity IdentityOf(const LevelRecord& r) {
  return {r.dev, r.ino, r.size, {r.mtime_sec, r.mtime_nsec}, {r.ctime_sec, r.ctime_nsec}};
}

}  // namespace

std::string ResolvedIndex::Encode(const ResolvedBackup& r) {
  std::string strings;
  std::vector<LevelRecord> levels;
  const ResolvedTables& t = r.tables();
  for (const auto& l : t.levels) levels.push_back(RecordOf(*l, &strings));
  IndexEncoder e(kKind);
  e.AddRecord(kHead, Head{r.top().manifest().num_entries()});
  e.AddArray(kLevels, std::span<const LevelRecord>(levels));
  e.AddArray(kFiles, t.files);
  e.AddArray(kFirst, t.first_extent);
  e.AddArray(kExtents, t.extents);
  e.AddArray(kOrigins, t.origins);
  e.Add(kNames, t.names);
  e.Add(kTexts, strings);
  return e.Finish();
}

namespace {

struct Decoded {  // Views of the index's bytes.
  Head head;
  std::span<const LevelRecord> levels;
  std::span<const ResolvedBackup::DataFileName> files;
  std::span<const uint32_t> first;
  std::span<const FlatExtent> extents;
  std::span<const Origin> origins;
  std::string_view names, strings;
};

// The sections of `bytes`, every table viewed in place (the codec checks the container).
StatusOr<Decoded> ReadRecords(std::string_view bytes) {
  ASSIGN_OR_RETURN(const IndexView v, IndexView::Open(bytes, kKind));
  Decoded d;
  RETURN_IF_ERROR(v.Record(kHead, &d.head));
  RETURN_IF_ERROR(v.ViewArray(kLevels, &d.levels));
  RETURN_IF_ERROR(v.ViewArray(kFiles, &d.files));
  RETURN_IF_ERROR(v.ViewArray(kFirst, &d.first));
  RETURN_IF_ERROR(v.ViewArray(kExtents, &d.extents));
  RETURN_IF_ERROR(v.ViewArray(kOrigins, &d.origins));
  RETURN_IF_ERROR(v.Bytes(kNames, &d.names));
  RETURN_IF_ERROR(v.Bytes(kTexts, &d.strings));
  return d;
}

// True if `path` is where the locator of `child` may lead (FindBaseCandidates).
bool IsCandidate(const ResolvedBackup::Level& child, const std::string& path,
                 const std::string& override, const ChainOptions& o) {
  auto search = FindBaseCandidates(child.base_backup, child.path(), o.locators, override);
  if (!search.ok()) return false;
  for (const BaseCandidate& c : search->candidates) {
    if (c.location == path) return true;
  }
  return false;
}

// The full locator of `child`, whose index kept it without credentials, read again from its
// `.backup` (the very one recorded): FindBaseCandidates hands its credentials to S3Keyring for
// the base's bucket, as a walk reading that manifest would. One header read, only for a level
// whose locator held credentials.
Status RecoverLocator(ResolvedBackup::Level& child, const ChainOptions& o) {
  ManifestIdentity id;
  FolderIdentity folder;
  auto h = ReadBackupHeader(*o.storage, child.path(), &id, &folder);
  if (!h.ok() || id != child.manifest || folder != child.folder->identity() ||
      StripLocatorCredentials(h->base_backup) != child.base_backup) {
    return Stale("base changed: " + child.path());
  }
  child.base_backup = std::move(h->base_backup);
  child.base_stripped = false;
  return Status::OK();
}

// Every level is where its child's locator leads under `o`, and is the folder and `.backup`
// recorded; fills `out` with the levels, their folders opened.
//
// An index keeps each locator without its credentials (StripLocatorCredentials), so the top's
// is compared in that form. That is as strict as comparing the full texts: the top's
// `.backup` must be the very one indexed (its identity), which fixes its text; and stripping
// keeps what says where the base is (a File or Disk locator whole, an S3 URL's scheme, host,
// bucket and key), so every check of where a base may be (IsCandidate, FindBaseCandidates on
// the stripped text) gives the same places as the full text would. Each base must then still
// be the folder and `.backup` recorded.
Status CheckLevels(const Decoded& d, const Backup& top, const ChainOptions& o,
                   std::vector<ResolvedBackup::Level>* out) {
  if (d.levels.size() < 2 || d.levels.size() > o.max_depth) return Malformed("depth");
  for (size_t j = 0; j < d.levels.size(); ++j) {
    const LevelRecord& rec = d.levels[j];
    auto path = TextOf(d.strings, rec.path);
    auto uuid = TextOf(d.strings, rec.uuid);
    auto timestamp = TextOf(d.strings, rec.timestamp);
    auto locator = TextOf(d.strings, rec.base_backup);
    if (!path || !uuid || !timestamp || !locator || rec.flags > kLocatorStripped) {
      return Malformed("strings");
    }
    bool stripped = rec.flags == kLocatorStripped;
    std::shared_ptr<const BackupFolder> folder = top.folder();
    if (j == 0) {
      const std::string& full = top.header().base_backup;
      if (*path != top.path() || IdentityOf(rec) != top.identity() || *uuid != top.header().uuid ||
          *locator != StripLocatorCredentials(full) || stripped != LocatorHasCredentials(full)) {
        return Stale("built for another .backup");
      }
      *locator = full;  // The top's own, with its credentials: it was read anyway.
      stripped = false;
    } else {
      ResolvedBackup::Level& child = out->back();
      if (child.base_stripped) RETURN_IF_ERROR(RecoverLocator(child, o));
      // Still a place the child's locator leads to (under these options); the uuid it had
      // when the index was made is the one the folder's unchanged `.backup` holds.
      if (!IsCandidate(child, *path, j == 1 ? o.base_override : std::string(), o)) {
        return Stale("base moved: " + *path);
      }
      // The folder and its `.backup` are the ones recorded (a folder replaced or rewritten has
      // others). The folder is opened now, as a walk opens it: a reader keeps reading it if
      // prune moves it aside while this backup is open (a folder opened only at the first read
      // would be gone by then: EIO on a kept backup).
      ASSIGN_OR_RETURN(folder, o.storage->OpenFolder(*path));
      auto manifest = o.storage->StatManifest(*path);
      if (folder->identity() != FolderIdentity{rec.folder_dev, rec.folder_ino} || !manifest.ok() ||
          *manifest != IdentityOf(rec)) {
        return Stale("base changed: " + *path);
      }
    }
    out->push_back({folder, *uuid, *timestamp, rec.time_sec, IdentityOf(rec), *locator, stripped});
  }
  return Status::OK();
}

// The data files and extents are in range, and each file's extents add up to its size. (The
// names of data files are checked where they are opened: Storage::OpenDataFile refuses a name
// that leaves its folder.)
Status CheckExtents(const Decoded& d, const Manifest& m) {
  const size_t n = m.num_entries();
  for (const auto& f : d.files) {
    const bool bad_name = f.length == ResolvedBackup::kEntryName
                              ? f.offset >= n
                              : f.offset > d.names.size() || f.length > d.names.size() - f.offset;
    if (f.level == 0 || f.level >= d.levels.size() || bad_name) return Malformed("data file");
  }
  if (d.head.num_entries != n || (!d.first.empty() && d.first.size() != n + 1) ||
      (!d.origins.empty() && d.origins.size() != n)) {
    return Malformed("counts");
  }
  for (size_t i = 0; i < n; ++i) {
    const uint64_t size = m.size(i), base_size = m.base_size(i);
    const bool rep = size > 0 && m.IsContentRep(i), uses_base = base_size > 0;
    const uint32_t from = d.first.empty() ? 0 : d.first[i];
    const uint32_t to = d.first.empty() ? 0 : d.first[i + 1];
    if (from > to || to > d.extents.size() || (from != to && !(rep && uses_base)) ||
        (rep && uses_base && from == to)) {
      return Malformed("extents of entry " + std::to_string(i));
    }
    uint64_t total = 0;
    for (uint32_t k = from; k < to; ++k) {
      const FlatExtent& x = d.extents[k];
      const bool own = x.file == ResolvedBackup::kOwnFile;
      if (own ? (x.level != 0 || k + 1 != to || x.length != size - base_size)
              : (x.file >= d.files.size() || d.files[x.file].level != x.level)) {
        return Malformed("extent of entry " + std::to_string(i));
      }
      total += x.length;
    }
    if (from != to && total != size) return Malformed("size of entry " + std::to_string(i));
    if (!d.origins.empty() && d.origins[i].level >= d.levels.size()) return Malformed("origin");
  }
  if (!d.first.empty() && (d.first[0] != 0 || d.first[n] != d.extents.size())) {
    return Malformed("extent table");
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<ResolvedBackup>> ResolvedIndex::Decode(const SharedBytes& bytes,
                                                                std::shared_ptr<const Backup> top,
                                                                const ChainOptions& o,
                                                                bool keep_origins) {
  ASSIGN_OR_RETURN(Decoded d, ReadRecords(bytes.view()));
  ResolvedTables r;
  RETURN_IF_ERROR(CheckExtents(d, top->manifest()));
  std::vector<ResolvedBackup::Level> levels;
  RETURN_IF_ERROR(CheckLevels(d, *top, o, &levels));
  for (ResolvedBackup::Level& l : levels) r.AddLevel(std::move(l));
  r.backing = bytes.owner();
  r.files = d.files;
  r.names = d.names;
  r.first_extent = d.first;
  r.extents = d.extents;
  if (keep_origins) r.origins = d.origins;
  return std::make_unique<ResolvedBackup>(std::move(top), o.storage, std::move(r));
}

}  // namespace stitchfs::engine
