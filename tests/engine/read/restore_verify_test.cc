#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "engine/base/atomic_file.h"
#include "engine/read/backup_stats.h"
#include "engine/read/open_resolved.h"
#include "engine/read/restore.h"
#include "engine/read/verify.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::FixtureBackup;
using testutil::ReadFile;
using testutil::TempDir;

class RestoreVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    big_ = testutil::RandomBytes(300000, 4);
    FixtureBackup b0(dir_ / "b0");
    b0.AddStored("a/log", big_.substr(0, 100000));
    b0.AddStored("a/same1", "dup");
    b0.AddDuplicate("a/same2", "dup", "a/same1");
    b0.AddEmpty("e");
    ASSERT_OK(b0.Write());
    FixtureBackup b1(dir_ / "b1");
    b1.SetBase(b0);
    b1.AddStitched("a/log", big_, 100000);
    b1.AddFromBase("b/moved", "dup");
    b1.AddEmpty("e");
    b1.AddStored("c/x", "xyz");
    ASSERT_OK(b1.Write());
    auto chain = OpenResolved(dir_ / "b1", testutil::LocalChain());
    ASSERT_TRUE(chain.ok()) << chain.status().ToString();
    chain_ = *chain;
  }

  // Writes `b` and restores all of it to `target`.
  static Status WriteAndRestore(FixtureBackup& b, const std::string& target) {
    RETURN_IF_ERROR(b.Write());
    ASSIGN_OR_RETURN(auto chain, OpenResolved(b.dir(), testutil::LocalChain()));
    RestoreOptions o;
    o.target = target;
    return RestoreBackup(*chain, o, nullptr).status();
  }

  TempDir dir_;
  std::string big_;
  std::shared_ptr<const ResolvedBackup> chain_;
};

TEST_F(RestoreVerifyTest, RestoresEverythingByteExact) {
  RestoreOptions o;
  o.target = dir_ / "out";
  std::vector<std::pair<uint64_t, uint64_t>> calls;  // (files, bytes) done, as told.
  auto r = RestoreBackup(*chain_, o, [&](uint64_t f, uint64_t b) { calls.emplace_back(f, b); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->files, 4u);
  EXPECT_EQ(r->bytes, big_.size() + 3 + 3);
  ASSERT_GE(calls.size(), 4u);
  EXPECT_EQ(calls.back(), std::make_pair(uint64_t{4}, r->bytes));
  for (size_t i = 1; i < calls.size(); ++i) {
    EXPECT_LE(calls[i - 1].first, calls[i].first);
    EXPECT_LE(calls[i - 1].second, calls[i].second);
  }
  // a/log, stitched from two backups: each part told as it is copied, before the file is done.
  EXPECT_EQ(calls.at(0), std::make_pair(uint64_t{0}, uint64_t{100000}));
  EXPECT_EQ(calls.at(1), std::make_pair(uint64_t{0}, uint64_t{big_.size()}));
  EXPECT_EQ(ReadFile(dir_ / "out/a/log"), big_);
  EXPECT_EQ(ReadFile(dir_ / "out/b/moved"), "dup");
  EXPECT_EQ(ReadFile(dir_ / "out/c/x"), "xyz");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "out/e"));
  EXPECT_EQ(std::filesystem::file_size(dir_ / "out/e"), 0u);
}

TEST_F(RestoreVerifyTest, RestoresSelectedPathsAndRefusesUnknownOnes) {
  RestoreOptions o;
  o.target = dir_ / "sel";
  o.paths = {"b", "/c/x"};
  auto r = RestoreBackup(*chain_, o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->files, 2u);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "sel/a"));
  o.paths = {"nothing/here"};
  EXPECT_EQ(RestoreBackup(*chain_, o, nullptr).status().code(), ErrorCode::kEntryNotFound);
  o.paths = {"a/lo"};  // A name prefix is not a folder.
  EXPECT_EQ(RestoreBackup(*chain_, o, nullptr).status().code(), ErrorCode::kEntryNotFound);
}

TEST_F(RestoreVerifyTest, NeverWritesThroughASymlinkInTheTarget) {
  std::filesystem::create_directories(dir_ / "t");
  std::filesystem::create_directories(dir_ / "elsewhere");
  std::filesystem::create_directory_symlink(dir_ / "elsewhere", dir_ / "t/a");
  RestoreOptions o;
  o.target = dir_ / "t";
  auto r = RestoreBackup(*chain_, o, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "elsewhere"));
}

// Never into a backup, whatever path leads there: a folder of the chain (through a symlink),
// another backup (it holds a .backup), one being written (a .lock), or a backup an entry would
// land in; a backup of backups (its own .backup files) still restores.
TEST_F(RestoreVerifyTest, NeverWritesIntoABackup) {
  FixtureBackup other(dir_ / "other");
  other.AddStored("a/log", "other backup's bytes");
  ASSERT_OK(other.Write());
  const std::string before = ReadFile(dir_ / "other/.backup");
  std::filesystem::create_directory_symlink(dir_ / "b0", dir_ / "to-b0");
  std::filesystem::create_directories(dir_ / "locked");
  testutil::WriteFile(dir_ / "locked/.lock", "");
  std::filesystem::create_directories(dir_ / "store");
  std::filesystem::rename(dir_ / "other", dir_ / "store/a");  // Entries a/... land in it.
  for (const char* t : {"store/a", "to-b0", "to-b0/sub", "locked", "store"}) {
    RestoreOptions o;
    o.target = dir_ / t;
    auto r = RestoreBackup(*chain_, o, nullptr);
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << t << ": " << r.status().ToString();
  }
  EXPECT_EQ(ReadFile(dir_ / "store/a/.backup"), before);
  EXPECT_EQ(ReadFile(dir_ / "store/a/a/log"), "other backup's bytes");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "b0/sub")) << "a target it made is removed";
  EXPECT_FALSE(std::filesystem::exists(dir_ / "store/e")) << "refused before any write";

  FixtureBackup of_backups(dir_ / "of-backups");
  of_backups.AddStored("x/.backup", "<config/>");
  of_backups.AddStored("x/.lock", "");
  of_backups.AddStored("x/data/f", "f");
  ASSERT_OK(WriteAndRestore(of_backups, dir_ / "restored-backups"));
  EXPECT_EQ(ReadFile(dir_ / "restored-backups/x/data/f"), "f");
  ASSERT_OK(WriteAndRestore(of_backups, dir_ / "restored-backups"));  // And again, over it.

  // Nothing is made in a folder before it is checked: a backup at x in the target gets no
  // x/new/deep of an entry x/new/deep/f.
  FixtureBackup deep(dir_ / "deep");
  deep.AddStored("x/new/deep/f", "f");
  std::filesystem::create_directories(dir_ / "t-deep/x");
  testutil::WriteFile(dir_ / "t-deep/x/.backup", before);
  EXPECT_EQ(WriteAndRestore(deep, dir_ / "t-deep").code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "t-deep/x/new"));
  // A folder named .backup above the target is no backup.
  std::filesystem::create_directories(dir_ / "home/.backup");
  ASSERT_OK(WriteAndRestore(deep, dir_ / "home/out"));
}

// A leaf of 255 bytes (NAME_MAX) restores: its temporary name is short.
TEST_F(RestoreVerifyTest, RestoresNamesOfNameMaxBytes) {
  const std::string leaf(255, 'L');
  FixtureBackup b(dir_ / "long");
  b.AddStored("d/" + leaf, "long");
  b.AddStored("z", "after it");
  ASSERT_OK(WriteAndRestore(b, dir_ / "long-out"));
  EXPECT_EQ(ReadFile(dir_ / ("long-out/d/" + leaf)), "long");
  EXPECT_EQ(ReadFile(dir_ / "long-out/z"), "after it");
}

TEST_F(RestoreVerifyTest, FailedRestoreLeavesNoPartialFile) {
  ::truncate((dir_ / "b1/a/log").c_str(), 10);
  RestoreOptions o;
  o.target = dir_ / "fail";
  o.paths = {"a/log"};
  auto r = RestoreBackup(*chain_, o, nullptr);
  EXPECT_EQ(r.status().code(), ErrorCode::kBackupDamaged) << r.status().ToString();
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "fail/a")) << "no temp or final file left";
}

TEST_F(RestoreVerifyTest, VerifyPassesThenReportsEveryProblem) {
  VerifyResult ok = VerifyBackup(*chain_, nullptr);
  EXPECT_TRUE(ok.problems.empty());
  EXPECT_EQ(ok.files_checked, 4u);
  EXPECT_EQ(ok.bytes_read, big_.size() + 3 + 3);

  testutil::WriteFile(dir_ / "b1/c/x", "xyZ");            // same length, wrong bytes
  testutil::WriteFile(dir_ / "b0/a/same1", "duplicate");  // wrong length
  VerifyResult bad = VerifyBackup(*chain_, nullptr);
  ASSERT_EQ(bad.problems.size(), 2u);
  EXPECT_EQ(bad.problems[0].entry, "b/moved");
  EXPECT_EQ(bad.problems[0].status.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(bad.problems[0].status.message().find("b0"), std::string::npos);
  EXPECT_EQ(bad.problems[1].entry, "c/x");
  EXPECT_NE(bad.problems[1].status.message().find("checksum mismatch"), std::string::npos);
}

// Flips one byte of `path` (same length: only a checksum can tell).
void FlipByte(const std::string& path, size_t at) {
  std::string bytes = ReadFile(path);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x01);
  testutil::WriteFile(path, bytes);
}

TEST_F(RestoreVerifyTest, RestoreChecksEveryFileAndNamesTheBackupWithTheBadBytes) {
  FlipByte(dir_ / "b0/a/log", 5000);  // The base's part of the stitched file.
  auto chain = OpenResolved(dir_ / "b1", testutil::LocalChain());
  ASSERT_TRUE(chain.ok());
  RestoreOptions o;
  o.target = dir_ / "bad";
  auto r = RestoreBackup(**chain, o, nullptr);
  ASSERT_EQ(r.status().code(), ErrorCode::kBackupDamaged) << r.status().ToString();
  const std::string m = r.status().message();
  EXPECT_NE(m.find("file \"a/log\": checksum mismatch"), std::string::npos) << m;
  EXPECT_NE(m.find("the bad bytes are in backup " + dir_ / "b0" + ", bytes [0, 100000)"),
            std::string::npos)
      << m;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "bad/a/log")) << "nothing unverified under its name";
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "bad/a")) << "no temp file left either";
  FlipByte(dir_ / "b0/a/log", 5000);  // Repaired; now the top's own tail.
  FlipByte(dir_ / "b1/a/log", 10);
  r = RestoreBackup(**OpenResolved(dir_ / "b1", testutil::LocalChain()), o, nullptr);
  ASSERT_EQ(r.status().code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(r.status().message().find("in backup " + dir_ / "b1" + ", bytes [100000, 300000)"),
            std::string::npos)
      << r.status().ToString();
  FlipByte(dir_ / "b1/a/log", 10);
  o.target = dir_ / "good";
  ASSERT_TRUE(RestoreBackup(**OpenResolved(dir_ / "b1", testutil::LocalChain()), o, nullptr).ok());
  EXPECT_EQ(ReadFile(dir_ / "good/a/log"), big_);
}

TEST_F(RestoreVerifyTest, StatsFollowClickHouseAccounting) {
  const BackupStats stats = chain_->Stats();
  const BackupStats* st = &stats;
  EXPECT_EQ(st->num_files, 4u);
  EXPECT_EQ(st->total_size, big_.size() + 6);
  EXPECT_EQ(st->num_entries, 2u);  // a/log's tail and c/x
  EXPECT_EQ(st->size_of_entries, big_.size() - 100000 + 3);
  EXPECT_EQ(st->uncompressed_size, st->size_of_entries + chain_->top().manifest_bytes());
  EXPECT_EQ(st->bytes_by_level, (std::vector<uint64_t>{big_.size() - 100000 + 3, 100000 + 3}));
}

TEST(AtomicFileTest, ReplacesWholeFileAndLeavesNoTemp) {
  TempDir dir;
  ASSERT_OK(WriteFileAtomically(dir.path(), "f", "one"));
  ASSERT_OK(WriteFileAtomically(dir.path(), "f", "two!"));
  EXPECT_EQ(ReadFile(dir / "f"), "two!");
  size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) n += e.exists();
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(WriteFileAtomically(dir / "missing", "f", "x").code(), ErrorCode::kIOError);
}

}  // namespace
}  // namespace stitchfs::engine
