// ResolvedTables: a backup's chain resolved to flat extents of data files, as plain data: the
// levels of the chain, the bases' data files its files read, each file's extents and origin,
// and (for diff) the prefixes its chain records. The walk (chain_resolve), the composer
// (chain_compose) and the index decoder (resolved_index) build them; ResolvedBackup is made
// from them and only reads them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/checksum.h"
#include "engine/storage/backup_folder.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// A (size, checksum) content key.
using ContentKey = std::pair<uint64_t, Checksum>;

// Thread-compatible; copying shares the levels and the tables' memory.
struct ResolvedTables {
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
  // A base's data file: its level and its name, `length` bytes at `offset` of `names`, or
  // (length kEntryName, most of them) the name of top entry `offset`.
  struct DataFileName {
    uint32_t level, offset, length;
  };
  static constexpr uint32_t kEntryName = UINT32_MAX;
  struct Origin {  // Entry `entry` of the backup at `level`.
    uint32_t level = 0;
    uint32_t entry = 0;
  };
  // The tables in vectors of their own, as a builder makes them (Adopt).
  struct Built {
    std::vector<FlatExtent> extents;
    std::vector<uint32_t> first_extent;
    std::vector<DataFileName> files;
    std::string names;
    std::vector<Origin> origins;
  };

  // The views show `t`, which `backing` keeps from now on (its origins apart: SetOrigins).
  void Adopt(Built t);
  // `origins` shows `o`, which `origins_backing` keeps (whatever it kept before is let go).
  void SetOrigins(std::vector<Origin> o);

  // [0]: the top backup; then each base, down the chain. Shared, immutable: a level composed
  // on the one below shares its levels (copies of them made composing a chain of depth n
  // cost n^2).
  std::vector<std::shared_ptr<const Level>> levels;
  void AddLevel(Level l) { levels.push_back(std::make_shared<const Level>(std::move(l))); }
  // Views of memory that `backing` and `origins_backing` keep alive: tables a builder made
  // (Adopt), or the bytes of a resolved index, used in place. Only files that read from a base
  // have extents ([first_extent[rep], first_extent[rep + 1])); the others are their own data
  // file, whole. Level-0 data files are named by the top's manifest, the bases' ones by
  // `files` (so a full backup costs nothing here).
  std::span<const FlatExtent> extents;
  std::span<const uint32_t> first_extent;  // [entry], [num_entries]; empty if extents is.
  std::span<const DataFileName> files;
  std::string_view names;
  std::span<const Origin> origins;  // Empty when origins were not resolved.
  std::shared_ptr<const void> backing, origins_backing;
  // With prefixes: those of rep `r` are prefix_keys[first_prefix[r], first_prefix[r + 1]).
  std::vector<ContentKey> prefix_keys;
  std::vector<uint32_t> first_prefix;
  bool has_prefixes = false;
};

}  // namespace stitchfs::engine
