// Verify: reads every file of a backup through its chain and checks sizes and checksums,
// collecting every problem rather than stopping at the first.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

struct VerifyProblem {
  std::string entry;  // The entry's name in the top backup.
  Status status;      // What is wrong; its message names the backup at fault.
};

struct VerifyResult {
  uint64_t files_checked = 0;
  uint64_t bytes_read = 0;
  std::vector<VerifyProblem> problems;
};

// Called after each file with the bytes read so far. May be empty.
using ProgressFn = std::function<void(uint64_t files_done, uint64_t bytes_done)>;

// Recomputes each file's checksum with the top backup's algorithm and compares it with the
// manifest; data files of the wrong length, unreadable or missing are problems too. Content
// shared by several entries is read once. Never fails as a whole: problems are in the result.
VerifyResult VerifyBackup(const ResolvedBackup& chain, const ProgressFn& progress);

}  // namespace stitchfs::engine
