#include "fs/open_backups.h"

#include <malloc.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "engine/base/error_table.h"
#include "engine/read/open_resolved.h"

namespace stitchfs::fs {

OpenBackups::OpenBackups(std::string store, const StoreOptions& options, Log log)
    : options_(options),
      index_(std::move(store), options.chain.storage, options.clock, std::move(log)) {
  Rescan(/*force=*/true);
}

bool OpenBackups::Rescan(bool force) {
  std::unique_lock<std::mutex> lock(mu_);
  const engine::StoreChanges changes = index_.Rescan(lock, force);
  for (uint64_t k : changes.reset) opened_.Erase(k);
  if (changes.scanned) DropStale();
  return !changes.reset.empty();
}

namespace {

// Is the `.backup` at `path` in `storage` still `id` (false if gone, replaced or not stat'able)?
bool SameManifest(const engine::Storage& storage, const std::string& path,
                  const engine::ManifestIdentity& id) {
  auto now = storage.StatManifest(path);
  return now.ok() && *now && **now == id;
}

// The error a reader gets for a backup that does not open: EIO (logged with the reason, as
// fuse_ops logs every EIO) whatever the reason's code, but for what is true of a read too
// (ENOENT: gone; ENOMEM; EACCES: the storage refused). A base locator that does not parse
// (kInvalidArgument) would otherwise be EINVAL, and an Azure base (kNotSupported) EROFS.
engine::Status Unopenable(const engine::Status& s) {
  const int err = engine::ErrnoFor(s);
  if (err == EIO || err == ENOENT || err == ENOMEM || err == EACCES) return s;
  return engine::Status(engine::ErrorCode::kIOError, s.ToString(), EIO);
}

}  // namespace

void OpenBackups::DropStale() {
  std::vector<uint64_t> stale;
  opened_.ForEach([&](uint64_t k, const Opened& o) {
    const engine::ResolvedBackup& b = o.view->backup();
    for (size_t l = 1; l < b.depth(); ++l) {
      const auto& level = b.level(l);
      const engine::StoreSlot* s = index_.slot(index_.AtPath(level.path()));
      const bool same = s ? s->folder == level.folder->identity() && s->manifest == level.manifest
                          : SameManifest(*options_.chain.storage, level.path(), level.manifest);
      if (!same) {
        stale.push_back(k);
        break;
      }
    }
  });
  // Opened again, through the chain as it is now, on next use.
  for (uint64_t k : stale) opened_.Erase(k);
}

engine::ResolveOptions OpenBackups::Resolve() {
  engine::ResolveOptions resolve;
  if (options_.share_inodes) {  // Origins only in backups that have an inode range here.
    resolve.origins = true;
    resolve.origin_ok = [this](const engine::ManifestHeader& h) {
      std::lock_guard<std::mutex> lock(mu_);
      return index_.FirstWithUuid(h.uuid) != 0;
    };
  }
  return resolve;
}

engine::StatusOr<std::shared_ptr<const BackupView>> OpenBackups::View(uint64_t k) {
  int quiet = 0;  // Failed attempts after which a rescan saw no change.
  for (int attempt = 1;; ++attempt) {
    std::string path;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const engine::StoreSlot* s = index_.slot(k);
      if (s == nullptr) return engine::Status::EntryNotFound("no such backup");
      if (const Opened* o = opened_.Get(k)) return o->view;
      if (!s->present) return engine::Status::EntryNotFound("Backup " + s->path + " is gone");
      path = s->path;
    }
    // Outside the lock: slow.
    auto backup = engine::OpenResolved(path, options_.chain, Resolve());
    bool again = false;
    auto view = [&] {
      std::lock_guard<std::mutex> lock(mu_);
      return Install(k, std::move(backup), &again);
    }();
    if (view.ok() || view.status().code() == engine::ErrorCode::kEntryNotFound) return view;
    if (attempt >= kOpenAttempts) return Unopenable(view.status());
    // The folder or a base's may be being rewritten in place (prune flattens a chain one level
    // after another): look at the store again and retry at once if it changed, else a little
    // later, twice; a backup that stays unreadable is an error after that.
    if (!Rescan(/*force=*/true) && !again) {
      if (++quiet > 2) return Unopenable(view.status());
      std::this_thread::sleep_for(std::chrono::milliseconds(20 * quiet));
    }
  }
}

engine::StatusOr<std::shared_ptr<const BackupView>> OpenBackups::Install(
    uint64_t k, engine::StatusOr<std::shared_ptr<const engine::ResolvedBackup>> backup,
    bool* again) {
  const engine::StoreSlot& s = *index_.slot(k);
  if (backup.ok() && ((*backup)->top().folder()->identity() != s.folder ||
                      (*backup)->top().identity() != s.manifest)) {
    *again = true;
    return engine::Status::BackupNotFound("Backup " + s.path + " was replaced while opened");
  }
  if (!backup.ok()) return backup.status();
  if (!s.present) return engine::Status::EntryNotFound("Backup " + s.path + " is gone");
  if (!index_.Show(k, (*backup)->top().manifest().ContentSignature())) {
    // Same uuid and time, other content: never under the same inode numbers.
    opened_.Erase(k);
    return engine::Status::EntryNotFound("Backup " + s.path + " shows other content now");
  }
  const Opened* o = opened_.Get(k);
  if (!o) {
    AttrOptions attr = options_.attr;
    attr.default_mtime_sec = engine::CivilToEpochSeconds(s.time);
    auto view = std::make_shared<BackupView>(std::move(backup).value(), attr, 0);
    const size_t bytes = view->MemoryUsage();
    o = &opened_.Put(k, Opened{std::move(view)}, bytes);
  }
  std::shared_ptr<const BackupView> view = o->view;
  Evict();
  return view;
}

void OpenBackups::Evict() {
  // Beyond the count, or beyond the bytes while more than one is open; never one in use now.
  const auto in_use = [](uint64_t, const Opened& o) { return o.view.use_count() > 1; };
  size_t evicted = opened_.Trim({.max_entries = options_.max_open_backups}, in_use,
                                [](uint64_t, const Opened&) {});
  evicted += opened_.Trim({.max_weight = options_.max_open_bytes, .min_entries = 1}, in_use,
                          [](uint64_t, const Opened&) {});
#ifdef __GLIBC__
  if (evicted > 0) ::malloc_trim(0);  // Give the freed manifests back to the system.
#endif
}

uint64_t OpenBackups::NumInodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = index_.size();
  opened_.ForEach([&](uint64_t, const Opened& o) { n += o.view->NumInodes() - 1; });
  return n;
}

}  // namespace stitchfs::fs
