// Storage: where backups live, behind one interface (the role leveldb's Env plays). The
// resolver, the chain walk, the readers, the writer and prune reach backups only through it:
// opening a backup's folder and its manifest, the identity of a `.backup` (to notice one
// replaced), opening a data file, listing a store, writing a backup, and the store moves prune
// makes. Each backend is a room of engine/backends/ (local, s3, archive; mem and fault for
// tests), chosen for a location by the router (engine/backends/routing_storage.h). What a
// backend can do beyond the common part is asked as a capability (MovesFor, LocatorFor,
// SharesCredentials, a file's KernelFd or Stored object), never by asking which backend it is.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/posix_meta.h"
#include "engine/base/random_access_file.h"
#include "engine/base/shared_bytes.h"
#include "engine/base/status_or.h"
#include "engine/format/manifest_identity.h"
#include "engine/storage/backup_folder.h"
#include "engine/storage/lock_text.h"

namespace stitchfs::engine {

class StoreMoves;

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

// A file being written into a backup. Not thread-safe.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  // Hands everything appended to the storage (durable only after BackupWriter::Finish). A
  // failure means written data may be lost.
  virtual Status Close() = 0;
  // An fd that in-kernel copies may write to, or -1.
  virtual int fd() const { return -1; }
  // Appends `length` bytes of `src` from `offset` without them passing through this process,
  // if the storage can (an object store copying within itself): true once appended, false if
  // the caller must copy them itself (nothing was appended then).
  virtual StatusOr<bool> AppendCopy(const RandomAccessFile& /*src*/, uint64_t /*offset*/,
                                    uint64_t /*length*/) {
    return false;
  }
};

// One backup being written (Storage::StartBackup): the destination is owned exclusively while
// written (ClickHouse's `.lock`); data files are staged, then published under their names; the
// manifest comes last, after every data file is durable. Not thread-safe, except CreateStaged,
// DropStaged and the files they return, which workers use at once for distinct ids.
class BackupWriter {
 public:
  // Without Finish: everything written is removed, the manifest first (if it cannot be, what
  // stays is a complete backup, never a manifest without its data).
  virtual ~BackupWriter() = default;
  // A new staged data file `id` (unique within this backup), to be published as data file
  // `name` if kept (an object store starts its upload at that key; Publish may still name it
  // otherwise, or it may be dropped).
  virtual StatusOr<std::unique_ptr<WritableFile>> CreateStaged(const std::string& id,
                                                               const std::string& name) = 0;
  // Removes staged file `id` if there is one.
  virtual Status DropStaged(const std::string& id) = 0;
  // Makes staged file `id` the data file `name` (a safe relative path; folders as needed),
  // in place of a data file of that name written before (a copy made again; an object store,
  // which uploads a staged file at its key, replaced it when the staged file was closed).
  virtual Status Publish(const std::string& id, const std::string& name) = 0;
  // A new data file `name`, written in place (when nothing needs staging).
  virtual StatusOr<std::unique_ptr<WritableFile>> CreateDataFile(const std::string& name) = 0;
  // Every data file durable, then `manifest` written as `.backup` atomically, then the lock
  // released. The backup is complete once this returns OK.
  virtual Status Finish(std::string_view manifest) = 0;
  // Data file `name` (made by CreateDataFile or Publish, and closed) as the storage holds it
  // now, to read back what was written before anything relies on it; `size` is its length as
  // written. kBackupDamaged if it is missing or another length, kIOError.
  virtual StatusOr<std::shared_ptr<const RandomAccessFile>> ReadBack(const std::string& name,
                                                                     uint64_t size) = 0;
};

// Thread-safe.
class Storage {
 public:
  virtual ~Storage() = default;

  // The one spelling of `location` in this storage, for comparing and keying locations (a path
  // made absolute and lexically normal for LocalStorage).
  virtual std::string Normal(const std::string& location) const = 0;
  // The backup folder at `location` (a path on this machine for LocalStorage). kBackupNotFound
  // if there is none (missing, not a folder, not readable), kIOError otherwise.
  virtual StatusOr<std::shared_ptr<const BackupFolder>> OpenFolder(
      const std::string& location) const = 0;
  // The manifest of `folder`: never following a symlink, never blocking, a regular file only.
  // kBackupNotFound (none, not a regular file, a symlink; naming a `.lock` left beside it),
  // kIOError.
  virtual StatusOr<ManifestSource> OpenManifest(const BackupFolder& folder) const = 0;
  // The identity of the `.backup` at `location` now; nullopt if there is no manifest there
  // (nothing of that name, or not a regular file); kIOError if the storage cannot tell.
  virtual StatusOr<std::optional<ManifestIdentity>> StatManifest(
      const std::string& location) const = 0;
  // True if a prune has marked the backup at `location` for removal (StoreMoves::SetAside): it
  // still opens, but no new backup may build on it. False in a storage no prune marks.
  virtual StatusOr<bool> BeingRemoved(const std::string& /*location*/) const { return false; }
  // Data file `relative` of `folder`, opened and checked: kBackupDamaged (missing, not a
  // regular file, or the folder replaced or removed since it was opened), kInsecurePath (a
  // symlink, or a name leaving the folder), kIOError. `declared_size` is the length the
  // manifest gives it: a storage that cannot learn a length without a request of its own (an
  // object store) takes it as the size and fails the reads (kBackupDamaged) if the object
  // turns out to have another; one that can learns the real size.
  virtual StatusOr<std::shared_ptr<const BackupDataFile>> OpenDataFile(
      const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
      uint64_t declared_size) const = 0;
  // The resolved index kept with the backup of `folder` (ResolvedIndex; `.stitchfs/index`
  // locally), read whole into memory of its own (never mapped: the file is not ours to keep
  // from being cut short): kBackupNotFound if there is none, kIOError.
  virtual StatusOr<SharedBytes> ReadIndex(const BackupFolder& folder) const = 0;
  // Keeps `bytes` as that index, replacing any atomically (readers see the old or the new).
  virtual Status WriteIndex(const BackupFolder& folder, std::string_view bytes) const = 0;
  // The backups of the store at `location`, sorted by name: its sub-folders (or prefixes) that
  // hold a `.backup`, and its archives; never a name starting with a dot (prune's work folders)
  // nor a backup still being written (only a `.lock`). Each room states its own rules (local:
  // ScanLocalStore). kBackupNotFound if there is no store there, kIOError if it cannot be read.
  virtual StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& location) const = 0;
  // How often a mounted store at `location` is read again for new backups, in nanoseconds
  // (a local folder costs one readdir; an object store a LIST and a HEAD per backup).
  virtual int64_t StoreRescanNs(const std::string& /*location*/) const { return 1000000000; }

  // The ClickHouse locator text that names the backup at `location` from anywhere (a base
  // locator): `File('/abs/path')` locally, `S3('https://endpoint/bucket/key')` for object
  // storage (never with credentials).
  virtual std::string LocatorFor(const std::string& location) const = 0;
  // True if a backup at `location` reads its base at `base` with its own credentials (both in
  // object storage, signed the same way): what ClickHouse's
  // <base_backup_copy_s3_credentials_from_backup> tells a restore.
  virtual bool SharesCredentials(const std::string& /*location*/,
                                 const std::string& /*base*/) const {
    return false;
  }

  // Starts writing backup `intent.uuid` at `location`, its `.lock` saying what `intent` says:
  // kBackupAlreadyExists if a backup, a live writer's `.lock` or anything else is there, or if
  // `location` lies inside another backup. An unfinished backup whose writer died is taken over
  // (its partial data removed) and `*notice` says so.
  virtual StatusOr<std::unique_ptr<BackupWriter>> StartBackup(const std::string& location,
                                                              const WriterIntent& intent,
                                                              std::string* notice) const = 0;
  // The steps by which prune changes the store at `location` (store_moves.h), this storage's
  // own. kNotSupported (the default) for a storage whose stores are never changed (archives).
  virtual StatusOr<std::unique_ptr<StoreMoves>> MovesFor(const std::string& location) const;
};

}  // namespace stitchfs::engine
