// ManifestIdentity: what identifies one version of a `.backup`, so that a manifest rewritten in
// place, or a folder swapped for another one, is noticed (by the caches of parsed manifests and
// resolved indexes, and by a mount).
#pragma once

#include <cstdint>

#include "engine/base/posix_meta.h"

namespace stitchfs::engine {

// Locally: device, inode, size and times; a storage without inodes fills what identifies its
// objects (e.g. a hash of an ETag).
struct ManifestIdentity {
  uint64_t dev = 0, ino = 0, size = 0;
  FileTime mtime, ctime;
  bool operator==(const ManifestIdentity&) const = default;
  auto operator<=>(const ManifestIdentity&) const = default;
};

}  // namespace stitchfs::engine
