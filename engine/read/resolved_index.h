// ResolvedIndex: a ResolvedBackup in a compact binary form, so that opening a backup reads a
// bounded amount whatever the depth of its chain: its own manifest, this index, and a stat of
// each base's folder and `.backup`. The writer keeps one beside each new backup
// (`.stitchfs/index`); for other backups (ClickHouse's, older ones, a store copied elsewhere)
// one is built on first open and kept in the per-user cache.
//
// Layout: a fixed header (magic, version, length, XXH3-128 of everything after the header,
// the identity of the `.backup` it was built from, counts), then fixed-size records (levels,
// data files, extents, origins) and one string area. Read as arrays of records, never parsed
// as text. An index is trusted only if every check passes: checksum and bounds; it was built
// from this very `.backup` (identity) of this folder (path); every base is at the path its
// child's locator gives under the caller's options, and its folder and `.backup` have the
// identities recorded (a base rewritten, replaced or moved makes the index stale); and its
// records agree with the manifest (extent lengths add up to each file's size, levels and data
// file numbers in range, names pass the path checks). Anything else is a miss: the chain is
// resolved as without an index.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

class ResolvedIndex {
 public:
  // The index of `r` (REQUIRES: resolved with origins, without prefixes).
  static std::string Encode(const ResolvedBackup& r);

  // The ResolvedBackup that `bytes` describes for `top`, with every check above; the bases are
  // stat'ed and their folders opened through `o.storage`. kBackupDamaged (malformed) or
  // kWrongBaseBackup (stale) on a miss, which callers treat alike. Origins are kept only if
  // `keep_origins`.
  static StatusOr<std::unique_ptr<ResolvedBackup>> Decode(std::string_view bytes,
                                                          std::shared_ptr<const Backup> top,
                                                          const ChainOptions& o, bool keep_origins);
};

}  // namespace stitchfs::engine
