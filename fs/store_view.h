// StoreView: a folder of backups as a Namespace. The root lists every backup by its folder
// name, `latest` (a symlink to the newest by manifest timestamp), `at/<time>` (the newest
// backup not newer than that time) and `by-uuid/<uuid>`. Those symlinks name the backup's own
// folder (`latest -> real2`, `at/... -> ../real2`), as restic's `latest` does, yet a link
// followed while its folder is replaced never leads into the other backup: reading a link pins
// (the reading thread, the folder name) to the generation it meant (LinkPins), and that thread's
// lookups of the name that follow (the rest of its path walk) resolve to that generation or, if
// it has gone, to nothing; and the entry of a name whose folder has been replaced at least once
// is not cached by the kernel (EntryTimeout 0), so every walk through it asks. A folder named
// like the store's own names (`at`, `latest`, ...) is linked as `.generations/<name>@<slot>`:
// the hidden folder `.generations` (looked up, not listed) has an entry per generation of a
// backup folder that always means that generation (its nodes are numbered apart, with a bit of
// their own, since the kernel gives a folder one parent). Which backups there are and what
// names resolve to is engine::StoreIndex's (rescanned at most once a second when the root is
// looked at). This file keeps the inode numbers: the store's own nodes have slot 0, inode i of
// the backup in slot k is (k << kSlotShift) | i, so a backup replaced by another (a new slot)
// never shows under the numbers of the old one, and its open files keep reading the old one.
// The backups themselves are OpenBackups' (opened on first access, shared bases, evicted when
// idle beyond a bound). A backup that cannot be opened shows as a folder whose reading, like
// that of everything in it, fails with that error (EIO); one that has gone answers
// kEntryNotFound.
#pragma once

#include <map>
#include <mutex>

#include "fs/backup_view.h"
#include "fs/link_pins.h"
#include "fs/listing_cache.h"
#include "fs/namespace.h"
#include "fs/open_backups.h"

namespace stitchfs::fs {

// Thread-safe.
class StoreView final : public Namespace {
 public:
  // The store at `store`, read through options.chain.storage (REQUIRES: set); `log` receives
  // lines about a store that cannot be read.
  StoreView(std::string store, StoreOptions options, std::function<void(const std::string&)> log);

  engine::StatusOr<struct stat> Attr(uint64_t ino) const override;
  engine::StatusOr<uint64_t> Lookup(uint64_t parent, std::string_view name) const override;
  engine::StatusOr<uint64_t> LookupBy(uint64_t caller, uint64_t parent,
                                      std::string_view name) const override;
  double Timeout(uint64_t ino) const override;
  // 0 for a backup folder that has had an earlier generation (and for absent names in the
  // root); else Timeout(parent).
  double EntryTimeout(uint64_t parent, uint64_t child) const override;
  engine::StatusOr<std::vector<DirEntry>> ReadDir(uint64_t ino, size_t offset,
                                                  size_t max) const override;
  // A file of a backup whose chain was rewritten in place meanwhile is opened again through the
  // chain as it is now, up to kReopenAttempts times.
  static constexpr int kReopenAttempts = 8;
  engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> Open(
      uint64_t ino) const override;
  engine::StatusOr<std::shared_ptr<FileReads>> Reads(uint64_t ino) const override;
  std::optional<uint64_t> NextFile(uint64_t ino) const override;
  std::optional<uint64_t> FirstFileIn(uint64_t dir) const override;
  void NoteDamaged(uint64_t ino, const engine::Status& s) const override;
  engine::StatusOr<std::string> Readlink(uint64_t ino) const override;
  engine::StatusOr<std::string> ReadlinkBy(uint64_t caller, uint64_t ino) const override;
  engine::StatusOr<std::vector<std::string>> XattrNames(uint64_t ino) const override;
  engine::StatusOr<std::string> Xattr(uint64_t ino, const std::string& name) const override;
  uint64_t TotalBytes() const override { return 0; }
  uint64_t NumInodes() const override;

  // Inode numbers: the store's own nodes have slot 0; backup k's inode i is (k << 40) | i.
  static constexpr int kSlotShift = 40;
  static constexpr uint64_t kSharedBit = uint64_t{1} << 39;
  static constexpr uint64_t kRootIno = 1, kAtIno = 2, kByUuidIno = 3, kLatestIno = 4,
                            kGenerationsIno = 5;
  static constexpr const char* kGenerationsDir = ".generations";
  static constexpr uint64_t kFirstLinkIno = 16;  // at/ and by-uuid/ symlinks: 16 + i.

 private:
  // The store's own folders and symlinks (slot 0).
  engine::StatusOr<struct stat> StoreAttr(uint64_t ino) const;
  engine::StatusOr<uint64_t> LookupInRoot(uint64_t caller, std::string_view name) const;
  engine::StatusOr<uint64_t> LookupLink(uint64_t dir, std::string_view name) const;
  std::vector<DirEntry> ListRoot() const;         // Every entry of the root.
  std::vector<DirEntry> ListGenerations() const;  // Every present generation.
  // The path of generation `k` from the store's root.
  std::string GenerationPath(const engine::StoreIndex& index, uint64_t k) const;
  // What a link to generation `k` says from the root: its folder's name, or GenerationPath for
  // a folder named like one of the store's own names.
  std::string LinkText(const engine::StoreIndex& index, uint64_t k) const;
  // True if slot `k` is not the first generation of its folder's name.
  bool Replaced(uint64_t k) const;
  int64_t NowNs() const;
  // Every entry of at/ or by-uuid/ (`dir`).
  std::vector<DirEntry> ListLinks(uint64_t dir) const;
  // Where an at/ or by-uuid/ link leads: its text, and the generation and folder name meant.
  struct LinkTarget {
    std::string text;
    uint64_t slot = 0;
    std::string name;
  };
  LinkTarget TargetOf(const engine::StoreIndex& index, uint64_t k) const;
  // The key of the link to backup `slot` in folder `dir` (at/ or by-uuid/).
  static std::string LinkKey(uint64_t dir, uint64_t slot);
  // The slot-0 symlink `key` (LinkKey), made on first use; it points to `target` from now on.
  uint64_t LinkIno(const std::string& key, LinkTarget target) const;
  struct stat FolderStat(uint64_t ino) const;  // A folder of the store, or a backup's stand-in.
  // With share_inodes: gives a file of `view` (slot `slot`) its shared inode number.
  void ShareInode(const BackupView& view, uint64_t slot, uint64_t local, struct stat* st) const;

  StoreOptions options_;
  mutable OpenBackups backups_;
  mutable std::mutex links_mu_;
  mutable std::vector<LinkTarget> link_targets_;         // [ino - kFirstLinkIno].
  mutable std::map<std::string, uint64_t> link_by_key_;  // Guarded by links_mu_, as above.
  mutable LinkPins pins_;
  mutable ListingCache listings_;  // The store's own folders, as last listed.
  // The first slot of each folder name (Replaced), for slots 1..first_known_. Taken after the
  // lock of backups_.
  mutable std::mutex first_mu_;
  mutable std::map<std::string, uint64_t, std::less<>> first_of_name_;  // Guarded by first_mu_.
  mutable uint64_t first_known_ = 0;                                    // Guarded by first_mu_.
};

}  // namespace stitchfs::fs
