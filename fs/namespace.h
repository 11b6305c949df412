// Namespace: what the FUSE handlers see of a mount, FUSE-free. One backup (BackupView) or a
// whole store of backups (StoreView). Inode 1 is the root.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/random_access_file.h"
#include "engine/status_or.h"
#include "fs/listing_policy.h"

namespace stitchfs::fs {

// Thread-safe: handlers call it from many threads.
class Namespace {
 public:
  virtual ~Namespace() = default;

  // Attributes of `ino`; nullopt if there is no such inode (any more).
  virtual std::optional<struct stat> Attr(uint64_t ino) const = 0;
  // The inode named `name` in folder `parent`, or 0 (REQUIRES: parent is a folder).
  virtual uint64_t Lookup(uint64_t parent, std::string_view name) const = 0;
  // Seconds the kernel may cache what was said about `ino` (attributes, and lookups in it).
  virtual double Timeout(uint64_t ino) const = 0;
  // Entry `index` of folder `ino`: 0 is ".", 1 is "..", then the children in order. False past
  // the end. (REQUIRES: ino is a folder.)
  virtual bool DirEntry(uint64_t ino, size_t index, std::string* name, uint64_t* child) const = 0;
  // OK if folder `ino` can be listed and searched; the reason if not (a broken backup in a store).
  virtual engine::Status CheckDir(uint64_t) const { return engine::Status::OK(); }
  // A reader for the regular file `ino`.
  virtual engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> Open(
      uint64_t ino) const = 0;
  // The target of symlink `ino`.
  virtual engine::StatusOr<std::string> Readlink(uint64_t ino) const = 0;
  virtual std::vector<std::string> XattrNames(uint64_t ino) const = 0;
  virtual std::optional<std::string> Xattr(uint64_t ino, const std::string& name) const = 0;
  // For statfs.
  virtual uint64_t TotalBytes() const = 0;
  virtual uint64_t NumInodes() const = 0;
};

// The session's userdata.
struct MountContext {
  std::unique_ptr<Namespace> ns;
  bool foreground = false;
  // Runs once, at the first request after the kernel has applied the INIT reply (settings the
  // kernel would otherwise overwrite during INIT, such as the readahead size).
  std::function<void()> after_init;
  std::once_flag after_init_once;
  ListingPolicy listing;  // Whether listings carry the attributes of files.
};

// Logs one line (stderr in the foreground, syslog otherwise).
void LogError(const MountContext& c, const std::string& line);

}  // namespace stitchfs::fs
