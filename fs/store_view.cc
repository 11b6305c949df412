#include "fs/store_view.h"

#include <algorithm>
#include <chrono>

#include "fs/xattrs.h"

namespace stitchfs::fs {
namespace {

constexpr double kStoreTimeout = 1.0;  // Seconds: new backups show up within this.
constexpr uint64_t kLocalMask = (uint64_t{1} << StoreView::kSlotShift) - 1;

uint64_t SlotOf(uint64_t ino) { return ino >> StoreView::kSlotShift; }
// Nodes reached through .generations carry this bit, so a folder never has two parents (the
// kernel keeps one name per folder inode: a second one would move it away from the first).
constexpr uint64_t kViaGenerations = uint64_t{1} << 38;
uint64_t LocalOf(uint64_t ino) { return ino & kLocalMask & ~kViaGenerations; }
uint64_t ViaOf(uint64_t ino) { return ino & kViaGenerations; }
uint64_t InoOf(uint64_t slot, uint64_t local) { return (slot << StoreView::kSlotShift) | local; }

bool IsStoreFolder(uint64_t ino) {
  return ino == StoreView::kRootIno || ino == StoreView::kAtIno || ino == StoreView::kByUuidIno ||
         ino == StoreView::kGenerationsIno;
}

// The name at/ lists for a backup's timestamp: ISO 8601, "2026-11-02T13:00:05".
std::string IsoTime(const std::string& ts) {
  std::string t = ts;
  std::replace(t.begin(), t.end(), ' ', 'T');
  return t;
}

engine::Status NoLinkInode(uint64_t ino) {
  return engine::Status::EntryNotFound("no inode " + std::to_string(ino));
}

StoreOptions WithCaches(StoreOptions o) {
  if (!o.chain.backups) o.chain.backups = std::make_shared<engine::BackupCache>();
  return o;
}

std::vector<DirEntry> Slice(const std::vector<DirEntry>& all, size_t offset, size_t max) {
  if (offset >= all.size()) return {};
  const size_t end = offset + std::min(max, all.size() - offset);
  return std::vector<DirEntry>(all.begin() + static_cast<ptrdiff_t>(offset),
                               all.begin() + static_cast<ptrdiff_t>(end));
}

}  // namespace

StoreView::StoreView(std::string store, StoreOptions options,
                     std::function<void(const std::string&)> log)
    : options_(WithCaches(std::move(options))),
      backups_(std::move(store), options_, std::move(log)) {}

engine::StatusOr<struct stat> StoreView::Attr(uint64_t ino) const {
  const uint64_t slot = SlotOf(ino);
  if (slot == 0) return StoreAttr(ino);
  auto view = backups_.View(slot);
  if (!view.ok()) {
    // A backup that cannot be opened still shows as a folder, while it is in the store;
    // reading it gives the error.
    const bool exists = backups_.Read([&](const engine::StoreIndex& index) {
      const engine::StoreSlot* s = index.slot(slot);
      return s != nullptr && s->present;
    });
    if (LocalOf(ino) == InodeTable::kRoot && exists) return FolderStat(ino);
    return view.status();
  }
  ASSIGN_OR_RETURN(struct stat st, (*view)->Attr(LocalOf(ino)));
  st.st_ino = ino;
  if (options_.share_inodes) ShareInode(**view, slot, LocalOf(ino), &st);
  return st;
}

engine::StatusOr<struct stat> StoreView::StoreAttr(uint64_t ino) const {
  if (IsStoreFolder(ino)) {
    if (ino == kRootIno) backups_.Rescan(/*force=*/false);
    return FolderStat(ino);
  }
  ASSIGN_OR_RETURN(std::string target, Readlink(ino));
  struct stat st = FolderStat(ino);
  st.st_mode = S_IFLNK | 0777;
  st.st_nlink = 1;
  st.st_size = static_cast<off_t>(target.size());
  return st;
}

struct stat StoreView::FolderStat(uint64_t ino) const {
  struct stat st = {};
  st.st_ino = ino;
  st.st_mode = S_IFDIR | 0555;
  st.st_nlink = 2;
  st.st_uid = options_.attr.uid.value_or(0);
  st.st_gid = options_.attr.gid.value_or(0);
  // The listing's mtime moves whenever a backup appears or goes, so the kernel drops its
  // cached copy of the folder (it compares mtimes when it revalidates, every second here).
  const int64_t t = backups_.Read([&](const engine::StoreIndex& index) {
    return IsStoreFolder(ino) ? index.changed_ns() : index.created_ns();
  });
  st.st_mtim.tv_sec = t / 1000000000;
  st.st_mtim.tv_nsec = t % 1000000000;
  st.st_atim = st.st_ctim = st.st_mtim;
  return st;
}

void StoreView::ShareInode(const BackupView& view, uint64_t slot, uint64_t local,
                           struct stat* st) const {
  auto origin = view.Origin(local);
  if (!origin) return;
  uint64_t origin_slot = slot;
  if (origin->level != 0) {
    const std::string& uuid = view.backup().level(origin->level).uuid;
    origin_slot =
        backups_.Read([&](const engine::StoreIndex& index) { return index.FirstWithUuid(uuid); });
  }
  if (origin_slot == 0) return;  // Not in the store (any more): keep the backup's own number.
  st->st_ino = InoOf(origin_slot, kSharedBit | origin->entry);
  st->st_nlink = std::max<nlink_t>(st->st_nlink, 2);
}

engine::StatusOr<uint64_t> StoreView::Lookup(uint64_t parent, std::string_view name) const {
  return LookupBy(0, parent, name);
}

engine::StatusOr<uint64_t> StoreView::LookupBy(uint64_t caller, uint64_t parent,
                                               std::string_view name) const {
  const uint64_t slot = SlotOf(parent);
  if (slot != 0) {
    ASSIGN_OR_RETURN(std::shared_ptr<const BackupView> view, backups_.View(slot));
    ASSIGN_OR_RETURN(uint64_t local, view->Lookup(LocalOf(parent), name));
    return InoOf(slot, local) | ViaOf(parent);
  }
  if (parent == kRootIno) return LookupInRoot(caller, name);
  if (parent == kAtIno || parent == kByUuidIno) return LookupLink(parent, name);
  if (parent != kGenerationsIno) return engine::Status::InvalidArgument("not a folder");
  const uint64_t k =
      backups_.Read([&](const engine::StoreIndex& index) { return index.OfGeneration(name); });
  if (k == 0) return engine::Status::EntryNotFound("no generation " + std::string(name));
  return InoOf(k, InodeTable::kRoot) | kViaGenerations;
}

engine::StatusOr<uint64_t> StoreView::LookupInRoot(uint64_t caller, std::string_view name) const {
  backups_.Rescan(/*force=*/false);
  if (name == "at") return kAtIno;
  if (name == "by-uuid") return kByUuidIno;
  if (name == kGenerationsDir) return kGenerationsIno;
  const uint64_t k = backups_.Read([&](const engine::StoreIndex& index) {
    return name == "latest" ? index.Latest() : index.Named(name);
  });
  if (k == 0) return engine::Status::EntryNotFound("no backup " + std::string(name));
  if (name == "latest") return kLatestIno;
  // A link this thread has just read meant another generation of this folder, replaced since:
  // the walk that follows the link finds nothing rather than the backup there now.
  const uint64_t pinned = pins_.Pinned(caller, name, NowNs());
  if (pinned != 0 && pinned != k) {
    return engine::Status::EntryNotFound("backup " + std::string(name) +
                                         " was replaced while a link to it was followed");
  }
  return InoOf(k, InodeTable::kRoot);
}

engine::StatusOr<uint64_t> StoreView::LookupLink(uint64_t dir, std::string_view name) const {
  backups_.Rescan(/*force=*/false);
  LinkTarget target = backups_.Read([&](const engine::StoreIndex& index) {
    const uint64_t k = dir == kAtIno ? index.At(name) : index.ByUuid(name);
    return k == 0 ? LinkTarget{} : TargetOf(index, k);
  });
  if (target.slot == 0) return engine::Status::EntryNotFound("no backup for " + std::string(name));
  return LinkIno(LinkKey(dir, target.slot), std::move(target));
}

// One link per backup in each of at/ and by-uuid/: every time that resolves to a backup is the
// same link (the names a mount is asked for are not kept, so they cannot fill its memory).
std::string StoreView::LinkKey(uint64_t dir, uint64_t slot) {
  return (dir == kAtIno ? "at/" : "by-uuid/") + std::to_string(slot);
}

std::string StoreView::GenerationPath(const engine::StoreIndex& index, uint64_t k) const {
  return std::string(kGenerationsDir) + "/" + index.Generation(k);
}

std::string StoreView::LinkText(const engine::StoreIndex& index, uint64_t k) const {
  const std::string& name = index.slot(k)->name;
  if (name == "at" || name == "by-uuid" || name == "latest" || name == kGenerationsDir) {
    return GenerationPath(index, k);
  }
  return name;
}

StoreView::LinkTarget StoreView::TargetOf(const engine::StoreIndex& index, uint64_t k) const {
  return LinkTarget{"../" + LinkText(index, k), k, index.slot(k)->name};
}

uint64_t StoreView::LinkIno(const std::string& key, LinkTarget target) const {
  std::lock_guard<std::mutex> lock(links_mu_);
  auto [it, inserted] = link_by_key_.emplace(key, kFirstLinkIno + link_targets_.size());
  if (inserted) {
    link_targets_.push_back(std::move(target));
  } else {
    link_targets_[it->second - kFirstLinkIno] = std::move(target);
  }
  return it->second;
}

bool StoreView::Replaced(uint64_t k) const {
  return backups_.Read([&](const engine::StoreIndex& index) {
    std::lock_guard<std::mutex> lock(first_mu_);  // Slots are never renumbered: learnt once.
    for (; first_known_ < index.size(); ++first_known_) {
      first_of_name_.emplace(index.slot(first_known_ + 1)->name, first_known_ + 1);
    }
    const engine::StoreSlot* s = index.slot(k);
    if (s == nullptr) return false;
    auto it = first_of_name_.find(s->name);
    return it != first_of_name_.end() && it->second < k;
  });
}

int64_t StoreView::NowNs() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double StoreView::Timeout(uint64_t ino) const {
  return SlotOf(ino) == 0 ? kStoreTimeout : BackupView::kForever;
}

// A pinned lookup in the root (LookupInRoot) may find a name absent for one walk only, and a
// folder replaced once may be replaced again: neither is for the kernel to keep.
double StoreView::EntryTimeout(uint64_t parent, uint64_t child) const {
  if (parent != kRootIno) return Timeout(parent);
  if (child == 0 || (SlotOf(child) != 0 && Replaced(SlotOf(child)))) return 0;
  return Timeout(parent);
}

engine::StatusOr<std::vector<DirEntry>> StoreView::ReadDir(uint64_t ino, size_t offset,
                                                           size_t max) const {
  const uint64_t slot = SlotOf(ino);
  if (slot != 0) {
    ASSIGN_OR_RETURN(std::shared_ptr<const BackupView> view, backups_.View(slot));
    ASSIGN_OR_RETURN(std::vector<DirEntry> out, view->ReadDir(LocalOf(ino), offset, max));
    for (DirEntry& e : out) {  // 0: "..".
      e.ino =
          e.ino == 0 ? (ViaOf(ino) ? kGenerationsIno : kRootIno) : InoOf(slot, e.ino) | ViaOf(ino);
    }
    return out;
  }
  if (!IsStoreFolder(ino)) return engine::Status::InvalidArgument("not a folder");
  if (ino == kRootIno && offset == 0) backups_.Rescan(/*force=*/false);
  const uint64_t version = backups_.Read([](const engine::StoreIndex& i) { return i.version(); });
  const ListingCache::Entries all = listings_.Get(ino, version, [&] {
    if (ino == kRootIno) return ListRoot();
    return ino == kGenerationsIno ? ListGenerations() : ListLinks(ino);
  });
  return Slice(*all, offset, max);
}

std::vector<DirEntry> StoreView::ListRoot() const {
  std::vector<DirEntry> out = {{".", kRootIno}, {"..", kRootIno}};
  const bool latest = backups_.Read([&](const engine::StoreIndex& index) {
    for (uint64_t k : index.ByName())
      out.push_back({index.slot(k)->name, InoOf(k, InodeTable::kRoot), /*costly=*/true});
    return index.Latest() != 0;
  });
  out.push_back({"at", kAtIno});
  out.push_back({"by-uuid", kByUuidIno});
  if (latest) out.push_back({"latest", kLatestIno});
  return out;
}

std::vector<DirEntry> StoreView::ListGenerations() const {
  std::vector<DirEntry> out = {{".", kGenerationsIno}, {"..", kRootIno}};
  backups_.Read([&](const engine::StoreIndex& index) {
    for (uint64_t k : index.ByName()) {
      out.push_back(
          {index.Generation(k), InoOf(k, InodeTable::kRoot) | kViaGenerations, /*costly=*/true});
    }
  });
  return out;
}

// at/ lists each backup's own time, by-uuid/ each uuid: symlinks to the backup.
std::vector<DirEntry> StoreView::ListLinks(uint64_t dir) const {
  std::vector<std::pair<std::string, LinkTarget>> links;  // Name, target.
  backups_.Read([&](const engine::StoreIndex& index) {
    for (uint64_t k : index.WithHeader()) {
      const engine::StoreSlot& s = *index.slot(k);
      links.emplace_back(dir == kAtIno ? IsoTime(s.timestamp) : s.uuid, TargetOf(index, k));
    }
  });
  std::vector<DirEntry> out = {{".", dir}, {"..", kRootIno}};
  for (auto& [name, target] : links) {
    const std::string key = LinkKey(dir, target.slot);
    out.push_back({name, LinkIno(key, std::move(target))});
  }
  return out;
}

engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> StoreView::Open(
    uint64_t ino) const {
  ASSIGN_OR_RETURN(std::shared_ptr<FileReads> f, Reads(ino));
  return f->reader();
}

engine::StatusOr<std::shared_ptr<FileReads>> StoreView::Reads(uint64_t ino) const {
  ASSIGN_OR_RETURN(std::shared_ptr<const BackupView> view, backups_.View(SlotOf(ino)));
  auto file = view->Reads(LocalOf(ino));
  // The backup or one of its bases may have been rewritten in place (prune's flattening) since
  // the last scan: look now, and while that opens it anew, try again (a prune flattens one
  // level of a chain after another, so the chain opened anew may itself go stale meanwhile).
  for (int attempt = 0; !file.ok() && attempt < kReopenAttempts; ++attempt) {
    backups_.Rescan(/*force=*/true);
    auto again = backups_.View(SlotOf(ino));
    if (!again.ok() || *again == view) break;
    view = *again;
    file = view->Reads(LocalOf(ino));
  }
  return file;
}

// Within one backup, by its own numbering (a shared inode has none).
std::optional<uint64_t> StoreView::NextFile(uint64_t ino) const {
  const uint64_t slot = SlotOf(ino);
  if (slot == 0 || (ino & kSharedBit)) return std::nullopt;
  auto view = backups_.View(slot);
  if (!view.ok()) return std::nullopt;
  auto next = (*view)->NextFile(LocalOf(ino));
  if (!next) return std::nullopt;
  return InoOf(slot, *next) | ViaOf(ino);
}

std::optional<uint64_t> StoreView::FirstFileIn(uint64_t dir) const {
  const uint64_t slot = SlotOf(dir);
  if (slot == 0) return std::nullopt;
  auto view = backups_.View(slot);
  if (!view.ok()) return std::nullopt;
  auto first = (*view)->FirstFileIn(LocalOf(dir));
  if (!first) return std::nullopt;
  return InoOf(slot, *first) | ViaOf(dir);
}

void StoreView::NoteDamaged(uint64_t ino, const engine::Status& s) const {
  if (auto view = backups_.View(SlotOf(ino)); view.ok()) (*view)->NoteDamaged(LocalOf(ino), s);
}

engine::StatusOr<std::string> StoreView::Readlink(uint64_t ino) const { return ReadlinkBy(0, ino); }

engine::StatusOr<std::string> StoreView::ReadlinkBy(uint64_t caller, uint64_t ino) const {
  const uint64_t slot = SlotOf(ino);
  if (slot != 0) {
    ASSIGN_OR_RETURN(std::shared_ptr<const BackupView> view, backups_.View(slot));
    return view->Readlink(LocalOf(ino));
  }
  LinkTarget target;
  if (ino == kLatestIno) {
    target = backups_.Read([&](const engine::StoreIndex& index) {
      const uint64_t k = index.Latest();
      return k == 0 ? LinkTarget{} : LinkTarget{LinkText(index, k), k, index.slot(k)->name};
    });
    if (target.slot == 0) return engine::Status::EntryNotFound("the store has no backup");
  } else if (IsStoreFolder(ino)) {
    return engine::Status::InvalidArgument("not a symlink");
  } else {
    std::lock_guard<std::mutex> lock(links_mu_);
    if (ino < kFirstLinkIno || ino - kFirstLinkIno >= link_targets_.size()) return NoLinkInode(ino);
    target = link_targets_[ino - kFirstLinkIno];
  }
  pins_.Pin(caller, target.name, target.slot, NowNs());
  return target.text;
}

engine::StatusOr<std::vector<std::string>> StoreView::XattrNames(uint64_t ino) const {
  const uint64_t slot = SlotOf(ino);
  if (slot == 0) return std::vector<std::string>{};  // The store's own nodes have none.
  auto view = backups_.View(slot);
  if (view.ok()) return (*view)->XattrNames(LocalOf(ino));
  // The folder that stands in for a backup that cannot be opened has none either.
  if (LocalOf(ino) == InodeTable::kRoot) return std::vector<std::string>{};
  return view.status();
}

engine::StatusOr<std::string> StoreView::Xattr(uint64_t ino, const std::string& name) const {
  const uint64_t slot = SlotOf(ino);
  if (slot == 0 || !IsStitchfsXattr(name)) {
    return engine::Status::EntryNotFound("no attribute " + name);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const BackupView> view, backups_.View(slot));
  return view->Xattr(LocalOf(ino), name);
}

uint64_t StoreView::NumInodes() const {
  uint64_t links;
  {
    std::lock_guard<std::mutex> lock(links_mu_);
    links = link_targets_.size();
  }
  return 5 + links + backups_.NumInodes();
}

}  // namespace stitchfs::fs
