// ChainOptions: how the bases of a backup are found and opened (the backups root and disks
// locators are relative to, an explicit base, depth limit, shared caches); ResolveOptions:
// what is resolved besides each file's extents.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "engine/format/manifest.h"
#include "engine/storage/locator.h"

namespace stitchfs::engine {

class BackupCache;
class ManifestCache;
class Storage;

struct ChainOptions {
  // Where the backups are; null: this machine's file systems (a LocalStorage with its own
  // cache of `max_open_files` data files).
  std::shared_ptr<const Storage> storage;
  // The backups root and disks that give base locators their meaning (--backups-root,
  // --clickhouse-config, --disk NAME=DIR).
  LocatorContext locators;
  std::string base_override;             // --base DIR: the top backup's base, if set.
  size_t max_depth = 100000;             // Longest chain accepted.
  size_t max_open_files = 0;             // Data files kept open; 0 = DefaultFdCapacity().
  std::shared_ptr<BackupCache> backups;  // Share opened backups between chains (optional).
  // Parsed manifests and resolved indexes kept across runs (the front ends pass the per-user
  // one, ManifestCache::Default()); none if null.
  const ManifestCache* cache = nullptr;
};

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

}  // namespace stitchfs::engine
