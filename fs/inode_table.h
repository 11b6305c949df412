// InodeTable: the folder tree of a backup as the mount shows it, built once from the manifest
// and immutable: inode number = position + 1 (the root is 1), directories hold sorted children,
// hard links (files with one source inode) share one inode. FUSE-free.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/format/manifest.h"

namespace stitchfs::fs {

enum class InodeType : uint8_t { kDir, kFile, kSymlink };

struct Inode {  // 20 bytes: a million-file backup has a million of them.
  InodeType type;
  uint32_t parent;       // Inode number of the parent folder (the root's is itself).
  uint32_t ref;          // kFile: manifest entry; kDir/kSymlink: manifest node, or kNoRef.
  uint32_t first_child;  // Children are [first_child, the next inode's first_child).
  uint32_t nlink;
};

struct Dirent {
  const char* name;  // Points into the Manifest (which must outlive the table).
  uint32_t name_len;
  uint32_t ino;
  std::string_view Name() const { return {name, name_len}; }
};

// Attribute defaults for backups without POSIX metadata (ClickHouse's), and overrides.
struct AttrOptions {
  int64_t default_mtime_sec = 0;     // The backup's timestamp (seconds since the epoch).
  std::optional<uint32_t> uid, gid;  // Override every owner.
  std::optional<uint32_t> umask;     // Applied to every mode.
  // Offer the backup's flat manifest as `.backup` at its root (BackupView::kManifestFile).
  bool backup_manifest = true;
};

// Thread-safe (immutable).
class InodeTable {
 public:
  static constexpr uint32_t kNoRef = UINT32_MAX;
  static constexpr uint32_t kRoot = 1;

  // Builds the tree. Folders that are only implied by paths get default attributes. REQUIRES:
  // `m` names every path once and nothing under a file (engine::CheckNames, which every
  // manifest read or loaded from the cache has passed); were a name both a file and a folder,
  // the folder would be kept.
  static InodeTable Build(const engine::Manifest& m);

  // True if built from `m` (the very object).
  bool IsOf(const engine::Manifest& m) const { return m_ == &m; }
  size_t size() const { return inodes_.size() - 1; }
  // nullptr if `ino` is out of range.
  const Inode* Get(uint64_t ino) const;
  // The child of folder `dir` named `name`, or 0.
  uint32_t Lookup(uint64_t dir, std::string_view name) const;
  // Children of a folder, sorted by name.
  std::span<const Dirent> Children(const Inode& dir) const;
  // Heap bytes used (for memory bounds).
  size_t MemoryUsage() const {
    return inodes_.capacity() * sizeof(Inode) + children_.capacity() * sizeof(Dirent);
  }
  // stat for inode `ino` (REQUIRES: Get(ino) != nullptr).
  struct stat Stat(uint64_t ino, const AttrOptions& o) const;

 private:
  explicit InodeTable(const engine::Manifest* m) : m_(m) {}
  const engine::Manifest* m_;
  std::vector<Inode> inodes_;  // [ino - 1], then one sentinel holding children_.size().
  std::vector<Dirent> children_;
};

}  // namespace stitchfs::fs
