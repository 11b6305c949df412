#include "fs/open_backups.h"

#include <malloc.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "engine/base/error_table.h"

namespace stitchfs::fs {

OpenBackups::OpenBackups(std::string store, const StoreOptions& options, Log log)
    : options_(options),
      index_(std::move(store), options.clock, std::move(log), options.chain.storage) {
  Rescan(/*force=*/true);
}

OpenBackups::Opened& OpenBackups::State(uint64_t k) {
  if (opened_.size() < k) opened_.resize(index_.size());
  return opened_[k - 1];
}

bool OpenBackups::Rescan(bool force) {
  std::unique_lock<std::mutex> lock(mu_);
  const engine::StoreChanges changes = index_.Rescan(lock, force);
  for (uint64_t k : changes.reset) State(k).view.reset();
  if (changes.scanned) DropStale();
  return !changes.reset.empty();
}

namespace {

// Is the `.backup` at `path` still `id` (false if gone, replaced or not stat'able)?
bool SameManifest(const std::string& path, const engine::ManifestIdentity& id) {
  auto now = engine::StatManifest(path);
  return now.ok() && *now == id;
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
  for (Opened& o : opened_) {
    if (!o.view) continue;
    const engine::ResolvedBackup& b = o.view->backup();
    for (size_t l = 1; l < b.depth(); ++l) {
      const auto& level = b.level(l);
      const engine::StoreSlot* s = index_.slot(index_.AtPath(level.path()));
      const bool same = s ? s->folder == level.folder->identity() && s->manifest == level.manifest
                          : SameManifest(level.path(), level.manifest);
      if (!same) {
        o.view.reset();  // Opened again, through the chain as it is now, on next use.
        break;
      }
    }
  }
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
      Opened& o = State(k);
      if (o.view) {
        o.last_use = ++clock_;
        return o.view;
      }
      if (!s->present) return engine::Status::EntryNotFound("Backup " + s->path + " is gone");
      path = s->path;
    }
    // Outside the lock: slow.
    auto backup = engine::ResolvedBackup::Open(path, options_.chain, Resolve());
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
  Opened& o = State(k);
  if (!index_.Show(k, (*backup)->top().manifest().ContentSignature())) {
    // Same uuid and time, other content: never under the same inode numbers.
    o.view.reset();
    return engine::Status::EntryNotFound("Backup " + s.path + " shows other content now");
  }
  if (!o.view) {
    AttrOptions attr = options_.attr;
    attr.default_mtime_sec = engine::CivilToEpochSeconds(s.time);
    o.view = std::make_shared<BackupView>(std::move(backup).value(), attr, 0);
    o.bytes = o.view->MemoryUsage();
  }
  o.last_use = ++clock_;
  std::shared_ptr<const BackupView> view = o.view;
  Evict();
  return view;
}

void OpenBackups::Evict() {
  size_t open = 0, bytes = 0;
  for (const Opened& o : opened_) {
    open += o.view != nullptr;
    bytes += o.view ? o.bytes : 0;
  }
  bool evicted = false;
  while (open > options_.max_open_backups || (bytes > options_.max_open_bytes && open > 1)) {
    Opened* victim = nullptr;
    for (Opened& o : opened_) {
      if (o.view && o.view.use_count() == 1 && (!victim || o.last_use < victim->last_use)) {
        victim = &o;
      }
    }
    if (!victim) break;  // Everything is in use right now.
    victim->view.reset();
    bytes -= victim->bytes;
    --open;
    evicted = true;
  }
#ifdef __GLIBC__
  if (evicted) ::malloc_trim(0);  // Give the freed manifests back to the system.
#endif
}

uint64_t OpenBackups::NumInodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = index_.size();
  for (const Opened& o : opened_) n += o.view ? o.view->NumInodes() - 1 : 0;
  return n;
}

}  // namespace stitchfs::fs
