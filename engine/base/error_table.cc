#include "engine/base/error_table.h"

#include <cerrno>

namespace stitchfs::engine {

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kOk:
      return kExitOk;
    case ErrorCode::kInternal:
      return kExitFailure;
    case ErrorCode::kInvalidArgument:
      return kExitUsage;
    case ErrorCode::kBackupNotFound:
      return kExitNotFound;
    case ErrorCode::kVersionNotSupported:
      return kExitVersion;
    case ErrorCode::kEntryNotFound:
      return kExitEntryNotFound;
    case ErrorCode::kBackupAlreadyExists:
      return kExitAlreadyExists;
    case ErrorCode::kBackupDamaged:
      return kExitDamaged;
    case ErrorCode::kNoBaseBackup:
      return kExitNoBase;
    case ErrorCode::kWrongBaseBackup:
      return kExitWrongBase;
    case ErrorCode::kInsecurePath:
      return kExitInsecurePath;
    case ErrorCode::kExpectedEndOfFile:
      return kExitEndOfFile;
    case ErrorCode::kIOError:
      return kExitFailure;
    case ErrorCode::kNotSupported:
      return kExitNotSupported;
    case ErrorCode::kAccessDenied:
      return kExitAccessDenied;
  }
  return kExitFailure;
}

int ErrnoFor(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kOk:
      return 0;
    case ErrorCode::kEntryNotFound:
      return ENOENT;
    case ErrorCode::kInvalidArgument:
      return EINVAL;
    case ErrorCode::kNotSupported:
      return EROFS;
    case ErrorCode::kIOError:
      return s.sys_errno() == ENOMEM ? ENOMEM : EIO;
    case ErrorCode::kAccessDenied:
      return EACCES;
    case ErrorCode::kInternal:
    case ErrorCode::kBackupNotFound:
    case ErrorCode::kVersionNotSupported:
    case ErrorCode::kBackupAlreadyExists:
    case ErrorCode::kBackupDamaged:
    case ErrorCode::kNoBaseBackup:
    case ErrorCode::kWrongBaseBackup:
    case ErrorCode::kInsecurePath:
    case ErrorCode::kExpectedEndOfFile:
      return EIO;
  }
  return EIO;
}

}  // namespace stitchfs::engine
