// The one mapping from Status to the outside world: exit codes of `stitch` and `stitchfs`,
// and errno values for FUSE replies. Documented under EXIT STATUS in man/stitch.1.
#pragma once

#include "engine/base/status.h"

namespace stitchfs::engine {

// Exit codes, in bands: 1-2 generic, 10-14 cannot open, 20-24 the backup's content is at
// fault, 30 mount environment.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,         // Internal error, or an I/O error after the backup was opened.
  kExitUsage = 2,           // Bad command line.
  kExitNotFound = 10,       // BACKUP_NOT_FOUND.
  kExitVersion = 11,        // BACKUP_VERSION_NOT_SUPPORTED.
  kExitEntryNotFound = 12,  // BACKUP_ENTRY_NOT_FOUND.
  kExitAlreadyExists = 13,  // BACKUP_ALREADY_EXISTS.
  kExitNotSupported = 14,   // A valid backup this build cannot serve (an archive).
  kExitAccessDenied = 15,   // ACCESS_DENIED: the storage refused the credentials.
  kExitDamaged = 20,        // BACKUP_DAMAGED.
  kExitNoBase = 21,         // NO_BASE_BACKUP.
  kExitWrongBase = 22,      // WRONG_BASE_BACKUP.
  kExitInsecurePath = 23,   // INSECURE_PATH.
  kExitEndOfFile = 24,      // EXPECTED_END_OF_FILE.
  kExitMount = 30,          // stitchfs only: the mount itself failed.
};

int ExitCodeFor(const Status& s);

// A positive errno for a FUSE reply: EIO for anything that means damage or an internal
// error (never ENOENT for a missing data file), ENOMEM kept, ENOENT for a missing entry,
// EROFS for unsupported writes, EINVAL for bad arguments, EACCES for refused credentials.
int ErrnoFor(const Status& s);

}  // namespace stitchfs::engine
