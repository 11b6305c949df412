#include "engine/base/status.h"

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
    case ErrorCode::kAccessDenied:
      return "ACCESS_DENIED";
  }
  return "UNKNOWN";
}

std::string EscapeForMessage(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out.push_back(c);
    } else if (c == '\t' || c == '\n' || c == '\r') {
      out += c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
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
  return std::string(ErrorCodeName(code_)) + ": " + EscapeForMessage(message_);
}

Status Status::WithPrefix(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code_, std::string(prefix) + message_, errno_);
}

Status Status::WithSuffix(std::string_view suffix) const {
  if (ok()) return *this;
  return Status(code_, message_ + std::string(suffix), errno_);
}

}  // namespace stitchfs::engine
