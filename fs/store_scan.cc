// StoreView's view of the store folder: scanning it, noticing backups that appear, go or are
// replaced in place, and opening (and evicting) the backups themselves.
#include <malloc.h>

#include <chrono>

#include "engine/store.h"
#include "fs/store_view.h"

namespace stitchfs::fs {
namespace {

constexpr int64_t kRescanNs = 1000000000;  // New backups show up within a second.

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void StoreView::Rescan(bool force) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now = NowNs();
    if (scanning_ || (!force && now - last_scan_ns_ < kRescanNs)) return;
    scanning_ = true;
    last_scan_ns_ = now;
  }
  std::vector<Scanned> scanned = ScanOutsideLock();
  std::lock_guard<std::mutex> lock(mu_);
  Merge(std::move(scanned), NowNs());
  scanning_ = false;
}

std::vector<StoreView::Scanned> StoreView::ScanOutsideLock() const {
  std::vector<Scanned> out;
  auto folders = engine::ScanStore(store_);
  if (!folders.ok()) {
    log_(folders.status().ToString());
    return out;
  }
  for (engine::StoreFolder& f : *folders) {
    Scanned s{std::move(f)};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = slot_by_name_.find(s.folder.name);
      const Slot* old = it == slot_by_name_.end() ? nullptr : &slots_[it->second - 1];
      s.known = old && old->folder == s.folder.folder && old->manifest == s.folder.manifest;
    }
    if (!s.known) {
      engine::FolderIdentity folder;
      s.header = engine::ReadBackupHeader(s.folder.path, &s.folder.manifest, &folder);
      if (s.header.ok() && folder != s.folder.folder) {
        s.header =
            engine::Status::BackupNotFound("Backup " + s.folder.path + " changed while read");
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

StoreView::Slot StoreView::NewSlot(const Scanned& sc) const {
  Slot s;
  s.name = sc.folder.name;
  s.path = sc.folder.path;
  s.folder = sc.folder.folder;
  s.manifest = sc.folder.manifest;
  if (sc.header.ok()) {
    s.uuid = sc.header->uuid;
    s.timestamp = sc.header->timestamp;
    s.time = sc.header->time;
  } else {
    s.error = sc.header.status();
  }
  return s;
}

void StoreView::Merge(std::vector<Scanned> scanned, int64_t now) const {
  std::map<std::string, bool> seen;
  for (const Scanned& sc : scanned) {
    seen[sc.folder.name] = true;
    auto it = slot_by_name_.find(sc.folder.name);
    Slot* old = it == slot_by_name_.end() ? nullptr : &slots_[it->second - 1];
    if (old && old->folder == sc.folder.folder && old->manifest == sc.folder.manifest) {
      if (!old->present) change_ns_ = now;
      old->present = true;
      continue;
    }
    if (old && sc.known) continue;  // Replaced again since the scan looked: next time.
    if (old && sc.header.ok() && sc.header->uuid == old->uuid &&
        sc.header->timestamp == old->timestamp) {
      // The same backup rewritten in place (prune's flattening keeps its uuid and time): it
      // keeps its slot, and View checks that it shows the same content.
      old->folder = sc.folder.folder;
      old->manifest = sc.folder.manifest;
      old->view.reset();
      if (!old->present) change_ns_ = now;
      old->present = true;
      continue;
    }
    if (old) {  // Replaced in place: the old slot (and its inode numbers) retire.
      old->present = false;
      old->view.reset();
    }
    slots_.push_back(NewSlot(sc));
    slot_by_name_[sc.folder.name] = slots_.size();
    change_ns_ = now;
  }
  for (auto& s : slots_) {
    if (s.present && !seen.count(s.name)) {
      s.present = false;
      s.view.reset();
      change_ns_ = now;
    }
  }
  slot_by_uuid_.clear();
  std::map<std::string, const Slot*> by_path;
  for (size_t k = 0; k < slots_.size(); ++k) {
    const Slot& s = slots_[k];
    if (!s.present) continue;
    if (!s.uuid.empty()) slot_by_uuid_.emplace(s.uuid, k + 1);
    by_path[s.path] = &s;
  }
  DropStaleViews(by_path);
}

void StoreView::DropStaleViews(const std::map<std::string, const Slot*>& by_path) const {
  for (Slot& s : slots_) {
    if (!s.view) continue;
    const engine::ResolvedBackup& b = s.view->backup();
    for (size_t l = 1; l < b.depth(); ++l) {
      const auto& level = b.level(l);
      auto it = by_path.find(level.path());
      const bool same = it != by_path.end() ? it->second->folder == level.folder->identity() &&
                                                  it->second->manifest == level.manifest
                                            : engine::StatManifest(level.path()) == level.manifest;
      if (!same) {
        s.view.reset();  // Opened again, through the chain as it is now, on next use.
        break;
      }
    }
  }
}

std::shared_ptr<const BackupView> StoreView::View(uint64_t k) const {
  for (int attempt = 0;; ++attempt) {
    std::string path;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (k == 0 || k > slots_.size()) return nullptr;
      Slot& s = slots_[k - 1];
      if (s.view) {
        s.last_use = ++clock_;
        return s.view;
      }
      if (!s.present) return nullptr;
      path = s.path;
    }
    engine::ResolveOptions resolve;
    if (options_.share_inodes) {  // Origins only in backups that have an inode range here.
      resolve.origins = true;
      resolve.origin_ok = [this](const engine::ManifestHeader& h) {
        std::lock_guard<std::mutex> lock(mu_);
        return SlotOfUuid(h.uuid) != 0;
      };
    }
    // Outside the lock: slow.
    auto backup = engine::ResolvedBackup::Open(path, options_.chain, resolve);
    const uint64_t signature = backup.ok() ? (*backup)->top().manifest().ContentSignature() : 0;
    bool again = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto view = Install(k, std::move(backup), signature, &again);
      if (!again || attempt > 0) return view;
    }
    Rescan(/*force=*/true);  // The folder changed since the last scan: look, then try again.
  }
}

std::shared_ptr<const BackupView> StoreView::Install(
    uint64_t k, engine::StatusOr<std::shared_ptr<const engine::ResolvedBackup>> backup,
    uint64_t signature, bool* again) const {
  Slot& s = slots_[k - 1];
  if (backup.ok() && ((*backup)->top().folder()->identity() != s.folder ||
                      (*backup)->top().identity() != s.manifest)) {
    *again = true;
    backup = engine::Status::BackupNotFound("Backup " + s.path + " was replaced while opened");
  }
  if (!backup.ok()) {
    s.error = backup.status();
    log_(backup.status().ToString());
    return nullptr;
  }
  if (!s.present) return nullptr;  // Retired while it was being opened.
  if (s.signature != 0 && s.signature != signature) {
    Renumber(k);  // Same uuid and time, other content: never under the same inode numbers.
    return nullptr;
  }
  s.signature = signature;
  if (!s.view) {
    AttrOptions attr = options_.attr;
    attr.default_mtime_sec = engine::CivilToEpochSeconds(s.time);
    s.view = std::make_shared<BackupView>(*backup, attr, 0);
    s.bytes = s.view->MemoryUsage();
  }
  s.last_use = ++clock_;
  Evict();
  return s.view;
}

void StoreView::Renumber(uint64_t k) const {
  Slot fresh = slots_[k - 1];
  fresh.view.reset();
  fresh.signature = 0;
  Slot& old = slots_[k - 1];
  old.present = false;
  old.view.reset();
  slots_.push_back(std::move(fresh));
  slot_by_name_[slots_.back().name] = slots_.size();
  if (!slots_.back().uuid.empty()) slot_by_uuid_[slots_.back().uuid] = slots_.size();
  change_ns_ = NowNs();
}

void StoreView::Evict() const {
  size_t open = 0, bytes = 0;
  for (const auto& s : slots_) {
    open += s.view != nullptr;
    bytes += s.view ? s.bytes : 0;
  }
  bool evicted = false;
  while (open > options_.max_open_backups || (bytes > options_.max_open_bytes && open > 1)) {
    Slot* victim = nullptr;
    for (auto& s : slots_) {
      if (s.view && s.view.use_count() == 1 && (!victim || s.last_use < victim->last_use))
        victim = &s;
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

}  // namespace stitchfs::fs
