// FilePass: the one read of a source file that decides how it is stored, with ClickHouse's
// rules: compare with the base's file of the same name (HasNothing / HasFull / HasPrefix),
// verify a prefix by checksum mid-stream, and write only the bytes that must be stored,
// exactly the bytes that were hashed.
#pragma once

#include <optional>
#include <string>

#include "engine/checksum.h"
#include "engine/status_or.h"

namespace stitchfs::engine {

struct FilePassInput {
  int fd = -1;  // Open for reading at offset 0; `size` bytes long (fstat).
  uint64_t size = 0;
  std::string name;  // For messages.
  ChecksumAlgorithm algorithm = ChecksumAlgorithm::kXxh3;
  // The base's entry of the same name: (size, checksum), if it has one and it is not empty.
  std::optional<std::pair<uint64_t, Checksum>> base;
  bool immutable = false;  // No prefix reuse; growing while read is an error.
  int temp_dir_fd = -1;    // Where a data file is created when bytes must be stored.
  std::string temp_name;
};

struct FilePassResult {
  Checksum checksum;       // Of the whole file.
  uint64_t base_size = 0;  // 0, or the verified prefix length (== size: same as base).
  Checksum base_checksum;
  bool stored = false;  // temp_name holds bytes [base_size, size).
  uint64_t bytes_read = 0;
};

// Reads the file once (twice only when a base prefix turns out not to match, or a same-size
// file differs from the base; the second read is verified against the first). Errors:
// kExpectedEndOfFile (an immutable file grew), kIOError. A mutable file that changed while
// read is reported as kIOError with sys_errno EAGAIN so the caller can retry it.
StatusOr<FilePassResult> RunFilePass(const FilePassInput& in);

}  // namespace stitchfs::engine
