// Namespace: what the FUSE handlers see of a mount, FUSE-free. One backup (BackupView) or a
// whole store of backups (StoreView). Inode 1 is the root.
//
// Every answer is a StatusOr. kEntryNotFound means absent: no such inode, name or attribute.
// fuse_ops.cc replies it as ENOENT, a missing name as a negative entry that the kernel keeps for
// Timeout(parent), a missing attribute as ENODATA. Any other error goes through
// engine::ErrnoFor: a backup that cannot be opened, or damage, is EIO, never ENOENT.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/random_access_file.h"
#include "engine/base/status_or.h"
#include "fs/file_reads.h"
#include "fs/listing_policy.h"

namespace stitchfs::fs {

// One entry of a folder listing.
struct DirEntry {
  std::string name;
  uint64_t ino = 0;
  // A folder whose attributes cost opening a backup (a store's backup folders): a listing gives
  // its name and type only, and a stat or a lookup opens it.
  bool costly = false;
};

// Thread-safe: handlers call it from many threads.
class Namespace {
 public:
  virtual ~Namespace() = default;

  // Attributes of `ino`. kEntryNotFound if there is no such inode (any more).
  virtual engine::StatusOr<struct stat> Attr(uint64_t ino) const = 0;
  // The inode named `name` in folder `parent`. kEntryNotFound if there is none; an error if the
  // folder cannot be read. (REQUIRES: parent is a folder.)
  virtual engine::StatusOr<uint64_t> Lookup(uint64_t parent, std::string_view name) const = 0;
  // Seconds the kernel may cache what was said about `ino` (attributes, and lookups in it).
  virtual double Timeout(uint64_t ino) const = 0;
  // Up to `max` entries of folder `ino` from position `offset` on: 0 is ".", 1 is "..", then the
  // children in order. Fewer (none) at the end. (REQUIRES: ino is a folder.)
  virtual engine::StatusOr<std::vector<DirEntry>> ReadDir(uint64_t ino, size_t offset,
                                                          size_t max) const = 0;
  // A reader for the regular file `ino`.
  virtual engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> Open(
      uint64_t ino) const = 0;
  // What the reads of the regular file `ino` share (its reader and the check of its bytes),
  // kept while it is read: each read asks for it.
  virtual engine::StatusOr<std::shared_ptr<FileReads>> Reads(uint64_t ino) const = 0;
  // The regular file a tree walk (tar, cp -a, rsync: folders in listing order, depth first)
  // reads after file `ino`, and the first one it reads in folder `dir`; nullopt where none is
  // known (WalkAhead).
  virtual std::optional<uint64_t> NextFile(uint64_t /*ino*/) const { return std::nullopt; }
  virtual std::optional<uint64_t> FirstFileIn(uint64_t /*dir*/) const { return std::nullopt; }
  // A whole read of file `ino` found it damaged (`s`): its later FileReads carry it.
  virtual void NoteDamaged(uint64_t /*ino*/, const engine::Status& /*s*/) const {}
  // A read of `ino` through what Reads gave failed with `s`: true if the file is now read
  // otherwise (its backup's chain opened again), so one more try is worth it.
  virtual bool ReadFailed(uint64_t /*ino*/, const engine::Status& /*s*/) const { return false; }
  // The target of symlink `ino`; kInvalidArgument if `ino` is not a symlink.
  virtual engine::StatusOr<std::string> Readlink(uint64_t ino) const = 0;
  // Lookup and Readlink as asked by thread `caller` (FUSE's pid of the request; 0: unknown),
  // so that a link read and the lookups that follow it in the same path walk can agree
  // (StoreView's links to backup folders).
  virtual engine::StatusOr<uint64_t> LookupBy(uint64_t caller, uint64_t parent,
                                              std::string_view name) const {
    (void)caller;
    return Lookup(parent, name);
  }
  virtual engine::StatusOr<std::string> ReadlinkBy(uint64_t caller, uint64_t ino) const {
    (void)caller;
    return Readlink(ino);
  }
  // Seconds the kernel may keep the entry of `child` in folder `parent` (child 0: the name is
  // absent).
  virtual double EntryTimeout(uint64_t parent, uint64_t child) const {
    (void)child;
    return Timeout(parent);
  }
  // The names of the extended attributes of `ino`, and the value of one (kEntryNotFound if `ino`
  // has no attribute `name`).
  virtual engine::StatusOr<std::vector<std::string>> XattrNames(uint64_t ino) const = 0;
  virtual engine::StatusOr<std::string> Xattr(uint64_t ino, const std::string& name) const = 0;
  // For statfs.
  virtual uint64_t TotalBytes() const = 0;
  virtual uint64_t NumInodes() const = 0;
};

class WalkAhead;
class PageTrim;

// The session's userdata.
struct MountContext {
  std::unique_ptr<Namespace> ns;
  bool foreground = false;
  // Runs once, at the first request after the kernel has applied the INIT reply (settings the
  // kernel would otherwise overwrite during INIT, such as the readahead size).
  std::function<void()> after_init;
  std::once_flag after_init_once;
  ListingPolicy listing;     // Whether listings carry the attributes of files.
  bool verify_reads = true;  // Check files read from start to end (-o noverify: off).
  // Each OPEN must be answered: a store's backups may break or go under a live mount, and an
  // open of a file of a backup that broke fails, even when the kernel holds its pages. One
  // backup's files keep their content (a chain changed under it is opened again: SingleView).
  bool answer_opens = true;
  // The kernel opens files without asking (answer_opens is off and it offered to at INIT,
  // Linux 4.20 and later); else each OPEN is answered, and RELEASE follows.
  bool kernel_opens = false;
  WalkAhead* walk = nullptr;  // Reading ahead of tree walks, when on (owned by the mount).
  PageTrim* trim = nullptr;   // Releasing mapped pages after use (owned by the mount).
};

// Logs one line (stderr in the foreground, syslog otherwise).
void LogError(const MountContext& c, const std::string& line);

}  // namespace stitchfs::fs
