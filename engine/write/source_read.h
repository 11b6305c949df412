// SourceRead: how `stitch backup` reads one source file, whatever happens to it meanwhile.
// Opened without following symlinks or blocking (a FIFO swapped in never hangs the backup),
// checked to be a regular file, read once by FilePass, and verified:
//  - a file is backed up at its size when it is opened: one that only grows while it is read
//    (a log) as that prefix, after checking the prefix did not change under the read (the
//    walk's size is not used: a file rewritten since the walk would be cut to it);
//  - a file that shrank, was replaced, or whose prefix changed is read again (a few times);
//  - an immutable file that grew fails the backup (EXPECTED_END_OF_FILE).
#pragma once

#include <string>
#include <vector>

#include "engine/format/manifest.h"
#include "engine/write/file_pass.h"
#include "engine/write/source_tree.h"

namespace stitchfs::engine {

struct FileResult {
  Status status;
  PassFault fault = PassFault::kNone;  // Whose fault a failed status is.
  FilePassResult pass;
  uint64_t size = 0;
  PosixMeta meta;
  bool unread = false;  // Taken from the base by the files cache.
};

struct SourceReadOptions {
  int source_fd = -1;              // The source root; files are opened beneath it.
  BackupWriter* writer = nullptr;  // Where data files are staged (under the file's index).
  ChecksumAlgorithm algorithm = ChecksumAlgorithm::kXxh3;
  const Manifest* base = nullptr;  // The base's manifest, or nullptr for a full backup.
  bool files_cache = false;        // Trust unchanged size+mtime+ctime+inode against the base.
  int max_retries = 3;             // Re-reads of a file that keeps changing.
  const std::vector<std::string>* immutable_globs = nullptr;
  std::atomic<uint64_t>* read_progress = nullptr;  // FilePassInput::read_progress.
  // Devices of the source on a local file system (SourceTree::local_devices; null: all are):
  // on others the files cache allows a server's clock being off.
  const std::vector<uint64_t>* local_devices = nullptr;
};

// Reads source file `f` (index `index` of the walk) and stages what must be stored as data
// file `index` with the writer. Thread-safe for distinct indexes.
FileResult ReadSourceFile(const SourceReadOptions& o, const SourceFile& f, size_t index);

}  // namespace stitchfs::engine
