// Backup: one opened backup folder: its manifest and a folder fd that every data file is
// opened beneath.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "engine/manifest.h"
#include "engine/unique_fd.h"

namespace stitchfs::engine {

// Thread-safe (immutable).
class Backup {
 public:
  // Opens the backup in folder `dir` and parses its `.backup`. Errors: kBackupNotFound (no
  // folder, no `.backup`, unreadable), and every error of ReadManifestFd.
  static StatusOr<std::shared_ptr<const Backup>> Open(const std::string& dir);

  const std::string& path() const { return path_; }
  int dir_fd() const { return dir_fd_.get(); }
  const Manifest& manifest() const { return *manifest_; }
  const ManifestHeader& header() const { return manifest_->header(); }
  uint64_t manifest_bytes() const { return manifest_bytes_; }
  // "Backup <path>: ", the prefix of messages about this backup.
  std::string Prefix() const { return "Backup " + path_ + ": "; }

 private:
  Backup(std::string path, UniqueFd dir_fd, std::unique_ptr<const Manifest> m, uint64_t bytes)
      : path_(std::move(path)),
        dir_fd_(std::move(dir_fd)),
        manifest_(std::move(m)),
        manifest_bytes_(bytes) {}

  std::string path_;
  UniqueFd dir_fd_;
  std::unique_ptr<const Manifest> manifest_;
  uint64_t manifest_bytes_;
};

// Opened backups shared by many chains (a store mount: a base opened once serves every backup
// above it). Entries live as long as some chain holds them. Thread-safe.
class BackupCache {
 public:
  // The cached backup at `dir` (same absolute path), or Backup::Open(dir).
  StatusOr<std::shared_ptr<const Backup>> Open(const std::string& dir);

 private:
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<const Backup>> open_;
};

}  // namespace stitchfs::engine
