// OpenBackups: the backups of a store mount that are open right now, one BackupView per slot of
// the store's engine::StoreIndex, under one lock with the index. A backup is opened on first
// use (outside the lock), checked against the folder and content its slot stands for, closed
// again when idle beyond the memory bounds, and dropped when a rescan finds that its folder, or
// a backup its chain went through, changed (opened again through the chain as it is then).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/base/lru.h"
#include "engine/read/chain_options.h"
#include "engine/storage/backup.h"
#include "engine/store/store_index.h"
#include "fs/backup_view.h"

namespace stitchfs::fs {

struct StoreOptions {
  engine::ChainOptions chain;  // Its storage is required (the mount's main makes it).
  AttrOptions attr;
  size_t max_open_backups = 32;               // Opened backups kept while idle (memory bound),
  size_t max_open_bytes = size_t{256} << 20;  // and their memory in all (MemoryUsage()).
  // Unchanged files report one inode number in every backup of the store that holds them:
  // (slot of the oldest such backup << kSlotShift) | kSharedBit | its entry index, and a link
  // count of at least 2 (so du and rsync -H look for the other names).
  bool share_inodes = false;
  // Times rescans and the store's own folders (nanoseconds since the epoch); empty: the system
  // clock. Tests drive the once-a-second rescan with their own.
  engine::StoreIndex::Clock clock;
};

// Thread-safe.
class OpenBackups {
 public:
  using Log = std::function<void(const std::string&)>;

  // Reads the store at once. `log` receives lines about a store that cannot be read.
  OpenBackups(std::string store, const StoreOptions& options, Log log);

  // Rescans the store if a second has passed since the last scan, or now with `force`, and
  // drops the views that made stale. True if a backup retired or was rewritten in place.
  bool Rescan(bool force);
  // The opened backup of slot `k`, opening it if needed. kEntryNotFound if there is no such
  // slot or it has retired (the backup went, or another took its place); otherwise why it
  // cannot be opened (kBackupDamaged, kBackupNotFound, ...), always an error a reader gets as
  // EIO, ENOMEM or EACCES (a base locator that does not parse is kIOError, not EINVAL). An
  // open that fails while the store changes (a chain being flattened in place) is tried
  // again, up to kOpenAttempts.
  static constexpr int kOpenAttempts = 8;
  engine::StatusOr<std::shared_ptr<const BackupView>> View(uint64_t k);
  // `fn(const engine::StoreIndex&)`, under the lock.
  template <typename Fn>
  auto Read(Fn&& fn) const {
    std::lock_guard<std::mutex> lock(mu_);
    return fn(static_cast<const engine::StoreIndex&>(index_));
  }
  // The inodes of every slot: an opened backup's, one for any other (for statfs).
  uint64_t NumInodes() const;

 private:
  struct Opened {
    std::shared_ptr<const BackupView> view;  // Never null.
  };
  engine::ResolveOptions Resolve();
  // Installs what View opened for slot `k`; `*again` when the folder changed since the last
  // scan (the caller rescans and tries once more). REQUIRES: mu_ held.
  engine::StatusOr<std::shared_ptr<const BackupView>> Install(
      uint64_t k, engine::StatusOr<std::shared_ptr<const engine::ResolvedBackup>> backup,
      bool* again);
  // Drops opened views whose chain went through a backup that changed. REQUIRES: mu_ held.
  void DropStale();
  void Evict();  // REQUIRES: mu_ held.

  const StoreOptions options_;
  mutable std::mutex mu_;
  engine::StoreIndex index_;  // Guarded by mu_.
  // Opened views by slot, weighing their MemoryUsage(); guarded by mu_.
  engine::Lru<uint64_t, Opened> opened_;
};

}  // namespace stitchfs::fs
