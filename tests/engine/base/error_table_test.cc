#include "engine/base/error_table.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <set>

namespace stitchfs::engine {
namespace {

struct Row {
  ErrorCode code;
  const char* name;
  int exit_code;
  int err;
};

// The table of man/stitch.1 EXIT STATUS, row by row.
constexpr Row kRows[] = {
    {ErrorCode::kOk, "OK", 0, 0},
    {ErrorCode::kInternal, "LOGICAL_ERROR", 1, EIO},
    {ErrorCode::kInvalidArgument, "BAD_ARGUMENTS", 2, EINVAL},
    {ErrorCode::kBackupNotFound, "BACKUP_NOT_FOUND", 10, EIO},
    {ErrorCode::kVersionNotSupported, "BACKUP_VERSION_NOT_SUPPORTED", 11, EIO},
    {ErrorCode::kEntryNotFound, "BACKUP_ENTRY_NOT_FOUND", 12, ENOENT},
    {ErrorCode::kBackupAlreadyExists, "BACKUP_ALREADY_EXISTS", 13, EIO},
    {ErrorCode::kNotSupported, "NOT_IMPLEMENTED", 14, EROFS},
    {ErrorCode::kBackupDamaged, "BACKUP_DAMAGED", 20, EIO},
    {ErrorCode::kNoBaseBackup, "NO_BASE_BACKUP", 21, EIO},
    {ErrorCode::kWrongBaseBackup, "WRONG_BASE_BACKUP", 22, EIO},
    {ErrorCode::kInsecurePath, "INSECURE_PATH", 23, EIO},
    {ErrorCode::kExpectedEndOfFile, "EXPECTED_END_OF_FILE", 24, EIO},
    {ErrorCode::kIOError, "IO_ERROR", 1, EIO},
    {ErrorCode::kAccessDenied, "ACCESS_DENIED", 15, EACCES},
};

TEST(ErrorTableTest, EveryCodeHasItsExitCodeErrnoAndName) {
  std::set<ErrorCode> covered;
  for (const Row& r : kRows) {
    Status s(r.code, "m", r.code == ErrorCode::kIOError ? ENOENT : 0);
    EXPECT_EQ(ExitCodeFor(s), r.exit_code) << r.name;
    EXPECT_EQ(ErrnoFor(s), r.err) << r.name;
    EXPECT_STREQ(ErrorCodeName(r.code), r.name);
    covered.insert(r.code);
  }
  EXPECT_EQ(covered.size(), static_cast<size_t>(ErrorCode::kAccessDenied) + 1)
      << "a code was added without a row here";
}

TEST(ErrorTableTest, IoErrorKeepsOnlyEnomem) {
  EXPECT_EQ(ErrnoFor(Status::IOError("x", ENOMEM)), ENOMEM);
  EXPECT_EQ(ErrnoFor(Status::IOError("x", ENOENT)), EIO) << "a missing data file is not ENOENT";
  EXPECT_EQ(ErrnoFor(Status::IOError("x", EACCES)), EIO);
}

TEST(ErrorTableTest, StatusTextAndPrefix) {
  Status s = Status::BackupDamaged("bad").WithPrefix("Backup /x: ");
  EXPECT_EQ(s.ToString(), "BACKUP_DAMAGED: Backup /x: bad");
  EXPECT_EQ(Status::IOError("open f", ENOENT).sys_errno(), ENOENT);
  EXPECT_TRUE(Status::OK().WithPrefix("p").message().empty());
}

}  // namespace
}  // namespace stitchfs::engine
