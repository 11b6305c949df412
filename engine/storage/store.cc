#include "engine/storage/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <unordered_set>

#include "engine/location/archive_kind.h"
#include "engine/location/location.h"
#include "engine/storage/base_candidates.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {

bool IsBackupFolder(const std::string& dir) {
  auto id = StatManifest(dir);
  return id.ok() && id->has_value();
}

namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

ManifestIdentity StatIdentityOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size), FileTime::From(st.st_mtim),
          FileTime::From(st.st_ctim)};
}

// The store folder `name` in the open store `dir_fd`, if it is one: a folder holding a
// `.backup`, or an archive (by its name: whether it holds a `.backup` is learnt when it is
// opened, which indexes it).
std::optional<StoreFolder> Probe(int dir_fd, const std::string& store, const char* name) {
  struct stat st, mst;
  if (name[0] == '.' || ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return std::nullopt;
  }
  const bool archive = S_ISREG(st.st_mode) && LocationOf(name).is_archive();
  if (!S_ISDIR(st.st_mode) && !archive) return std::nullopt;
  const std::string manifest = std::string(name) + "/.backup";
  if (archive) {
    mst = st;
  } else if (::fstatat(dir_fd, manifest.c_str(), &mst, AT_SYMLINK_NOFOLLOW) != 0 ||
             !S_ISREG(mst.st_mode)) {
    return std::nullopt;
  }
  StoreFolder f;
  f.name = name;
  f.path = store == "/" ? "/" + f.name : store + "/" + f.name;
  f.folder = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  f.manifest = StatIdentityOf(mst);
  return f;
}

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

StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& store_path) {
  const std::string store = AbsolutePath(store_path);
  UniqueFd fd(::open(store.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR)
      return Status::BackupNotFound("store " + store + " not found", e);
    return Status::IOError("read store " + store, e);
  }
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd.get()));
  if (!dir) return Status::IOError("read store " + store, errno);
  const int dfd = fd.release();  // Now owned by `dir`.
  std::vector<StoreFolder> out;
  for (;;) {
    errno = 0;
    struct dirent* d = ::readdir(dir.get());
    if (d == nullptr) break;
    if (auto f = Probe(dfd, store, d->d_name)) out.push_back(std::move(*f));
  }
  if (errno != 0) return Status::IOError("read store " + store, errno);
  std::sort(out.begin(), out.end(),
            [](const StoreFolder& a, const StoreFolder& b) { return a.name < b.name; });
  return out;
}

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
