// ResolvedBackup: the one read model of a backup. Opening it walks its chain of bases with
// every check (uuids, entries found in their bases, cycles, depth) and resolves every file to
// flat extents of data files across the chain. It keeps its own manifest and, of the bases,
// only their folders, uuids, times and the names of the data files its files read: its memory
// does not grow with the depth of the chain. Every reader uses it: stitch cat, restore,
// verify, diff, flatten, prune, info, the writer's base, and both mounts; one table of open
// data files serves them all.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/base/concat_file.h"
#include "engine/read/backup_stats.h"
#include "engine/read/chain_options.h"
#include "engine/storage/backup.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

struct ResolveOptions {
  // Also find each file's origin: the oldest backup down the chain from which the file (same
  // name, size, checksum and metadata) is unchanged. The walk stops at the first base for
  // which `origin_ok` (if set) says no.
  bool origins = false;
  std::function<bool(const ManifestHeader&)> origin_ok;
  // Also keep, for each file, every (size, checksum) its chain records as a prefix of it
  // (what `stitch diff` needs to call a change an append).
  bool prefixes = false;
};

// Two entries of the same name hold the same bytes and show the same attributes.
bool Unchanged(const FileEntry& a, const FileEntry& b);

// A (size, checksum) content key.
using ContentKey = std::pair<uint64_t, Checksum>;

// Thread-safe: immutable except for an internal, locked table of open data files.
class ResolvedBackup {
 public:
  struct Level {  // One backup of the chain; level 0 is the top.
    std::shared_ptr<const BackupFolder> folder;
    std::string uuid;
    std::string timestamp;
    int64_t mtime_sec = 0;  // The timestamp as an instant (seconds since the epoch), for display.
    ManifestIdentity manifest;  // The `.backup` that was read (to notice it replaced).
    std::string base_backup;    // Its header's locator of its base ("" if none).
    // True if `base_backup` is StripLocatorCredentials of the header's locator, which held
    // credentials (a level a ResolvedIndex gave: an index never keeps them).
    bool base_stripped = false;
    const std::string& path() const { return folder->path(); }
  };
  static constexpr uint32_t kOwnFile = UINT32_MAX;
  struct FlatExtent {   // `length` bytes from the start of data file `file`.
    uint32_t file = 0;  // Index into the data file table; kOwnFile: the top entry's own.
    uint32_t level = 0;
    uint64_t length = 0;
  };
  // A base's data file: its level and its name, `length` bytes at `offset` of the string area,
  // or (length kEntryName, most of them) the name of top entry `offset`.
  struct DataFileName {
    uint32_t level, offset, length;
  };
  static constexpr uint32_t kEntryName = UINT32_MAX;
  struct Origin {  // Entry `entry` of the backup at `level`.
    uint32_t level = 0;
    uint32_t entry = 0;
  };

  // Opens `dir` and its chain: from the backup's resolved index when it has a valid one (its
  // own, or one in the per-user cache), reading a bounded amount whatever the depth; else
  // from the base's resolved form and its own manifest (the base opened the same way, and an
  // index of each level so resolved kept in the per-user cache); holds a bounded number of
  // manifests at a time (besides those the cache keeps). Errors: those of Backup::Open (prefixed
  // with the child for a base), kNoBaseBackup (an entry needs a base, none named or reachable),
  // kWrongBaseBackup (uuid mismatch, an entry missing from its base, a cycle, too deep).
  static StatusOr<std::shared_ptr<const ResolvedBackup>> Open(const std::string& dir,
                                                              const ChainOptions& options = {},
                                                              const ResolveOptions& r = {});

  const Backup& top() const { return *top_; }
  size_t depth() const { return levels_.size(); }
  const Level& level(size_t i) const { return levels_[i]; }  // REQUIRES: i < depth().
  // The extents of entry `entry`, in file order (none for an empty file).
  std::vector<FlatExtent> Extents(size_t entry) const;
  // Where entry `entry` has been unchanged since ({0, entry} without ResolveOptions::origins).
  Origin origin(size_t entry) const;

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
  bool has_prefixes() const { return has_prefixes_; }
  // system.backups-style figures.
  BackupStats Stats() const;
  // Where its backups are (data files are opened through it).
  const Storage& storage() const { return *storage_; }
  // Bytes of the extents, data file names and origins, in memory or mapped (for measurements).
  size_t MemoryUsage() const;

 private:
  friend class Resolver;
  friend class ChainComposer;
  friend class ResolvedIndex;
  ResolvedBackup() = default;
  // Resolves `top` by walking its whole chain, level by level (no index).
  static StatusOr<std::unique_ptr<ResolvedBackup>> Walk(std::shared_ptr<const Backup> top,
                                                        const ChainOptions& options,
                                                        const ResolveOptions& r);
  size_t Rep(size_t entry) const;  // The entry whose extents serve `entry`.
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

  // The tables as a resolver builds them (see the views below).
  struct Tables {
    std::vector<FlatExtent> extents;
    std::vector<uint32_t> first_extent;
    std::vector<DataFileName> files;
    std::string names;
    std::vector<Origin> origins;
  };
  void Adopt(Tables t);  // The views show `t`, kept in backing_ (its origins: SetOrigins).
  void SetOrigins(std::vector<Origin> o);          // origins_ shows `o`.
  std::string_view FileName(uint32_t file) const;  // REQUIRES: file < files_.size().

  std::shared_ptr<const Backup> top_;
  std::shared_ptr<const Storage> storage_;
  std::vector<Level> levels_;
  // The tables are views of memory that backing_ keeps alive: Tables a resolver built, or the
  // bytes of a resolved index (read, or mapped from the per-user cache), used in place.
  std::shared_ptr<const void> backing_, origins_backing_;
  // Only files that read from a base have extents here ([first_extent_[rep],
  // first_extent_[rep + 1])); the others are their own data file, whole. Level-0 data files are
  // named by the manifest; the bases' ones by files_ (so a full backup costs nothing here).
  std::span<const FlatExtent> extents_;
  std::span<const uint32_t> first_extent_;  // [entry], [num_entries]; empty if extents_ is.
  std::span<const DataFileName> files_;
  std::string_view names_;
  std::span<const Origin> origins_;  // Empty without ResolveOptions::origins.
  // With ResolveOptions::prefixes: the base prefixes of rep `r` are
  // prefix_keys_[first_prefix_[r], first_prefix_[r + 1]).
  std::vector<ContentKey> prefix_keys_;
  std::vector<uint32_t> first_prefix_;
  bool has_prefixes_ = false;
  mutable std::mutex mu_;
  // Data files some reader holds: key rep (own files) or 2^32 + file. Guarded by mu_.
  mutable std::unordered_map<uint64_t, std::weak_ptr<const BackupDataFile>> open_;
  mutable uint64_t inserts_ = 0;
};

}  // namespace stitchfs::engine
