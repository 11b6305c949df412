// MemDisk: what the MemStorages of one test share, as processes share a machine's disk: the
// tree of folders and files, the locks held on it (a writer's `.lock`, a store's prune lock),
// and which processes are alive. Internal to engine/backends/mem/.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "engine/backends/mem/mem_tree.h"
#include "engine/base/status.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// Thread-safe: every member is guarded by mu, which callers hold.
struct MemDisk {
  explicit MemDisk(uint64_t dev) : dev(dev) {}

  // OK while process `session` lives; kIOError (ECANCELED) once it was killed or lost power.
  // REQUIRES: mu held.
  Status Check(uint64_t session) const;
  bool Alive(uint64_t session) const { return session >= first_alive && !killed.count(session); }
  // True if the `.lock` at inode `lock` is held by a live process. REQUIRES: mu held.
  bool LockHeld(uint64_t lock) const;
  // The identity of the file at inode `ino` of `t` (the tree) as a manifest's. REQUIRES: mu
  // held, it exists.
  ManifestIdentity Identity(uint64_t ino) const { return IdentityIn(tree, ino); }
  ManifestIdentity IdentityIn(const MemTree& t, uint64_t ino) const;
  // Called after each change of the tree: keeps what a lagging listing shows. REQUIRES: mu.
  void Changed();
  // The tree as a listing shows it now (listing_lag changes behind). REQUIRES: mu held.
  const MemTree& Listed() const { return history.empty() ? tree : history.front(); }

  mutable std::mutex mu;
  const uint64_t dev;  // Of every FolderIdentity and ManifestIdentity of this disk.
  MemTree tree;
  uint64_t next_session = 1;
  uint64_t first_alive = 1;                   // Sessions before it died with the power.
  std::set<uint64_t> killed;                  // Sessions killed one by one.
  std::map<uint64_t, uint64_t> writer_locks;  // `.lock` inode -> the session holding it.
  // Store path -> the session holding its prune lock, and the holder (a StoreMoves).
  std::map<std::string, std::pair<uint64_t, const void*>> prune_locks;
  size_t listing_lag = 0;  // Changes a listing (ScanStore, a store's writers) lags.
  // Folders whose next `.backup` written is stored with its first byte flipped, the write
  // reporting success (MemStorage::CorruptNextManifest).
  std::set<std::string> corrupt_manifests;
  std::deque<MemTree> history;  // The last listing_lag trees, oldest first.
};

// A process on a MemDisk: the disk and the session every object it hands out belongs to.
struct MemProcess {
  std::shared_ptr<MemDisk> disk;
  uint64_t session = 0;
};

}  // namespace stitchfs::engine
