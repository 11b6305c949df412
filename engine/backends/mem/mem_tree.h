// MemTree: a file system in memory (folders and files by inode number, no links), and the copy
// of it a power loss would leave: what was made durable, file by file and folder by folder, as
// fsync of a file, fsync of a folder (its entries, not what they hold) and syncfs (everything)
// make it on a real one. MemStorage's disk.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct MemNode {
  bool folder = false;
  std::map<std::string, uint64_t> children;  // A folder's entries: name -> inode.
  std::shared_ptr<const std::string> data;   // A file's bytes (never null for a file).
  uint64_t changed = 0;                      // The tree's clock at the last change.
};

// `name` (one name or a relative path) in folder `dir`.
std::string JoinMemPath(std::string_view dir, std::string_view name);

// Not thread-safe. Paths are absolute and lexically normal ("/a/b"); a relative path is a
// chain of plain names ("a/b", no "." or ".." or empty names). Errors are kIOError with the
// errno the same call gets from the kernel (ENOENT, ENOTDIR, EEXIST, EISDIR, ENOTEMPTY).
class MemTree {
 public:
  static constexpr uint64_t kRoot = 1;
  MemTree();

  // The inode at `path`, or 0.
  uint64_t Find(std::string_view path) const;
  // The inode at relative path `rel` beneath folder `dir`, or 0.
  uint64_t FindBeneath(uint64_t dir, std::string_view rel) const;
  bool Exists(uint64_t ino) const { return live_.count(ino) > 0; }
  // REQUIRES: Exists(ino).
  const MemNode& node(uint64_t ino) const { return live_.at(ino); }

  // Creates folder `path` and the missing ones above it; returns its inode. `*created` tells
  // whether `path` itself was made.
  StatusOr<uint64_t> MakeFolders(std::string_view path, bool* created = nullptr);
  // Creates the file `path` holding `data` (its folder must exist); unless `exclusive`, a file
  // already there is replaced by the new inode (rename's way: readers of the old keep it).
  StatusOr<uint64_t> CreateFile(std::string_view path, std::string data, bool exclusive);
  // Replaces the bytes of file `ino` in place (same inode). REQUIRES: a file.
  void SetData(uint64_t ino, std::shared_ptr<const std::string> data);
  // rename(2): moves `from` to `to`, replacing a file or an empty folder there.
  Status Rename(std::string_view from, std::string_view to);
  // renameat2(RENAME_EXCHANGE): `a` and `b` swap places.
  Status Exchange(std::string_view a, std::string_view b);
  // Removes `path` and everything beneath it; false if nothing was there.
  bool RemoveAll(std::string_view path);
  // unlink(2) or rmdir(2) of `path`.
  Status Remove(std::string_view path);

  // fsync(2) of file or folder `ino`.
  void Sync(uint64_t ino);
  // syncfs(2): everything.
  void SyncAll() { durable_ = live_; }
  // A power loss: the tree becomes what was made durable.
  void LoseUnsynced();

  // Counts changes: a node's `changed` is the count when it was last changed.
  uint64_t clock() const { return clock_; }
  // The bytes of the files at and beneath `ino`.
  uint64_t BytesBeneath(uint64_t ino) const;

 private:
  using Nodes = std::unordered_map<uint64_t, MemNode>;
  // The folder holding `path` and the name in it; kIOError if that folder is not there.
  StatusOr<std::pair<uint64_t, std::string>> Parent(std::string_view path) const;
  uint64_t Add(MemNode n);
  void Erase(uint64_t ino);  // `ino` and everything beneath it, from the live tree.
  void Touch(uint64_t ino) { live_.at(ino).changed = ++clock_; }

  Nodes live_, durable_;
  uint64_t next_ino_ = kRoot + 1;
  uint64_t clock_ = 1;
};

}  // namespace stitchfs::engine
