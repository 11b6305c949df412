// BuildArchiveIndex: the one pass that learns an archive's members and restart points (and, for
// a tar compressed with bzip2, xz, lzma or zstd, decodes it into the cache), checking every
// checksum the format carries (zip's CRC-32 per member, gzip's per member, xz's and zstd's
// when present, bzip2's per block).
#pragma once

#include <functional>
#include <memory>

#include "engine/backends/archive/archive_cache.h"
#include "engine/backends/archive/archive_index.h"
#include "engine/backends/archive/index_budget.h"
#include "engine/base/random_access_file.h"

namespace stitchfs::engine {

// Indexes `file`, an archive of `kind` named `display`; the decoded stream (if any) goes to
// `cache` (null: an unnamed temporary file). `progress(done, total)` is told how many bytes of
// the archive have been read. Its work and index bytes are counted in `budget` (null: one with
// IndexLimits::For(file.size())), and it stops, kBackupDamaged naming the archive and the
// member, once either passes its limit, or at once if the sizes the archive declares would.
// kBackupDamaged naming the archive (and member) if it is not an archive of that kind or is
// damaged; kNotSupported for encrypted or otherwise compressed zip members; kIOError from
// reading or from the cache.
StatusOr<BuiltIndex> BuildArchiveIndex(const RandomAccessFile& file, ArchiveKind kind,
                                       const ArchiveStamp& stamp, const std::string& display,
                                       const ArchiveCache* cache,
                                       const std::function<void(uint64_t, uint64_t)>& progress,
                                       IndexBudget* budget = nullptr);

}  // namespace stitchfs::engine
