// BlockCache: blocks of remote objects kept on local disk, so that random and repeated reads
// of a backup in object storage do not go to the network. A block is named by the object's
// URL, its ETag and the block's number, so a replaced object (another ETag) never finds the
// old one's blocks. Bounded: least recently used blocks go first. Each block file carries its
// key and a checksum of its bytes: a block cut short, damaged or another's is a miss (and is
// removed), never bytes. Several processes may share one folder (each keeps its own view of
// the total; files are written whole and renamed into place).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "engine/base/lru.h"

namespace stitchfs::engine {

// Thread-safe.
class BlockCache {
 public:
  static constexpr uint64_t kBlockBytes = 1 << 20;  // As mountpoint-s3's cache.

  // The cache in folder `dir` (made 0700 if missing, made private if not: PrivateFolder; its
  // sub-folders too, blocks 0600), at most `capacity` bytes; null if the capacity is 0 or the
  // folder cannot be made private. Blocks already there are adopted, oldest first in line to
  // go; temporary files of writers that died are removed (IsLeftoverTemp), those of other live
  // processes counted against the capacity.
  static std::shared_ptr<BlockCache> Open(const std::string& dir, uint64_t capacity);

  // Bytes [offset, offset + dst.size()) of block `index` of `object` (an id naming the object
  // and its version): true if the block is here, `length` bytes long, and the 64 KiB pieces
  // read for `dst` are intact, with those bytes in `dst`.
  bool Get(std::string_view object, uint64_t index, uint64_t length, uint64_t offset,
           std::span<char> dst);
  // The whole block, exactly dst.size() bytes long.
  bool Get(std::string_view object, uint64_t index, std::span<char> dst) {
    return Get(object, index, dst.size(), 0, dst);
  }
  // Keeps `bytes` as block `index` of `object` (best effort: a failure to write is a miss
  // later).
  void Put(std::string_view object, uint64_t index, std::string_view bytes);
  // Removes block `index` of `object`; true if it was there (in this folder, whichever process
  // kept it).
  bool Drop(std::string_view object, uint64_t index);

  uint64_t bytes() const;
  uint64_t hits() const;
  uint64_t misses() const;

 private:
  BlockCache(std::string dir, uint64_t capacity) : dir_(std::move(dir)), capacity_(capacity) {}
  void Adopt();
  // Records `name` as used now; `size` bytes if new. Requires mu_.
  void Touch(const std::string& name, uint64_t size);
  void Forget(const std::string& name);  // Requires mu_.
  void Evict();                          // Requires mu_.

  const std::string dir_;
  const uint64_t capacity_;
  mutable std::mutex mu_;
  Lru<std::string, bool> blocks_;  // Block file names, weighing their bytes.
  uint64_t hits_ = 0, misses_ = 0;
  uint64_t pinned_ = 0;  // Other processes' temporary files found by Adopt: counted, kept.
};

}  // namespace stitchfs::engine
