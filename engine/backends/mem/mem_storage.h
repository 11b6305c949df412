// MemStorage: a complete Storage in memory, for tests of everything above it (the writer, the
// readers, prune, flatten, locks) over every call, in milliseconds. It keeps the local
// backend's rules: a location is an absolute path, but of the MemStorage's own namespace
// (nothing of this machine's file systems is touched; the base locators its backups write are
// `File('/path')`, which FindBaseCandidates resolves back into the same namespace, so no code
// tells a MemStorage location from any other by its spelling); a missing or short data file is
// kBackupDamaged; a folder replaced since it was opened is refused through its identity; a
// rewritten `.backup` has a new identity; StartBackup takes the destination with a `.lock` held
// by this process, takes a dead process's over, and refuses a destination inside a backup.
//
// Several MemStorages may share one disk as processes share a machine (NewProcess). Durability
// is modelled as on a local file system: bytes and names become durable only where the local
// backend makes them so (a backup's Finish: syncfs, then `.backup` written atomically, then
// `.lock` removed and the folder synced; prune's Sync and swap; an index written atomically),
// and LosePower keeps only those. Kill ends one process: every object it handed out fails from
// then on and never cleans up, and its locks become a dead writer's.
//
// Like S3's listings of old, a listing may lag behind (SetListingLag): ScanStore and a store's
// writers see the tree as it was some changes ago, while reads by name see every change.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/backends/mem/mem_disk.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// A backup folder of a MemStorage: its path and inode.
class MemFolder final : public BackupFolder {
 public:
  MemFolder(std::string path, FolderIdentity id) : BackupFolder(std::move(path), id, kKind) {}
  static constexpr BackendKind kKind{"in memory"};
  // `folder` as a MemFolder of the disk `dev`; kInvalidArgument if another storage made it.
  static StatusOr<const MemFolder*> Of(const BackupFolder& folder, uint64_t dev);
};

// Thread-safe.
class MemStorage final : public Storage {
 public:
  // A new, empty disk and the first process on it.
  static std::shared_ptr<MemStorage> Create();
  // Another process on the same disk: it sees what every process wrote; its locks are its own.
  std::shared_ptr<MemStorage> NewProcess() const;
  // A process on a copy of the disk as it is now (what is durable and what is not), as a disk
  // image is: its identities are the same, no process of this disk runs there (their locks
  // are dead writers'), its listings do not lag.
  std::shared_ptr<MemStorage> CopyDisk() const;
  explicit MemStorage(MemProcess p) : p_(std::move(p)) {}

  std::string Normal(const std::string& location) const override;
  StatusOr<std::shared_ptr<const BackupFolder>> OpenFolder(
      const std::string& location) const override;
  StatusOr<ManifestSource> OpenManifest(const BackupFolder& folder) const override;
  StatusOr<std::optional<ManifestIdentity>> StatManifest(
      const std::string& location) const override;
  StatusOr<bool> BeingRemoved(const std::string& location) const override;
  StatusOr<std::shared_ptr<const BackupDataFile>> OpenDataFile(
      const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
      uint64_t declared_size) const override;
  StatusOr<SharedBytes> ReadIndex(const BackupFolder& folder) const override;
  Status WriteIndex(const BackupFolder& folder, std::string_view bytes) const override;
  StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& location) const override;
  // `File('<path>')`: the path is this storage's.
  std::string LocatorFor(const std::string& location) const override;
  // The local backend's lock rules; data files staged in `.stitch-tmp`, renamed into place.
  StatusOr<std::unique_ptr<BackupWriter>> StartBackup(const std::string& location,
                                                      const WriterIntent& intent,
                                                      std::string* notice) const override;
  // The local backend's moves: renames, a swap of the flattened copy (mem_store_moves.cc).
  StatusOr<std::unique_ptr<StoreMoves>> MovesFor(const std::string& location) const override;

  // This process dies: every later call of it, or of what it handed out, fails (kIOError,
  // ECANCELED) and nothing it holds is cleaned up; its locks are a dead writer's.
  void Kill() const;
  // Every process of the disk dies, and the disk keeps only what was made durable.
  void LosePower() const;
  bool alive() const;
  // ScanStore and a store's writers see the tree as it was `changes` calls that changed it
  // ago (0: as it is).
  void SetListingLag(size_t changes) const;
  // The next `.backup` a writer finishes in folder `location` is stored with its first byte
  // flipped while its write reports success: a disk's silent fault.
  void CorruptNextManifest(const std::string& location) const;

  // The disk as it is, for tests (no process involved, nothing checked): a file's bytes
  // (nullopt if none), the names in a folder (sorted), a file written (its folders made,
  // durable at once), a path removed with everything beneath, a file cut to `size` bytes.
  std::optional<std::string> Get(const std::string& path) const;
  std::vector<std::string> List(const std::string& path) const;
  Status Put(const std::string& path, std::string data) const;
  bool RemoveAll(const std::string& path) const;
  Status Truncate(const std::string& path, uint64_t size) const;

  const MemProcess& process() const { return p_; }

 private:
  // The MemFolder `folder` if it is still the folder at its path; kBackupDamaged if it was
  // replaced or removed. REQUIRES: mu held.
  StatusOr<uint64_t> FolderIno(const BackupFolder& folder) const;

  const MemProcess p_;
};

}  // namespace stitchfs::engine
