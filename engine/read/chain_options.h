// ChainOptions: how the bases of a backup are found and opened (the Context: storage, shared
// caches, the backups root and disks locators are relative to; an explicit base, depth limit);
// ResolveOptions: what is resolved besides each file's extents.
#pragma once

#include <functional>
#include <string>

#include "engine/format/manifest.h"
#include "engine/location/locator.h"
#include "engine/storage/context.h"

namespace stitchfs::engine {

// A Context (where the backups are, the shared caches, what locators mean) and how the bases
// of one backup are found.
struct ChainOptions : Context {
  std::string base_override;  // --base DIR: the top backup's base, if set.
  size_t max_depth = 100000;  // Longest chain accepted.
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
