// Restore: writes files of a backup into a target folder, byte-exact, never outside it, and
// never leaving a half-written file under its final name.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

struct RestoreOptions {
  std::string target;              // Created if missing.
  std::vector<std::string> paths;  // Entries or folders to restore; empty = everything.
};

struct RestoreResult {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

// Selects the entries (indexes into the top manifest, in name order) that `paths` names: an
// exact entry name, or a folder prefix. kEntryNotFound if a path matches nothing.
StatusOr<std::vector<size_t>> SelectEntries(const Manifest& m,
                                            const std::vector<std::string>& paths);

// Bytes of the buffer CopyEntry needs.
constexpr size_t kCopyBuffer = 1 << 20;

// Told the bytes each step of a copy added (for progress bars; may be empty).
using CopyProgress = std::function<void(uint64_t bytes)>;

// Appends the bytes of entry `idx` of the top backup to `out` (in-kernel copies where possible),
// checking every data file's length. `buf` holds kCopyBuffer bytes; `what` names the target.
// `progress` hears of every 64 MiB at most.
Status CopyEntry(const ResolvedBackup& chain, size_t idx, WritableFile& out, char* buf,
                 const std::string& what, const CopyProgress& progress = {});
// The same from `segments` (ResolvedBackup::OpenSegments), which a caller holds to copy them
// again, or to drop what they kept (RandomAccessFile::DropCached).
Status CopySegments(const std::vector<Segment>& segments, WritableFile& out, char* buf,
                    const std::string& what, const CopyProgress& progress = {});

// Restores the selected entries. Each file is written to a temporary name beside its final one,
// read back and checked against its manifest's checksum (ContentCheck: a mismatch is
// kBackupDamaged naming the backup that holds the bad bytes), and renamed into place only
// then. Folders are created beneath the target without
// following symlinks (an existing symlink in the target is never written through). Existing
// files are replaced. Errors: those of opening and reading entries, kIOError for the target.
// `progress(files, bytes)` is called as work proceeds (may be empty).
StatusOr<RestoreResult> RestoreBackup(const ResolvedBackup& chain, const RestoreOptions& options,
                                      const std::function<void(uint64_t, uint64_t)>& progress);

}  // namespace stitchfs::engine
