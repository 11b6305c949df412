// Backup: one opened backup folder: its manifest and a folder fd that every data file is
// opened beneath.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "engine/base/lru.h"
#include "engine/base/unique_fd.h"
#include "engine/format/manifest.h"
#include "engine/storage/backup_folder.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// The header of the backup in `dir` (what listing a store needs), read through `storage` with
// Backup::Open's rules for opening `.backup`; `*id` receives the identity of what was read,
// `*folder` that of the folder. Errors: those of Backup::Open for the header.
StatusOr<ManifestHeader> ReadBackupHeader(const Storage& storage, const std::string& dir,
                                          ManifestIdentity* id, FolderIdentity* folder);

// OK if the `.backup` in `dir` of `storage` reads back as exactly `manifest`: what a writer's
// Finish wrote, checked before anything relies on it (a flattened copy put in a backup's
// place). kIOError if it reads back other bytes or another length (naming the first byte that
// differs), or cannot be opened or read (whatever the storage's reason: the write failed).
Status CheckManifestReadsBack(const Storage& storage, const std::string& dir,
                              std::string_view manifest);

class ManifestCache;

// Thread-safe (immutable).
class Backup {
 public:
  // Opens the backup in folder `dir` of `storage` and parses its `.backup`, or loads it from
  // `cache` (none if nullptr), storing it there after a parse. `.backup` must be a regular
  // file: it is opened without following a symlink and without blocking (a FIFO of that name
  // is refused at once). Errors: kBackupNotFound (no folder, no `.backup`, unreadable, not a
  // regular file), kIOError (EMFILE, EIO, ...), and every error of ReadManifestFd.
  static StatusOr<std::shared_ptr<const Backup>> Open(const Storage& storage,
                                                      const std::string& dir,
                                                      const ManifestCache* cache);

  const std::string& path() const { return folder_->path(); }
  const std::shared_ptr<const BackupFolder>& folder() const { return folder_; }
  const ManifestIdentity& identity() const { return identity_; }
  const Manifest& manifest() const { return *manifest_; }
  const ManifestHeader& header() const { return manifest_->header(); }
  uint64_t manifest_bytes() const { return manifest_bytes_; }
  // "Backup <path>: ", the prefix of messages about this backup.
  std::string Prefix() const { return "Backup " + path() + ": "; }

 private:
  Backup(std::shared_ptr<const BackupFolder> folder, std::unique_ptr<const Manifest> m,
         ManifestIdentity id, uint64_t manifest_bytes)
      : folder_(std::move(folder)),
        manifest_(std::move(m)),
        manifest_bytes_(manifest_bytes),
        identity_(id) {}

  std::shared_ptr<const BackupFolder> folder_;
  std::unique_ptr<const Manifest> manifest_;
  uint64_t manifest_bytes_;
  ManifestIdentity identity_;
};

// Opened backups shared by many chains (a store mount: a base opened once serves every backup
// above it). An entry lives while some chain holds it; besides, the most recently used ones are
// kept while their manifests use at most `keep_bytes` of memory in all. Thread-safe.
class BackupCache {
 public:
  explicit BackupCache(size_t keep_bytes = 0) : keep_bytes_(keep_bytes) {}

  // The cached backup at `dir` (same absolute path) if its `.backup` is still the one that was
  // parsed (same identity), else Backup::Open(storage, dir, cache).
  StatusOr<std::shared_ptr<const Backup>> Open(const Storage& storage, const std::string& dir,
                                               const ManifestCache* cache);
  // Bytes of manifest memory held by the kept (most recently used) backups.
  size_t kept_bytes() const;

 private:
  void Keep(const std::shared_ptr<const Backup>& b);  // REQUIRES: mu_ held.

  const size_t keep_bytes_;
  mutable std::mutex mu_;
  std::map<std::string, std::weak_ptr<const Backup>> open_;
  Lru<const Backup*, std::shared_ptr<const Backup>> kept_;  // Weighing their manifests' memory.
};

}  // namespace stitchfs::engine
