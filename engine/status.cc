#include "engine/status.h"

#include <cstring>

namespace stitchfs::engine {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "OK";
    case ErrorCode::kInternal:
      return "LOGICAL_ERROR";
    case ErrorCode::kInvalidArgument:
      return "BAD_ARGUMENTS";
    case ErrorCode::kBackupNotFound:
      return "BACKUP_NOT_FOUND";
    case ErrorCode::kVersionNotSupported:
      return "BACKUP_VERSION_NOT_SUPPORTED";
    case ErrorCode::kEntryNotFound:
      return "BACKUP_ENTRY_NOT_FOUND";
    case ErrorCode::kBackupAlreadyExists:
      return "BACKUP_ALREADY_EXISTS";
    case ErrorCode::kBackupDamaged:
      return "BACKUP_DAMAGED";
    case ErrorCode::kNoBaseBackup:
      return "NO_BASE_BACKUP";
    case ErrorCode::kWrongBaseBackup:
      return "WRONG_BASE_BACKUP";
    case ErrorCode::kInsecurePath:
      return "INSECURE_PATH";
    case ErrorCode::kExpectedEndOfFile:
      return "EXPECTED_END_OF_FILE";
    case ErrorCode::kIOError:
      return "IO_ERROR";
    case ErrorCode::kNotSupported:
      return "NOT_IMPLEMENTED";
  }
  return "UNKNOWN";
}

Status::Status(ErrorCode code, std::string message, int sys_errno)
    : code_(code), errno_(sys_errno), message_(std::move(message)) {}

Status Status::IOError(std::string context, int sys_errno) {
  context += ": ";
  context += std::strerror(sys_errno);
  return Status(ErrorCode::kIOError, std::move(context), sys_errno);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(ErrorCodeName(code_)) + ": " + message_;
}

Status Status::WithPrefix(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code_, std::string(prefix) + message_, errno_);
}

}  // namespace stitchfs::engine
