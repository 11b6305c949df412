// BackupView: one resolved backup as a Namespace, over its immutable InodeTable.
#pragma once

#include <map>
#include <mutex>

#include "engine/read/backup_stats.h"
#include "engine/read/resolved_backup.h"
#include "fs/inode_table.h"
#include "fs/namespace.h"

namespace stitchfs::fs {

// Thread-safe: immutable after construction, except the figures computed on first use.
class BackupView final : public Namespace {
 public:
  // `parent_ino` is what ".." of the root reports (the root itself for a single mount).
  BackupView(std::shared_ptr<const engine::ResolvedBackup> backup, AttrOptions attr,
             uint64_t parent_ino = InodeTable::kRoot);
  // The same with its inode table already built (InodeTable::Build of backup->top()'s
  // manifest, e.g. on another core while the chain resolved); one built from another manifest
  // is ignored and built again.
  BackupView(std::shared_ptr<const engine::ResolvedBackup> backup, InodeTable table,
             AttrOptions attr);
  // The same sharing the table of `shape` (REQUIRES: built from backup->top()'s manifest).
  BackupView(std::shared_ptr<const engine::ResolvedBackup> backup, const BackupView& shape);

  engine::StatusOr<struct stat> Attr(uint64_t ino) const override;
  engine::StatusOr<uint64_t> Lookup(uint64_t parent, std::string_view name) const override;
  double Timeout(uint64_t) const override { return kForever; }
  engine::StatusOr<std::vector<DirEntry>> ReadDir(uint64_t ino, size_t offset,
                                                  size_t max) const override;
  engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> Open(
      uint64_t ino) const override;
  // A regular file of the backup (not .appended's, not the flat manifest) with bytes gets its
  // ContentCheck.
  engine::StatusOr<std::shared_ptr<FileReads>> Reads(uint64_t ino) const override;
  void NoteDamaged(uint64_t ino, const engine::Status& s) const override;
  // Files are numbered in the order of their paths (InodeTable), which is a walk's order.
  std::optional<uint64_t> NextFile(uint64_t ino) const override;
  std::optional<uint64_t> FirstFileIn(uint64_t dir) const override;
  engine::StatusOr<std::string> Readlink(uint64_t ino) const override;
  engine::StatusOr<std::vector<std::string>> XattrNames(uint64_t ino) const override;
  engine::StatusOr<std::string> Xattr(uint64_t ino, const std::string& name) const override;
  uint64_t TotalBytes() const override;  // (Summed on first use: statfs only.)
  uint64_t NumInodes() const override { return table_->size(); }

  const engine::ResolvedBackup& backup() const { return *backup_; }
  const InodeTable& table() const { return *table_; }
  // True for a regular file of the tree, whose bytes are read through the chain (not a file of
  // .appended, which are the top's own data files, nor the flat manifest, made from the top's).
  bool ReadsThroughChain(uint64_t ino) const { return !IsManifest(ino) && !IsMirror(ino); }
  // For a regular file that is not a hard link: where it has been unchanged since (see
  // engine::ResolveOptions::origins). nullopt for anything else.
  std::optional<engine::ResolvedBackup::Origin> Origin(uint64_t ino) const;
  // Heap bytes of the manifest, the tree and the extents (for memory bounds).
  size_t MemoryUsage() const {
    return backup_->top().manifest().MemoryUsage() + table_->MemoryUsage() + backup_->MemoryUsage();
  }
  // system.backups-style figures, computed on first request.
  const engine::BackupStats& Stats() const;

  static constexpr double kForever = 365.0 * 24 * 3600;  // Backup content never changes.
  // The hidden folder at the root that mirrors the tree with only the bytes each file gained in
  // this backup (its stored tail). Found by name, never listed (so cp -a and diff ignore it).
  static constexpr const char* kAppendedDir = ".appended";
  // The hidden file at the root that is this backup's manifest as one full backup
  // (engine::RenderFlatManifest), so that ClickHouse's RESTORE ... FROM File('<mount>') reads
  // this point in time without its chain. Found by name, never listed; absent when the backup
  // holds a file of that name itself, or with AttrOptions::backup_manifest off.
  static constexpr const char* kManifestFile = ".backup";

 private:
  // Inodes above table_->size() are the .appended mirror of inode (ino - size); the one after
  // them is the flat manifest.
  const Inode* Get(uint64_t ino) const { return table_->Get(Real(ino)); }
  uint64_t ManifestIno() const { return 2 * table_->size() + 1; }
  bool IsManifest(uint64_t ino) const { return attr_.backup_manifest && ino == ManifestIno(); }
  engine::StatusOr<struct stat> ManifestAttr() const;
  engine::StatusOr<std::string> FlatManifest() const;
  bool IsMirror(uint64_t ino) const { return ino > table_->size() && ino <= 2 * table_->size(); }
  uint64_t Real(uint64_t ino) const { return IsMirror(ino) ? ino - table_->size() : ino; }
  uint64_t Mirror(uint64_t real) const { return real + table_->size(); }

  std::shared_ptr<const engine::ResolvedBackup> backup_;
  std::shared_ptr<const InodeTable> table_;  // Never null.
  AttrOptions attr_;
  uint64_t parent_ino_;
  mutable std::once_flag total_once_;
  mutable uint64_t total_size_ = 0;  // Set on first use.
  static constexpr uint64_t kNextFileSteps = 64;
  FileReadsCache reads_;
  mutable std::mutex damaged_mu_;
  mutable std::map<uint64_t, engine::Status> damaged_;  // NoteDamaged's (at most kMaxDamaged).
  static constexpr size_t kMaxDamaged = 4096;
  mutable std::once_flag manifest_once_;
  mutable engine::StatusOr<uint64_t> manifest_size_ = uint64_t{0};  // Set on first use.
  mutable std::once_flag stats_once_;
  mutable engine::BackupStats stats_;
};

}  // namespace stitchfs::fs
