// FilePass: the one read of a source file that decides how it is stored, with ClickHouse's
// rules: compare with the base's file of the same name (HasNothing / HasFull / HasPrefix),
// verify a prefix by checksum mid-stream, and write only the bytes that must be stored,
// exactly the bytes that were hashed.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "engine/base/checksum.h"
#include "engine/base/status_or.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

struct FilePassInput {
  int fd = -1;        // Open for reading; at least `size` bytes long when the pass starts.
  uint64_t size = 0;  // The bytes to back up: [0, size).
  std::string name;   // For messages.
  ChecksumAlgorithm algorithm = ChecksumAlgorithm::kXxh3;
  // The base's entry of the same name: (size, checksum), if it has one and it is not empty.
  std::optional<std::pair<uint64_t, Checksum>> base;
  bool immutable = false;  // No prefix reuse; growing while read is an error.
  // Mutable files that grow while read are backed up as [0, size) (the caller verifies that
  // prefix); immutable ones must end at `size`.
  BackupWriter* writer = nullptr;  // Where a data file is staged when bytes must be stored,
  std::string staged_id;           // under this id,
  std::string data_name;           // to become this data file.
  // Bytes read are added here as they are read (for progress; may be null).
  std::atomic<uint64_t>* read_progress = nullptr;
};

struct FilePassResult {
  Checksum checksum;       // Of the whole file.
  uint64_t base_size = 0;  // 0, or the verified prefix length (== size: same as base).
  Checksum base_checksum;
  bool stored = false;  // Staged file `staged_id` holds bytes [base_size, size).
  bool grew = false;    // The file went on past `size` (a mutable file appended to).
  uint64_t bytes_read = 0;
};

// A source file that shrank or changed while it was read ("file NAME HOW while it was read"),
// and the test for one: the status a caller retries, and reports as changed, not as an I/O
// error (kIOError with sys_errno EAGAIN, which no read of a regular file returns otherwise).
Status ChangedWhileRead(const std::string& name, const char* how = "changed");
bool IsChangedWhileRead(const Status& s);

// Where a failed pass failed: reading the source, or writing the destination's data file.
enum class PassFault { kNone, kSource, kDestination };

// Reads the file once (twice only when a base prefix turns out not to match, or a same-size
// file differs from the base; the second read is verified against the first). Errors:
// kExpectedEndOfFile (an immutable file grew), kIOError. A file that shrank or changed under
// the read is reported as ChangedWhileRead so the caller can retry it. `*fault`
// tells a source failure from a destination one (a full disk is never a "source file left out").
StatusOr<FilePassResult> RunFilePass(const FilePassInput& in, PassFault* fault);

// The checksum of bytes [0, size) of `fd`; ChangedWhileRead if the file is shorter now.
StatusOr<Checksum> HashPrefix(int fd, uint64_t size, ChecksumAlgorithm algorithm,
                              const std::string& name);

}  // namespace stitchfs::engine
