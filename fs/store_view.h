// StoreView: a folder of backups as a Namespace. The root lists every backup by its folder
// name, `latest` (a symlink to the newest by manifest timestamp), `at/<time>` (the newest
// backup not newer than that time) and `by-uuid/<uuid>`. Backups are opened on first access,
// share their bases, are evicted when idle beyond a bound, and appear or disappear as the
// store changes (the root is rescanned at most once a second; no lock is taken on the store).
// A backup replaced in place (another `.backup` or folder under the same name: prune's
// flattening, a folder swapped) is noticed at the next rescan: it gets a new slot (new inode
// numbers, so no cache of the kernel's mixes the two) with at/, by-uuid/ and latest rebuilt
// from its header, and every opened backup whose chain went through it is opened again. Files
// opened before keep reading the old bytes while the old folder's data can still be opened,
// or fail with EIO; never a mix. The store is read by engine::ScanStore (the CLI's rule too).
#pragma once

#include <map>
#include <mutex>

#include "engine/backup.h"
#include "engine/fd_cache.h"
#include "engine/store.h"
#include "fs/backup_view.h"
#include "fs/namespace.h"

namespace stitchfs::fs {

struct StoreOptions {
  engine::ChainOptions chain;
  AttrOptions attr;
  size_t max_open_backups = 32;               // Opened backups kept while idle (memory bound),
  size_t max_open_bytes = size_t{256} << 20;  // and their memory in all (MemoryUsage()).
  // Unchanged files report one inode number in every backup of the store that holds them:
  // (slot of the oldest such backup << kSlotShift) | kSharedBit | its entry index, and a link
  // count of at least 2 (so du and rsync -H look for the other names).
  bool share_inodes = false;
};

// Thread-safe.
class StoreView final : public Namespace {
 public:
  StoreView(std::string store, StoreOptions options, std::function<void(const std::string&)> log);

  std::optional<struct stat> Attr(uint64_t ino) const override;
  uint64_t Lookup(uint64_t parent, std::string_view name) const override;
  double Timeout(uint64_t ino) const override;
  bool DirEntry(uint64_t ino, size_t index, std::string* name, uint64_t* child) const override;
  engine::Status CheckDir(uint64_t ino) const override;
  engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> Open(
      uint64_t ino) const override;
  engine::StatusOr<std::string> Readlink(uint64_t ino) const override;
  std::vector<std::string> XattrNames(uint64_t ino) const override;
  std::optional<std::string> Xattr(uint64_t ino, const std::string& name) const override;
  uint64_t TotalBytes() const override { return 0; }
  uint64_t NumInodes() const override;

  // Inode numbers: the store's own nodes have slot 0; backup k's inode i is (k << 40) | i.
  static constexpr int kSlotShift = 40;
  static constexpr uint64_t kSharedBit = uint64_t{1} << 39;
  static constexpr uint64_t kRootIno = 1, kAtIno = 2, kByUuidIno = 3, kLatestIno = 4;

 private:
  struct Slot {
    std::string name;
    std::string path;
    engine::FolderIdentity folder;
    engine::ManifestIdentity manifest;
    std::string uuid;
    std::string timestamp;
    engine::CivilSeconds time = 0;
    bool present = true;
    // engine::Manifest::ContentSignature() of what its inode numbers have shown (0: nothing
    // yet). A backup rewritten in place keeps its slot only if this stays the same.
    mutable uint64_t signature = 0;
    mutable std::shared_ptr<const BackupView> view;  // Opened lazily; guarded by mu_.
    mutable engine::Status error;                    // Why it could not be opened.
    mutable uint64_t last_use = 0;
    mutable size_t bytes = 0;  // view->MemoryUsage().
  };
  struct Link {
    std::string target;
  };

  // What one scan of the store found (outside the lock).
  struct Scanned {
    engine::StoreFolder folder;
    bool known = false;  // Same folder and manifest as a present slot: no header read.
    engine::StatusOr<engine::ManifestHeader> header = engine::ManifestHeader{};
  };
  // Rescans the store at most once a second (always with `force`); the I/O happens outside
  // mu_, so a slow or hostile store never holds up requests for other backups.
  void Rescan(bool force) const;
  std::vector<Scanned> ScanOutsideLock() const;
  void Merge(std::vector<Scanned> scanned, int64_t now) const;  // REQUIRES: mu_ held.
  Slot NewSlot(const Scanned& s) const;
  // Drops opened views whose chain went through a backup that changed. REQUIRES: mu_ held.
  void DropStaleViews(const std::map<std::string, const Slot*>& by_path) const;
  // The opened view of slot `k`, or nullptr (error logged). Caller must not hold mu_.
  std::shared_ptr<const BackupView> View(uint64_t k) const;
  // Installs what View resolved for slot `k`. Sets `*again` when the folder changed since
  // the last scan (the caller rescans and tries once more). REQUIRES: mu_ held.
  std::shared_ptr<const BackupView> Install(
      uint64_t k, engine::StatusOr<std::shared_ptr<const engine::ResolvedBackup>> backup,
      uint64_t signature, bool* again) const;
  // Retires slot `k` for good and gives its name a fresh slot (new inode numbers) with the same
  // folder and header. REQUIRES: mu_ held.
  void Renumber(uint64_t k) const;
  void Evict() const;  // REQUIRES: mu_ held.
  // Slot 0 symlink for `key` ("at/..." or "by-uuid/..."), created on first use.
  uint64_t LinkIno(const std::string& key, const std::string& target) const;
  std::optional<std::string> Resolve(std::string_view dir, std::string_view name) const;
  struct stat SyntheticStat(uint64_t ino) const;
  // With share_inodes: gives a file of `view` (slot `slot`) its shared inode number.
  void ShareInode(const BackupView& view, uint64_t slot, uint64_t local, struct stat* st) const;
  uint64_t SlotOfUuid(const std::string& uuid) const;  // 0 if none; REQUIRES: mu_ held.

  const std::string store_;
  StoreOptions options_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex mu_;
  mutable std::vector<Slot> slots_;  // [k - 1]; never shrinks, so slot numbers stay valid.
  mutable std::map<std::string, uint64_t> slot_by_name_;
  mutable std::map<std::string, uint64_t> slot_by_uuid_;     // The first slot with each uuid.
  mutable std::vector<std::pair<std::string, Link>> links_;  // Slot-0 symlinks, ino = 16 + i.
  mutable std::map<std::string, uint64_t> link_by_key_;
  mutable int64_t last_scan_ns_ = -1;
  mutable bool scanning_ = false;
  mutable uint64_t clock_ = 0;
  const int64_t mount_time_ns_;
  mutable int64_t change_ns_;  // When the list of backups last changed; guarded by mu_.
};

}  // namespace stitchfs::fs
