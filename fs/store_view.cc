#include "fs/store_view.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>

#include "engine/manifest_reader.h"
#include "engine/store.h"

namespace stitchfs::fs {
namespace {

constexpr double kStoreTimeout = 1.0;  // Seconds: new backups show up within this.
constexpr uint64_t kFirstLinkIno = 16;
constexpr uint64_t kLocalMask = (uint64_t{1} << StoreView::kSlotShift) - 1;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string IsoTime(const std::string& ts) {
  std::string t = ts;
  std::replace(t.begin(), t.end(), ' ', 'T');
  return t;
}

}  // namespace

StoreView::StoreView(std::string store, StoreOptions options,
                     std::function<void(const std::string&)> log)
    : store_(std::move(store)),
      options_(std::move(options)),
      log_(std::move(log)),
      mount_time_ns_(NowNs()),
      change_ns_(mount_time_ns_) {
  if (!options_.chain.backups) options_.chain.backups = std::make_shared<engine::BackupCache>();
  if (!options_.chain.fd_cache) {
    options_.chain.fd_cache = std::make_shared<engine::FdCache>(engine::DefaultFdCapacity());
  }
  Rescan(true);
}

uint64_t StoreView::LinkIno(const std::string& key, const std::string& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = link_by_key_.emplace(key, kFirstLinkIno + links_.size());
  if (inserted) {
    links_.push_back({key, Link{target}});
  } else {
    links_[it->second - kFirstLinkIno].second.target = target;
  }
  return it->second;
}

// The folder name `name` in `dir` ("at" or "by-uuid") stands for, if any.
std::optional<std::string> StoreView::Resolve(std::string_view dir, std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Slot* best = nullptr;
  if (dir == "by-uuid") {
    for (const auto& s : slots_) {
      if (s.present && !s.uuid.empty() && s.uuid == name) best = &s;
    }
  } else if (auto end = engine::PeriodEnd(name)) {
    for (const auto& s : slots_) {
      if (!s.present || s.uuid.empty() || s.time > *end) continue;
      if (!best || std::tie(s.time, s.name) > std::tie(best->time, best->name)) best = &s;
    }
  } else if (dir == "latest") {
    for (const auto& s : slots_) {
      if (!s.present || s.uuid.empty()) continue;
      if (!best || std::tie(s.time, s.name) > std::tie(best->time, best->name)) best = &s;
    }
  }
  if (!best) return std::nullopt;
  return best->name;
}

uint64_t StoreView::Lookup(uint64_t parent, std::string_view name) const {
  const uint64_t slot = parent >> kSlotShift;
  if (slot != 0) {
    auto view = View(slot);
    if (!view) return 0;
    const uint64_t local = view->Lookup(parent & kLocalMask, name);
    return local ? (slot << kSlotShift) | local : 0;
  }
  if (parent == kRootIno) {
    Rescan(false);
    if (name == "at") return kAtIno;
    if (name == "by-uuid") return kByUuidIno;
    if (name == "latest") return Resolve("latest", "") ? kLatestIno : 0;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slot_by_name_.find(std::string(name));
    if (it == slot_by_name_.end() || !slots_[it->second - 1].present) return 0;
    return (it->second << kSlotShift) | InodeTable::kRoot;
  }
  if (parent != kAtIno && parent != kByUuidIno) return 0;
  const std::string_view dir = parent == kAtIno ? "at" : "by-uuid";
  Rescan(false);
  auto target = Resolve(dir, name);
  if (!target) return 0;
  return LinkIno(std::string(dir) + "/" + std::string(name), "../" + *target);
}

double StoreView::Timeout(uint64_t ino) const {
  return (ino >> kSlotShift) == 0 ? kStoreTimeout : BackupView::kForever;
}

struct stat StoreView::SyntheticStat(uint64_t ino) const {  // REQUIRES: mu_ held.
  struct stat st = {};
  st.st_ino = ino;
  st.st_mode = S_IFDIR | 0555;
  st.st_nlink = 2;
  st.st_uid = options_.attr.uid.value_or(0);
  st.st_gid = options_.attr.gid.value_or(0);
  // The listing's mtime moves whenever a backup appears or goes, so the kernel drops its
  // cached copy of the folder (it compares mtimes when it revalidates, every second here).
  const int64_t t =
      ino == kRootIno || ino == kAtIno || ino == kByUuidIno ? change_ns_ : mount_time_ns_;
  st.st_mtim.tv_sec = t / 1000000000;
  st.st_mtim.tv_nsec = t % 1000000000;
  st.st_atim = st.st_ctim = st.st_mtim;
  return st;
}

std::optional<struct stat> StoreView::Attr(uint64_t ino) const {
  const uint64_t slot = ino >> kSlotShift;
  if (slot != 0) {
    auto view = View(slot);
    if (view) {
      auto st = view->Attr(ino & kLocalMask);
      if (st) st->st_ino = ino;
      if (st && options_.share_inodes) ShareInode(*view, slot, ino & kLocalMask, &*st);
      return st;
    }
    std::lock_guard<std::mutex> lock(mu_);
    // A backup that cannot be opened still shows as a folder; reading it gives EIO.
    if ((ino & kLocalMask) == InodeTable::kRoot && slot <= slots_.size()) return SyntheticStat(ino);
    return std::nullopt;
  }
  if (ino == kRootIno || ino == kAtIno || ino == kByUuidIno) {
    if (ino == kRootIno) Rescan(false);
    std::lock_guard<std::mutex> lock(mu_);
    return SyntheticStat(ino);
  }
  auto target = Readlink(ino);
  if (!target.ok()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  struct stat st = SyntheticStat(ino);
  st.st_mode = S_IFLNK | 0777;
  st.st_nlink = 1;
  st.st_size = static_cast<off_t>(target->size());
  return st;
}

void StoreView::ShareInode(const BackupView& view, uint64_t slot, uint64_t local,
                           struct stat* st) const {
  auto origin = view.Origin(local);
  if (!origin) return;
  uint64_t origin_slot = slot;
  if (origin->level != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    origin_slot = SlotOfUuid(view.backup().level(origin->level).uuid);
  }
  if (origin_slot == 0) return;  // Not in the store (any more): keep the backup's own number.
  st->st_ino = (origin_slot << kSlotShift) | kSharedBit | origin->entry;
  st->st_nlink = std::max<nlink_t>(st->st_nlink, 2);
}

uint64_t StoreView::SlotOfUuid(const std::string& uuid) const {
  auto it = slot_by_uuid_.find(uuid);
  return it == slot_by_uuid_.end() ? 0 : it->second;
}

engine::StatusOr<std::string> StoreView::Readlink(uint64_t ino) const {
  const uint64_t slot = ino >> kSlotShift;
  if (slot != 0) {
    auto view = View(slot);
    if (!view) return engine::Status::EntryNotFound("backup not available");
    return view->Readlink(ino & kLocalMask);
  }
  if (ino == kLatestIno) {
    auto name = Resolve("latest", "");
    if (!name) return engine::Status::EntryNotFound("the store has no backup");
    return *name;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (ino < kFirstLinkIno || ino - kFirstLinkIno >= links_.size()) {
    return engine::Status::InvalidArgument("not a symlink");
  }
  return links_[ino - kFirstLinkIno].second.target;
}

bool StoreView::DirEntry(uint64_t ino, size_t index, std::string* name, uint64_t* child) const {
  const uint64_t slot = ino >> kSlotShift;
  if (slot != 0) {
    auto view = View(slot);
    if (!view || !view->DirEntry(ino & kLocalMask, index, name, child)) return false;
    *child = *child == 0 ? kRootIno : (slot << kSlotShift) | *child;
    return true;
  }
  if (index < 2) {
    if (index == 0 && ino == kRootIno) Rescan(false);
    *name = index == 0 ? "." : "..";
    *child = index == 0 ? ino : kRootIno;
    return true;
  }
  size_t i = index - 2;
  std::lock_guard<std::mutex> lock(mu_);
  if (ino == kRootIno) {
    for (const auto& [n, k] : slot_by_name_) {
      if (!slots_[k - 1].present) continue;
      if (i-- == 0) {
        *name = n;
        *child = (k << kSlotShift) | InodeTable::kRoot;
        return true;
      }
    }
    static const char* const kFixed[] = {"at", "by-uuid"};
    if (i < 2) {
      *name = kFixed[i];
      *child = i == 0 ? kAtIno : kByUuidIno;
      return true;
    }
    if (i == 2 && !slots_.empty()) {
      *name = "latest";
      *child = kLatestIno;
      return true;
    }
    return false;
  }
  // at/ lists each backup's own time; by-uuid/ each uuid. Both are symlinks to the backup.
  for (const auto& s : slots_) {
    if (!s.present || s.uuid.empty() || i-- != 0) continue;
    const std::string key = ino == kAtIno ? IsoTime(s.timestamp) : s.uuid;
    const std::string dir = ino == kAtIno ? "at/" : "by-uuid/";
    *name = key;
    auto [it, inserted] = link_by_key_.emplace(dir + key, kFirstLinkIno + links_.size());
    if (inserted) links_.push_back({dir + key, Link{"../" + s.name}});
    *child = it->second;
    return true;
  }
  return false;
}

engine::Status StoreView::CheckDir(uint64_t ino) const {
  const uint64_t slot = ino >> kSlotShift;
  if (slot == 0 || View(slot)) return engine::Status::OK();
  std::lock_guard<std::mutex> lock(mu_);
  if (slot > slots_.size()) return engine::Status::EntryNotFound("no such backup");
  const Slot& s = slots_[slot - 1];
  return s.error.ok() ? engine::Status::EntryNotFound("backup " + s.name + " is gone") : s.error;
}

engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> StoreView::Open(
    uint64_t ino) const {
  auto view = View(ino >> kSlotShift);
  if (!view) return engine::Status::BackupDamaged("backup cannot be opened");
  auto file = view->Open(ino & kLocalMask);
  if (file.ok()) return file;
  // The backup or one of its bases may have been rewritten in place (prune's flattening) since
  // the last scan: look now, and if that opened it anew, try once more.
  Rescan(/*force=*/true);
  auto again = View(ino >> kSlotShift);
  return again && again != view ? again->Open(ino & kLocalMask) : file;
}

std::vector<std::string> StoreView::XattrNames(uint64_t ino) const {
  auto view = View(ino >> kSlotShift);
  return view ? view->XattrNames(ino & kLocalMask) : std::vector<std::string>{};
}

std::optional<std::string> StoreView::Xattr(uint64_t ino, const std::string& name) const {
  auto view = View(ino >> kSlotShift);
  if (!view) return std::nullopt;
  return view->Xattr(ino & kLocalMask, name);
}

uint64_t StoreView::NumInodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 4 + links_.size();
  for (const auto& s : slots_) n += s.view ? s.view->NumInodes() : 1;
  return n;
}

}  // namespace stitchfs::fs
