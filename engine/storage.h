// Storage: where backups live, behind one interface (the role leveldb's Env plays). The
// resolver, the chain walk and the readers reach backups only through it: opening a backup's
// folder and its manifest, the identity of a `.backup` (to notice one replaced), opening a data
// file, listing a store. LocalStorage (local_storage.h) is the one implementation today; an
// object-storage and an archive implementation plug in here (ARCHITECTURE.md sketches both).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backup_folder.h"
#include "engine/posix_meta.h"
#include "engine/random_access_file.h"
#include "engine/status_or.h"

namespace stitchfs::engine {

// What identifies one version of a `.backup`: a manifest rewritten in place or a folder
// swapped for another one has another identity. (Locally: device, inode, size and times; a
// storage without inodes fills what identifies its objects, e.g. a hash of an ETag.)
struct ManifestIdentity {
  uint64_t dev = 0, ino = 0, size = 0;
  FileTime mtime, ctime;
  bool operator==(const ManifestIdentity&) const = default;
};

// A sub-folder of a store that holds a backup manifest.
struct StoreFolder {
  std::string name;  // Folder name inside the store.
  std::string path;  // Absolute.
  FolderIdentity folder;
  ManifestIdentity manifest;  // Of its `.backup` when scanned.
};

// A data file of a backup: its bytes and a name for messages.
class BackupDataFile : public RandomAccessFile {
 public:
  virtual const std::string& display_name() const = 0;
  // OK if the file holds exactly the `declared` bytes a manifest says; else kBackupDamaged
  // naming the file and both sizes.
  Status CheckDeclaredSize(uint64_t declared) const;
};

// The bytes of a `.backup` and the identity of the version they are.
struct ManifestSource {
  std::unique_ptr<RandomAccessFile> bytes;
  ManifestIdentity identity;
};

// Thread-safe.
class Storage {
 public:
  virtual ~Storage() = default;

  // The backup folder at `location` (a path on this machine for LocalStorage). kBackupNotFound
  // if there is none (missing, not a folder, not readable), kIOError otherwise.
  virtual StatusOr<std::shared_ptr<const BackupFolder>> OpenFolder(
      const std::string& location) const = 0;
  // The manifest of `folder`: never following a symlink, never blocking, a regular file only.
  // kBackupNotFound (none, not a regular file, a symlink; naming a `.lock` left beside it),
  // kIOError.
  virtual StatusOr<ManifestSource> OpenManifest(const BackupFolder& folder) const = 0;
  // The identity of the `.backup` at `location` now; nullopt if there is no manifest there.
  virtual std::optional<ManifestIdentity> StatManifest(const std::string& location) const = 0;
  // Data file `relative` of `folder`, opened and checked: kBackupDamaged (missing, not a
  // regular file, or the folder replaced or removed since it was opened), kInsecurePath (a
  // symlink, or a name leaving the folder), kIOError.
  virtual StatusOr<std::shared_ptr<const BackupDataFile>> OpenDataFile(
      const std::shared_ptr<const BackupFolder>& folder, const std::string& relative) const = 0;
  // The backups of the store at `location` by name (the rules of engine::ScanStore).
  virtual StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& location) const = 0;
};

}  // namespace stitchfs::engine
