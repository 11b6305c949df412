// Flatten: a self-contained copy of one point in time, so the backups it was built on can go.
#pragma once

#include <string>

#include "engine/read/resolved_backup.h"
#include "engine/read/restore.h"
#include "engine/storage/store_moves.h"

namespace stitchfs::engine {

struct FlattenResult {
  std::string uuid;
  uint64_t files = 0;
  uint64_t bytes_stored = 0;
};

// Writes the top backup of `chain` into the new folder `dest` as a full backup (no base):
// same entries, checksums, algorithm, metadata, folders, symlinks and timestamp; a new uuid;
// identical contents stored once. Same durability and failure rules as `stitch backup`. Each
// data file is read back from the storage once written and checked against the manifest's
// checksums, so a copy is complete only if every byte of it is right.
// Errors: kBackupAlreadyExists, those of reading the chain, kBackupDamaged for the backup's own
// bytes that do not check, kIOError for `dest` (a copy that reads back wrong included).
// With `keep_uuid` the copy keeps the backup's uuid, so it can replace the original under
// backups that name it as their base.
StatusOr<FlattenResult> FlattenBackup(const ResolvedBackup& chain, const std::string& dest,
                                      bool keep_uuid = false);  // Through chain.storage().
// Each file's bytes pass twice, copied and then read back: the progress of a flatten counts
// up to this many times the total size of the backup's files.
inline constexpr uint64_t kFlattenPasses = 2;

// The same into `dest` of `storage`. `progress` hears of the bytes of the backup's files as
// they are copied and as they are read back (a file stored once for several is done for all,
// both times), up to kFlattenPasses times their total size.
StatusOr<FlattenResult> FlattenBackup(const ResolvedBackup& chain, const std::string& dest,
                                      bool keep_uuid, const Storage& storage,
                                      const CopyProgress& progress = {});
// The same through `writer` (which Finish completes), with backup uuid `uuid` and every data
// file named `data_prefix` + its usual name.
StatusOr<FlattenResult> FlattenInto(const ResolvedBackup& chain, BackupWriter& writer,
                                    const std::string& uuid, const std::string& data_prefix,
                                    const CopyProgress& progress = {});
// Replaces the backup at `path` (the top of `chain`) in its store by a flattened copy with its
// uuid, through `moves` (StoreMoves::StartReplace: a reader opening `path` meanwhile gets the
// old or the new one); returns the bytes of the new copy, measured as StoreMoves::BytesFreed
// measures. `progress`: as FlattenBackup's.
StatusOr<uint64_t> FlattenInPlace(const ResolvedBackup& chain, const std::string& path,
                                  StoreMoves& moves, const CopyProgress& progress = {});

}  // namespace stitchfs::engine
