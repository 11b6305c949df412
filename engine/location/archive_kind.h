// ArchiveKind: which archive format a backup location names, from its file name alone, as
// ClickHouse decides it (FORMAT.md §5.1, §7): `.zip`/`.zipx`, and `.tar` with the compression
// its extension gives.
#pragma once

#include <string_view>

namespace stitchfs::engine {

enum class ArchiveContainer { kNone, kZip, kTar };

// How a tar archive's bytes are compressed as a whole.
enum class StreamCodec { kNone, kGzip, kBzip2, kXz, kLzma, kZstd };

struct ArchiveKind {
  ArchiveContainer container = ArchiveContainer::kNone;
  StreamCodec codec = StreamCodec::kNone;
  bool is_archive() const { return container != ArchiveContainer::kNone; }
};

// The kind of `path` by its last extension(s), case-sensitive as ClickHouse's check is.
ArchiveKind ArchiveKindOf(std::string_view path);

// "zip", "tar", "tar.gz", ... for messages and `stitch info`.
const char* ArchiveKindName(ArchiveKind kind);

}  // namespace stitchfs::engine
