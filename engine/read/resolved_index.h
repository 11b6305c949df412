// ResolvedIndex: a ResolvedBackup in a compact binary form, so that opening a backup reads a
// bounded amount whatever the depth of its chain: its own manifest, this index, and a stat of
// each base's folder and `.backup`. The writer keeps one beside each new backup
// (`.stitchfs/index`); for other backups (ClickHouse's, older ones, a store copied elsewhere)
// one is built on first open and kept in the per-user cache.
//
// Layout: a fixed header (magic, version, length, XXH3-128 of everything after the header,
// counts), then tables of fixed-size records (levels with the identities of their folders and
// `.backup`s, data files, extents, origins), each starting 8-byte aligned, and two string areas
// (names of data files that are not their entry's own name; the levels' texts, each level's
// base locator without credentials: an index is a file of the backup, 0644, and of the
// per-user cache, and never holds a secret; CheckLevels says why that checks as much). Viewed in
// place as arrays of records (mapped, when it comes from the per-user cache), never parsed. An
// index is trusted only if every check passes: checksum and bounds; it was built from this very
// `.backup` (identity) of this folder (path); every base is at the path its child's locator gives
// under the caller's options, and its folder and `.backup` have the identities recorded (a base
// rewritten, replaced or moved makes the index stale); and its records agree with the manifest
// (extent lengths add up to each file's size, levels and data file numbers in range; names are
// checked where they are opened). Anything else is a miss: the chain is resolved as without an
// index.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/base/shared_bytes.h"
#include "engine/read/chain_options.h"
#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

class ResolvedIndex {
 public:
  // The index of `r` (REQUIRES: resolved with origins, without prefixes).
  static std::string Encode(const ResolvedBackup& r);

  // The ResolvedBackup that `bytes` describes for `top`, with every check above; the bases'
  // folders opened and `.backup`s stat'ed through `o.storage`.
  // kBackupDamaged (malformed) or kWrongBaseBackup (stale) on a miss, which callers treat alike.
  // Origins are kept only if `keep_origins`. The result views `bytes` in place (and keeps them
  // alive).
  static StatusOr<std::unique_ptr<ResolvedBackup>> Decode(const SharedBytes& bytes,
                                                          std::shared_ptr<const Backup> top,
                                                          const ChainOptions& o, bool keep_origins);
};

}  // namespace stitchfs::engine
