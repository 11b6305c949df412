// ResolvedBackup: the one read model of a backup. Opening it walks its chain of bases with
// every check (uuids, entries found in their bases, cycles, depth) and resolves every file to
// flat extents of data files across the chain. It keeps its own manifest and, of the bases,
// only their folders, uuids, times and the names of the data files its files read: its memory
// does not grow with the depth of the chain. Every reader uses it: stitch cat, restore,
// verify, diff, flatten, prune, info, the writer's base, and both mounts; one table of open
// data files serves them all. Made from ResolvedTables, which it only reads; OpenResolved
// (open_resolved.h) opens one.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/base/concat_file.h"
#include "engine/read/backup_stats.h"
#include "engine/read/resolved_tables.h"
#include "engine/storage/backup.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// Two entries of the same name hold the same bytes and show the same attributes.
bool Unchanged(const FileEntry& a, const FileEntry& b);

// Thread-safe: immutable except for an internal, locked table of open data files.
class ResolvedBackup {
 public:
  using Level = ResolvedTables::Level;
  using FlatExtent = ResolvedTables::FlatExtent;
  using DataFileName = ResolvedTables::DataFileName;
  using Origin = ResolvedTables::Origin;
  static constexpr uint32_t kOwnFile = ResolvedTables::kOwnFile;
  static constexpr uint32_t kEntryName = ResolvedTables::kEntryName;

  // The backup `top` with its chain as `tables` resolve it; data files are opened through
  // `storage`. REQUIRES: tables.levels[0] is `top`, and the tables agree with its manifest (as
  // the walk and the composer make them, and as ResolvedIndex::Decode checks them). Opening a
  // backup is OpenResolved's (open_resolved.h).
  ResolvedBackup(std::shared_ptr<const Backup> top, std::shared_ptr<const Storage> storage,
                 ResolvedTables tables)
      : top_(std::move(top)), storage_(std::move(storage)), t_(std::move(tables)) {}

  const Backup& top() const { return *top_; }
  const std::shared_ptr<const Backup>& shared_top() const { return top_; }
  size_t depth() const { return t_.levels.size(); }
  const Level& level(size_t i) const { return *t_.levels[i]; }  // REQUIRES: i < depth().
  // The extents of entry `entry`, in file order (none for an empty file).
  std::vector<FlatExtent> Extents(size_t entry) const;
  // Where entry `entry` has been unchanged since ({0, entry} without ResolveOptions::origins).
  Origin origin(size_t entry) const;
  // The entry whose extents serve `entry`: the first of the top's entries with its content.
  size_t Rep(size_t entry) const;
  // The name of data file `file` of the tables (REQUIRES: file < tables().files.size()).
  std::string_view FileName(uint32_t file) const;

  // Readers of entry `entry`: the whole file, or only the bytes this backup stores itself
  // ([base_size, size), the whole file when it uses no base, nothing when it comes whole from
  // the base). Every data file involved is opened (or shared) and its length checked: one of
  // another length than the manifest declares is kBackupDamaged naming the backup, the data
  // file and the entry.
  StatusOr<std::shared_ptr<const RandomAccessFile>> OpenEntry(size_t entry) const;
  StatusOr<std::shared_ptr<const RandomAccessFile>> OpenStoredTail(size_t entry) const;
  // The segments OpenEntry reads, in file order (for in-kernel copies of each data file).
  StatusOr<std::vector<Segment>> OpenSegments(size_t entry) const;
  // Every (size, checksum) known to be a prefix of entry `entry`, the whole file included
  // (REQUIRES: opened with ResolveOptions::prefixes).
  std::vector<ContentKey> Prefixes(size_t entry) const;
  bool has_prefixes() const { return t_.has_prefixes; }
  // system.backups-style figures.
  BackupStats Stats() const;
  // Where its backups are (data files are opened through it).
  const Storage& storage() const { return *storage_; }
  // The tables it reads (for ResolvedIndex::Encode and the composer, which builds on them).
  const ResolvedTables& tables() const { return t_; }
  // Bytes of the extents, data file names and origins, in memory or mapped (for measurements).
  size_t MemoryUsage() const;

 private:
  StatusOr<std::vector<Segment>> Segments(size_t rep, std::span<const FlatExtent> x) const;
  StatusOr<std::shared_ptr<const RandomAccessFile>> Stitch(size_t rep,
                                                           std::span<const FlatExtent> x) const;
  StatusOr<std::shared_ptr<const BackupDataFile>> OpenDataFile(size_t rep,
                                                               const FlatExtent& x) const;
  // Data file `name` of `folder`, or the object a lightweight snapshot's name stands for.
  StatusOr<std::shared_ptr<const BackupDataFile>> OpenNamed(
      const std::shared_ptr<const BackupFolder>& folder, const std::string& name,
      uint64_t length) const;
  Status AboutEntry(size_t entry, const Status& s) const;  // s, prefixed with backup and entry.

  const std::shared_ptr<const Backup> top_;
  const std::shared_ptr<const Storage> storage_;
  const ResolvedTables t_;
  mutable std::mutex mu_;
  // Data files some reader holds: key rep (own files) or 2^32 + file. Guarded by mu_.
  mutable std::unordered_map<uint64_t, std::weak_ptr<const BackupDataFile>> open_;
  mutable uint64_t inserts_ = 0;
};

}  // namespace stitchfs::engine
