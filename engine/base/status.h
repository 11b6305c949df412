// Status and ErrorCode: how every engine function reports failure. The engine never throws;
// callers get a Status (or StatusOr<T>, status_or.h) whose code is one of a closed set named
// after ClickHouse's backup error codes, plus the errno of a failed system call.
#pragma once

#include <string>
#include <string_view>

namespace stitchfs::engine {

// One closed set. Adding a code forces error_table.cc to map it (switches have no default).
enum class ErrorCode {
  kOk = 0,
  kInternal,             // A bug or a broken invariant.
  kInvalidArgument,      // Bad flags or arguments from the user.
  kBackupNotFound,       // No backup there: folder or `.backup` missing or unreadable.
  kVersionNotSupported,  // Manifest version (or checksum algorithm) this build cannot read.
  kEntryNotFound,        // No entry of that name in the backup.
  kBackupAlreadyExists,  // A backup (or a `.lock`) is already at the destination.
  kBackupDamaged,        // Malformed manifest or data: bad XML, bad value, wrong data length.
  kNoBaseBackup,         // An entry needs a base backup but none is named or reachable.
  kWrongBaseBackup,      // The base has another UUID, lacks an entry, or the chain loops.
  kInsecurePath,         // A name in the manifest is absolute or escapes the backup.
  kExpectedEndOfFile,    // A file declared immutable grew while it was read.
  kIOError,              // A system call failed; errno() tells which error.
  kNotSupported,         // A valid request this build cannot serve (an archive, a write).
  kAccessDenied,         // The storage refused the credentials or the request (S3 403).
};

// The ClickHouse-style name of a code, e.g. "BACKUP_DAMAGED".
const char* ErrorCodeName(ErrorCode code);

// `text` with control characters escaped (\t, \n, \r, others as \xNN), so a hostile name
// cannot break a message or a line of output into several.
std::string EscapeForMessage(std::string_view text);

// A success or an error with a message that names the backup and the entry. Thread-compatible.
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.
  Status(ErrorCode code, std::string message, int sys_errno = 0);

  static Status OK() { return Status(); }
  static Status Internal(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }
  static Status InvalidArgument(std::string m) {
    return {ErrorCode::kInvalidArgument, std::move(m)};
  }
  static Status BackupNotFound(std::string m, int e = 0) {
    return {ErrorCode::kBackupNotFound, std::move(m), e};
  }
  static Status VersionNotSupported(std::string m) {
    return {ErrorCode::kVersionNotSupported, std::move(m)};
  }
  static Status EntryNotFound(std::string m) { return {ErrorCode::kEntryNotFound, std::move(m)}; }
  static Status BackupAlreadyExists(std::string m) {
    return {ErrorCode::kBackupAlreadyExists, std::move(m)};
  }
  static Status BackupDamaged(std::string m) { return {ErrorCode::kBackupDamaged, std::move(m)}; }
  static Status NoBaseBackup(std::string m) { return {ErrorCode::kNoBaseBackup, std::move(m)}; }
  static Status WrongBaseBackup(std::string m) {
    return {ErrorCode::kWrongBaseBackup, std::move(m)};
  }
  static Status InsecurePath(std::string m) { return {ErrorCode::kInsecurePath, std::move(m)}; }
  static Status ExpectedEndOfFile(std::string m) {
    return {ErrorCode::kExpectedEndOfFile, std::move(m)};
  }
  static Status NotSupported(std::string m) { return {ErrorCode::kNotSupported, std::move(m)}; }
  static Status AccessDenied(std::string m) { return {ErrorCode::kAccessDenied, std::move(m)}; }
  // An I/O error; `context` names the operation and file, `sys_errno` is kept for the caller.
  static Status IOError(std::string context, int sys_errno);

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  int sys_errno() const { return errno_; }
  const std::string& message() const { return message_; }
  // "BACKUP_DAMAGED: <message>" (control characters escaped: one line), or "OK".
  std::string ToString() const;
  // The same status with `prefix` put before the message.
  Status WithPrefix(std::string_view prefix) const;
  // The same status with `suffix` put after the message.
  Status WithSuffix(std::string_view suffix) const;
  // Marks a deliberate drop of an error; greppable.
  void IgnoreError() const {}

 private:
  ErrorCode code_ = ErrorCode::kOk;
  int errno_ = 0;
  std::string message_;
};

}  // namespace stitchfs::engine

#define STITCHFS_CONCAT_INNER(a, b) a##b
#define STITCHFS_CONCAT(a, b) STITCHFS_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the current function if it is an error.
#define RETURN_IF_ERROR(expr)                             \
  do {                                                    \
    ::stitchfs::engine::Status stitchfs_status_ = (expr); \
    if (!stitchfs_status_.ok()) return stitchfs_status_;  \
  } while (false)

// Evaluates a StatusOr<T> `expr`; returns its error, or moves its value into `lhs`.
#define ASSIGN_OR_RETURN(lhs, expr) \
  STITCHFS_ASSIGN_OR_RETURN_IMPL(STITCHFS_CONCAT(stitchfs_or_, __LINE__), lhs, expr)
#define STITCHFS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();       \
  lhs = std::move(tmp).value()
