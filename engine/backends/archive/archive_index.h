// ArchiveIndex: where every member of an archive backup lives, and how to start decoding in the
// middle of a compressed stream, built by one pass over the archive (index_builder.h) and kept
// in the per-user cache (archive_cache.h) in a checksummed binary form tied to one version of
// the archive file.
//
// A member is a byte range of a stream's decoded output. A stream is stored (bytes of the
// archive file as they are: zip's stored members, a plain tar), deflate (zip's deflate members
// and gzip: decoded from restart points, a deflate block boundary with the 32 KiB of output
// before it, about every 1 MiB of output) or cached (a stream that cannot be entered in the
// middle, decoded once into a cache file whose 64 KiB pieces are checksummed here).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/posix_meta.h"
#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"
#include "engine/location/archive_kind.h"

namespace stitchfs::engine {

// What identifies one version of an archive file (a rewritten archive has another).
struct ArchiveStamp {
  uint64_t dev = 0, ino = 0, size = 0;
  FileTime mtime, ctime;
  bool operator==(const ArchiveStamp&) const = default;
};

enum class StreamMethod : uint8_t { kStored = 0, kDeflate = 1, kCached = 2 };

struct RestartPoint {
  uint64_t in_bit = 0;  // Bit position in the archive file where the next deflate block starts.
  uint64_t out = 0;     // Offset in the stream's output.
  uint64_t window_offset = 0;  // The output before `out` (up to 32 KiB) in ArchiveIndex::windows.
  uint32_t window_size = 0;
};

struct ArchiveStream {
  StreamMethod method = StreamMethod::kStored;
  uint64_t in_offset = 0;  // Where its bytes start in the archive file (stored, deflate).
  uint64_t in_length = 0;  // How many bytes of the archive file it takes (stored, deflate).
  uint64_t out_size = 0;   // The decoded length.
  uint32_t first_point = 0, point_count = 0;  // Its restart points (deflate; the first at 0).
};

struct ArchiveMember {
  std::string name;  // As in the archive, without a leading "./" or "/".
  uint32_t stream = 0;
  uint64_t offset = 0;  // In the stream's output.
  uint64_t size = 0;
};

// A member's `name` as messages show it: its first 256 bytes, and "..." after a longer one (a
// pax path may be a megabyte long).
std::string ShownName(std::string_view name);

// Thread-compatible; immutable once built.
struct ArchiveIndex {
  ArchiveKind kind;
  std::vector<ArchiveStream> streams;
  std::vector<ArchiveMember> members;  // Sorted by name, names unique.
  std::vector<RestartPoint> points;
  std::string windows;  // As built; empty when the windows are a view of a mapped cache file.
  // The windows (the output before each restart point): `windows`, or the part of a mapped
  // index file DecodeArchiveIndex left them in (kept alive by windows_owner), so an opened
  // archive holds them in reclaimable page cache, not in its own memory.
  std::string_view mapped_windows;
  std::shared_ptr<const void> windows_owner;
  std::string_view Windows() const { return windows_owner ? mapped_windows : windows; }
  // For a cached stream: XXH3-64 of each kCachedPiece bytes of the cache file.
  std::vector<uint64_t> piece_sums;
  uint64_t cached_size = 0;  // Length of the cache file (0: none).

  static constexpr uint64_t kCachedPiece = 64 * 1024;

  // The member named `name`, or nullptr.
  const ArchiveMember* Find(std::string_view name) const;
  // Sorts `members` by name, the last of equal names kept (a later tar entry replaces one).
  void SortMembers();
};

// The bytes of `index` for the archive `stamp`, checksummed.
std::string EncodeArchiveIndex(const ArchiveIndex& index, const ArchiveStamp& stamp);
// `bytes` as an index of exactly `stamp`, every offset checked against the archive's size and
// every table bound: kBackupDamaged (a cache file not to be trusted) otherwise. With `owner`
// (what keeps `bytes` alive), the windows are left where they are, not copied.
StatusOr<ArchiveIndex> DecodeArchiveIndex(std::string_view bytes, const ArchiveStamp& stamp,
                                          std::shared_ptr<const void> owner = nullptr);

// An index just built, with its decoded stream.
struct BuiltIndex {
  ArchiveIndex index;
  UniqueFd stream;  // The decoded stream when the index has a cached stream, open for reading.
};

}  // namespace stitchfs::engine
