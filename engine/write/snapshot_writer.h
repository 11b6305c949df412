// SnapshotWriter: `stitch backup`. A full or incremental backup of a folder tree, with
// ClickHouse's rules per file (name lookup in the base, prefix verified by checksum, rename
// detection by (size, checksum), dedup inside the backup) and POSIX metadata kept in manifest
// extensions ClickHouse ignores. Only bytes [base_size, size) of a file are ever written.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/checksum.h"
#include "engine/format/manifest.h"
#include "engine/read/chain_options.h"
#include "engine/storage/storage.h"
#include "engine/write/backup_summary.h"

namespace stitchfs::engine {

struct BackupOptions {
  std::string source;
  std::string dest;
  std::string base;  // Folder of the base backup; empty for a full backup.
  // The base as the user named it when that was a locator (`Disk('backups', 'b1')`): the new
  // backup names its base the same way.
  std::string base_locator;
  // Where `dest` and the base are, the caches and what locators mean (the Context), and how
  // the base's own bases are found.
  ChainOptions chain;
  std::vector<std::string> immutable_globs;  // fnmatch patterns on entry names.
  // Default: the base's; else ClickHouse's for a source laid out as a ClickHouse backup
  // (metadata/DB/TABLE.sql) or data folder; else XXH3.
  std::optional<ChecksumAlgorithm> algorithm;
  int jobs = 0;              // Files read at once; 0 = a default for the machine.
  bool files_cache = false;  // Trust unchanged size+mtime+ctime+inode against the base.
  int max_retries = 3;       // Re-reads of a file that changes while read.
  std::string timestamp;     // "YYYY-MM-DD hh:mm:ss" to record; empty = now (local time).
};

// Progress callback: files and bytes processed so far, and the totals.
using WriterProgress =
    std::function<void(uint64_t files, uint64_t bytes, uint64_t total_files, uint64_t total_bytes)>;

// Writes the backup. The destination holds `.lock` while written; data files are synced and
// `.backup` is written last, atomically. Any failure to write the destination (ENOSPC, EIO,
// ...) fails the backup, and then nothing that opens as a backup is left. Source files that
// vanish or cannot be read are left out: the backup completes, marked incomplete, listing them
// (BackupSummary::missing, the manifest's <stitchfs_missing>). Errors: kBackupAlreadyExists,
// kExpectedEndOfFile (an immutable file grew), kInvalidArgument (also without
// options.chain.storage), errors opening the base,
// kIOError (source root, destination).
StatusOr<BackupSummary> WriteBackup(const BackupOptions& options, const WriterProgress& progress);

}  // namespace stitchfs::engine
