// ListingCache: the last listing of each of a few folders whose content has a version (the
// store's own folders: the root, at/, by-uuid/, .generations). A listing is read a page at a
// time (readdir with growing offsets); building the whole list for each page made listing N
// backups cost N^2. FUSE-free.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "fs/namespace.h"

namespace stitchfs::fs {

// Thread-safe.
class ListingCache {
 public:
  using Entries = std::shared_ptr<const std::vector<DirEntry>>;

  // The listing of folder `ino` at content version `version`: the one kept, if it was built at
  // that version, else `build()`, kept from now on. `build` may see a newer version than
  // `version` (the content changed meanwhile): it is then built again next time. REQUIRES:
  // `build` does not call this cache.
  Entries Get(uint64_t ino, uint64_t version, const std::function<std::vector<DirEntry>()>& build) {
    std::lock_guard<std::mutex> lock(mu_);
    Kept& k = kept_[ino];
    if (!k.entries || k.version != version) {
      k.entries = std::make_shared<const std::vector<DirEntry>>(build());
      k.version = version;
    }
    return k.entries;
  }

 private:
  struct Kept {
    uint64_t version = 0;
    Entries entries;
  };
  std::mutex mu_;
  std::map<uint64_t, Kept> kept_;  // Guarded by mu_.
};

}  // namespace stitchfs::fs
