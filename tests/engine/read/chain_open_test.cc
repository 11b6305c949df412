#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>

#include "engine/read/open_resolved.h"
#include "engine/read/resolved_backup.h"
#include "engine/storage/store.h"
#include "engine/store/prune.h"
#include "engine/write/snapshot_writer.h"
#include "tests/engine/chain_fixture.h"
#include "tests/testutil/context.h"

namespace stitchfs::engine {
namespace {

using testutil::FixtureBackup;
using testutil::RandomBytes;
using testutil::TempDir;

std::string ReadAll(const ResolvedBackup& chain, std::string_view name) {
  auto idx = chain.top().manifest().FindByName(name);
  EXPECT_TRUE(idx.has_value()) << name;
  if (!idx) return "";
  auto f = chain.OpenEntry(*idx);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  if (!f.ok()) return "";
  std::string out((*f)->size(), '\0');
  auto n = (*f)->ReadAt(0, out);
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, out.size());
  return out;
}

TEST_F(ChainTest, ReadsEveryKindOfEntryThroughThreeBackups) {
  auto chain = OpenResolved(dir_ / "b2", testutil::LocalChain());
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  EXPECT_EQ((*chain)->depth(), 3u);
  EXPECT_EQ(ReadAll(**chain, "log/app.log"), a_ + b_ + c_);
  EXPECT_EQ(ReadAll(**chain, "metadata/db.sql"), "CREATE DATABASE db;\n");
  EXPECT_EQ(ReadAll(**chain, "new/name.bin"), "renamed content");
  EXPECT_EQ(ReadAll(**chain, "copy/b.bin"), "same bytes twice");
  EXPECT_EQ(ReadAll(**chain, "empty.txt"), "");

  auto app = (*chain)->Extents(*(*chain)->top().manifest().FindByName("log/app.log"));
  ASSERT_EQ(app.size(), 3u);
  EXPECT_EQ(app[0].level, 2u);
  EXPECT_EQ(app[0].length, a_.size());
  EXPECT_EQ(app[1].length, b_.size());
  EXPECT_EQ(app[2].length, c_.size());
  // Only the tail is stored at each level.
  EXPECT_EQ(std::filesystem::file_size(dir_ / "b2/log/app.log"), c_.size());
}

TEST_F(ChainTest, MiddleOfChainAndDedupInBase) {
  auto chain = OpenResolved(dir_ / "b1", testutil::LocalChain());
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  EXPECT_EQ(ReadAll(**chain, "data/t/p3/columns.txt"), "columns format version: 1\n");
  auto b0 = OpenResolved(dir_ / "b0", testutil::LocalChain());
  ASSERT_TRUE(b0.ok());
  EXPECT_EQ((*b0)->depth(), 1u);
  EXPECT_EQ(ReadAll(**b0, "data/t/p2/columns.txt"), "columns format version: 1\n");
}

TEST_F(ChainTest, BaseOverrideAndDiskLocator) {
  std::filesystem::rename(dir_ / "b1", dir_ / "moved");
  auto missing = OpenResolved(dir_ / "b2", testutil::LocalChain());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNoBaseBackup) << missing.status().ToString();
  ChainOptions o = testutil::LocalChain();
  o.base_override = dir_ / "moved";
  auto chain = OpenResolved(dir_ / "b2", o);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  EXPECT_EQ(ReadAll(**chain, "log/app.log"), a_ + b_ + c_);

  FixtureBackup d(dir_ / "d");
  d.header.base_backup = "Disk('backups', 'b0')";
  d.header.base_backup_uuid = b0_uuid_;
  d.AddFromBase("old.bin", "renamed content");
  ASSERT_OK(d.Write());
  // Unmapped, the disk's path is looked for above the backup, with the uuid d records.
  auto searched = OpenResolved(dir_ / "d", testutil::LocalChain());
  ASSERT_TRUE(searched.ok()) << searched.status().ToString();
  EXPECT_EQ((*searched)->level(1).path(), dir_ / "b0");
  FixtureBackup e(dir_ / "e");
  e.header.base_backup = "Disk('backups', 'nowhere/b9')";
  e.header.base_backup_uuid = b0_uuid_;
  e.AddFromBase("old.bin", "renamed content");
  ASSERT_OK(e.Write());
  auto unmapped = OpenResolved(dir_ / "e", testutil::LocalChain()).status();
  EXPECT_EQ(unmapped.code(), ErrorCode::kNoBaseBackup);
  EXPECT_NE(unmapped.message().find("disk 'backups' is not mapped (--disk backups=DIR"),
            std::string::npos)
      << unmapped.ToString();
  ChainOptions disks = testutil::LocalChain();
  disks.locators.disks["backups"] = dir_.path();
  auto dc = OpenResolved(dir_ / "d", disks);
  ASSERT_TRUE(dc.ok()) << dc.status().ToString();
  EXPECT_EQ(ReadAll(**dc, "old.bin"), "renamed content");
}

TEST_F(ChainTest, WrongUuidIsWrongBaseBackup) {
  FixtureBackup x(dir_ / "x");
  x.header.base_backup = "File('b0')";
  x.header.base_backup_uuid = "00000000-0000-4000-8000-000000000000";
  x.AddFromBase("a", "renamed content");
  ASSERT_OK(x.Write());
  auto s = OpenResolved(dir_ / "x", testutil::LocalChain()).status();
  EXPECT_EQ(s.code(), ErrorCode::kWrongBaseBackup);
  EXPECT_NE(s.message().find("has different UUID (" + b0_uuid_ + " != 00000000"), std::string::npos)
      << s.message();
  x.header.base_backup_uuid.reset();
  std::filesystem::remove_all(dir_ / "x");
  ASSERT_OK(x.Write());
  EXPECT_EQ(OpenResolved(dir_ / "x", testutil::LocalChain()).status().code(),
            ErrorCode::kWrongBaseBackup)
      << "a missing base_backup_uuid cannot match";
}

TEST_F(ChainTest, EntryMissingFromBaseIsWrongBaseBackupAtOpen) {
  FixtureBackup x(dir_ / "x");
  x.header.base_backup = "File('b0')";
  x.header.base_backup_uuid = b0_uuid_;
  x.AddFromBase("ghost.bin", "content the base never had");
  ASSERT_OK(x.Write());
  auto s = OpenResolved(dir_ / "x", testutil::LocalChain()).status();
  EXPECT_EQ(s.code(), ErrorCode::kWrongBaseBackup);
  EXPECT_NE(s.message().find("doesn't exist there"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("ghost.bin"), std::string::npos) << s.message();
}

TEST_F(ChainTest, EntryUsingBaseWithoutBaseIsNoBaseBackup) {
  FixtureBackup x(dir_ / "x");
  x.AddFromBase("a.bin", "Some text");
  ASSERT_OK(x.Write());
  auto s = OpenResolved(dir_ / "x", testutil::LocalChain()).status();
  EXPECT_EQ(s.code(), ErrorCode::kNoBaseBackup);
  EXPECT_NE(s.message().find("Entry 28b5529750ac210952ffd366774363ed9 (\"a.bin\") is marked to be "
                             "read from a base backup, but there is no base backup specified"),
            std::string::npos)
      << s.message();
}

TEST_F(ChainTest, CycleAndDepthAreRefused) {
  FixtureBackup p(dir_ / "p"), q(dir_ / "q");
  p.SetBase(q);
  q.SetBase(p);
  p.AddFromBase("f", "loop");
  q.AddFromBase("f", "loop");
  ASSERT_OK(p.Write());
  ASSERT_OK(q.Write());
  auto s = OpenResolved(dir_ / "p", testutil::LocalChain()).status();
  EXPECT_EQ(s.code(), ErrorCode::kWrongBaseBackup);
  EXPECT_NE(s.message().find("loops"), std::string::npos) << s.message();

  ChainOptions shallow = testutil::LocalChain();
  shallow.max_depth = 2;
  EXPECT_EQ(OpenResolved(dir_ / "b2", shallow).status().code(), ErrorCode::kWrongBaseBackup);
}

TEST_F(ChainTest, DataFileOfWrongLengthOrMissingIsDamaged) {
  auto chain = OpenResolved(dir_ / "b2", testutil::LocalChain());
  ASSERT_TRUE(chain.ok());
  const Manifest& m = (*chain)->top().manifest();
  ::truncate((dir_ / "b1/log/app.log").c_str(), 10);
  auto s = (*chain)->OpenEntry(*m.FindByName("log/app.log")).status();
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(s.message().find("b1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("log/app.log"), std::string::npos) << s.message();
  testutil::WriteFile(dir_ / "b2/copy/a.bin", "same bytes twice, and more");
  EXPECT_EQ((*chain)->OpenEntry(*m.FindByName("copy/b.bin")).status().code(),
            ErrorCode::kBackupDamaged)
      << "a data file longer than declared is damage too";
  std::filesystem::remove(dir_ / "b0/metadata/db.sql");
  EXPECT_EQ((*chain)->OpenEntry(*m.FindByName("metadata/db.sql")).status().code(),
            ErrorCode::kBackupDamaged);
}

TEST_F(ChainTest, TruncationAfterOpenIsDamageNotShortRead) {
  auto chain = OpenResolved(dir_ / "b2", testutil::LocalChain());
  ASSERT_TRUE(chain.ok());
  auto f = (*chain)->OpenEntry(*(*chain)->top().manifest().FindByName("log/app.log"));
  ASSERT_TRUE(f.ok());
  ::truncate((dir_ / "b0/log/app.log").c_str(), 100);
  std::string buf(4096, '\0');
  auto n = (*f)->ReadAt(0, buf);
  EXPECT_EQ(n.status().code(), ErrorCode::kBackupDamaged) << n.status().ToString();
  auto tail = (*f)->ReadAt(a_.size(), buf);  // Later segments still read fine.
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(buf.substr(0, *tail), (b_ + c_).substr(0, *tail));
}

TEST_F(ChainTest, ReaderOutlivesItsChain) {
  std::shared_ptr<const RandomAccessFile> f;
  {
    auto chain = OpenResolved(dir_ / "b2", testutil::LocalChain());
    ASSERT_TRUE(chain.ok());
    auto opened = (*chain)->OpenEntry(*(*chain)->top().manifest().FindByName("log/app.log"));
    ASSERT_TRUE(opened.ok());
    f = *opened;
  }
  std::string buf(f->size(), '\0');
  ASSERT_EQ(*f->ReadAt(0, buf), buf.size());
  EXPECT_EQ(buf, a_ + b_ + c_);
}

// Opens log/app.log of b2 (three data files) through a cache of one open file, replaces b0's
// data file by `replacement`, and reads `length` bytes from the start, which reopens it.
Status ReadAfterReplacing(const TempDir& dir, const std::string& replacement, size_t length) {
  auto chain = OpenResolved(dir / "b2", testutil::LocalChain(/*max_open_files=*/1));
  if (!chain.ok()) return chain.status();
  auto app = (*chain)->OpenEntry(*(*chain)->top().manifest().FindByName("log/app.log"));
  if (!app.ok()) return app.status();
  std::filesystem::remove(dir / "b0/log/app.log");
  testutil::WriteFile(dir / "b0/log/app.log", replacement);
  std::string buf(length, '\0');
  return (*app)->ReadAt(0, buf).status();
}

TEST_F(ChainTest, ReplacedDataFileIsDetectedWhenReopened) {
  const Status s = ReadAfterReplacing(dir_, "short", 100);
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged) << s.ToString();
  EXPECT_NE(s.message().find("changed size"), std::string::npos) << s.ToString();
}

// The same size is not the same file: a data file replaced by another of its size (its backup
// deleted, another written in its place) is refused when opened again, never read for it.
TEST_F(ChainTest, ADataFileReplacedByOneOfItsSizeIsDetectedWhenReopened) {
  const std::string other(std::filesystem::file_size(dir_ / "b0/log/app.log"), 'Z');
  const Status s = ReadAfterReplacing(dir_, other, a_.size());
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged) << s.ToString();
  EXPECT_NE(s.message().find("was replaced"), std::string::npos) << s.ToString();
}

TEST_F(ChainTest, SymlinkedDataFileIsRefused) {
  std::filesystem::remove(dir_ / "b2/copy/a.bin");
  testutil::WriteFile(dir_ / "outside", "same bytes twice");
  std::filesystem::create_symlink(dir_ / "outside", dir_ / "b2/copy/a.bin");
  auto chain = OpenResolved(dir_ / "b2", testutil::LocalChain());
  ASSERT_TRUE(chain.ok());
  auto s = (*chain)->OpenEntry(*(*chain)->top().manifest().FindByName("copy/a.bin")).status();
  EXPECT_EQ(s.code(), ErrorCode::kInsecurePath) << s.ToString();
}

TEST_F(ChainTest, MissingManifestIsBackupNotFound) {
  EXPECT_EQ(OpenResolved(dir_ / "nothing", testutil::LocalChain()).status().code(),
            ErrorCode::kBackupNotFound);
  std::filesystem::create_directories(dir_ / "half");
  testutil::WriteFile(dir_ / "half/.lock", "uuid");
  auto s = OpenResolved(dir_ / "half", testutil::LocalChain()).status();
  EXPECT_EQ(s.code(), ErrorCode::kBackupNotFound);
  EXPECT_NE(s.message().find(".lock"), std::string::npos);
}

TEST_F(ChainTest, NothingIsReadWithoutAStorage) {
  // The engine has no storage of its own: a context without one is refused, not defaulted.
  EXPECT_EQ(OpenResolved(dir_ / "b2", ChainOptions()).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ListStore(Context(), dir_.path()).status().code(), ErrorCode::kInvalidArgument);
  PrunePolicy keep_one;
  keep_one.keep_last = 1;
  EXPECT_EQ(PruneStore(dir_.path(), keep_one, Context()).status().code(),
            ErrorCode::kInvalidArgument);
  BackupOptions o;
  o.source = dir_ / "b0";
  o.dest = dir_ / "copy";
  EXPECT_EQ(WriteBackup(o, nullptr).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "copy"));
}

TEST(ChainXxh3Test, StitchfsFormatChain) {
  TempDir dir;
  const std::string a = RandomBytes(10000, 9), b = RandomBytes(777, 10);
  FixtureBackup b0(dir / "b0", ChecksumAlgorithm::kXxh3);
  b0.AddStored("f", a);
  ASSERT_OK(b0.Write());
  FixtureBackup b1(dir / "b1", ChecksumAlgorithm::kXxh3);
  b1.SetBase(b0);
  b1.AddStitched("f", a + b, a.size());
  ASSERT_OK(b1.Write());
  auto chain = OpenResolved(dir / "b1", testutil::LocalChain());
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  EXPECT_EQ((*chain)->top().header().algorithm, ChecksumAlgorithm::kXxh3);
  EXPECT_EQ(ReadAll(**chain, "f"), a + b);
}

}  // namespace
}  // namespace stitchfs::engine

namespace stitchfs::engine {
namespace {

// A chain far deeper than the file descriptors the process may hold: opening it and reading
// through it must not need one fd per level.
TEST(DeepChainTest, OpensWithFewerFdsThanLevels) {
  TempDir dir;
  constexpr int kLevels = 1500;
  std::string content;
  std::unique_ptr<FixtureBackup> prev;
  for (int i = 0; i < kLevels; ++i) {
    auto b = std::make_unique<FixtureBackup>(dir / ("b" + std::to_string(i)));
    const std::string more = "line " + std::to_string(i) + "\n";
    if (prev) {
      b->SetBase(*prev);
      b->AddStitched("log", content + more, content.size());
    } else {
      b->AddStored("log", more);
    }
    content += more;
    ASSERT_OK(b->Write());
    prev = std::move(b);
  }
  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  struct rlimit low = old;
  low.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  ChainOptions o = testutil::LocalChain(/*max_open_files=*/64);
  auto chain = OpenResolved(prev->dir(), o);
  std::string got = chain.ok() ? ReadAll(**chain, "log") : "";
  auto resolved = OpenResolved(prev->dir(), o);
  ::setrlimit(RLIMIT_NOFILE, &old);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  EXPECT_EQ((*chain)->depth(), static_cast<size_t>(kLevels));
  EXPECT_EQ(got, content);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  auto f = (*resolved)->OpenEntry(*(*resolved)->top().manifest().FindByName("log"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::string via_resolved((*f)->size(), '\0');
  ASSERT_TRUE((*f)->ReadAt(0, via_resolved).ok());
  EXPECT_EQ(via_resolved, content);
}

}  // namespace
}  // namespace stitchfs::engine
