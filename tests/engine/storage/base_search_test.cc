// How a chain's bases are found (FindBase through OpenResolved): ClickHouse's relative
// File() paths, which mean "under the backups root"; chains moved as a whole; a backup of
// another uuid where the locator points is never taken; resolved indexes stay right.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "engine/read/open_resolved.h"
#include "engine/read/resolved_backup.h"
#include "engine/storage/base_candidates.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::FixtureBackup;
using testutil::RandomBytes;
using testutil::TempDir;

class BaseSearchTest : public ::testing::Test {
 protected:
  // A chain b1 <- b2 <- b3 in `dir`, each naming its base with `locator(base)`.
  void MakeChain(const std::string& dir,
                 const std::function<std::string(const std::string& base)>& locator) {
    std::string content = RandomBytes(3000, 7);
    std::string prev, prev_uuid;
    for (int i = 1; i <= 3; ++i) {
      const std::string path = dir + "/b" + std::to_string(i);
      FixtureBackup b(path);
      const size_t base_size = content.size();
      content += RandomBytes(500, 10 + i);
      if (prev.empty()) {
        b.AddStored("data/log.bin", content);
      } else {
        b.header.base_backup = locator(prev);
        b.header.base_backup_uuid = prev_uuid;
        b.AddStitched("data/log.bin", content, base_size);
      }
      ASSERT_OK(b.Write());
      prev = path;
      prev_uuid = b.uuid();
    }
    content_ = content;
  }

  std::string ReadLog(const ResolvedBackup& r) {
    auto f = r.OpenEntry(*r.top().manifest().FindByName("data/log.bin"));
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    if (!f.ok()) return "";
    std::string out((*f)->size(), '\0');
    EXPECT_TRUE((*f)->ReadAt(0, out).ok());
    return out;
  }

  TempDir dir_;
  std::string content_;
};

TEST_F(BaseSearchTest, ClickHouseSubfolderChainOpensWithAndWithoutTheRoot) {
  // BACKUP ... TO File('daily/b2') SETTINGS base_backup = File('daily/b1'), root = dir_.
  MakeChain(dir_ / "daily", [&](const std::string& base) {
    return FileLocator("daily/" + std::filesystem::path(base).filename().string());
  });
  auto searched = OpenResolved(dir_ / "daily/b3", testutil::LocalChain());
  ASSERT_TRUE(searched.ok()) << searched.status().ToString();
  EXPECT_EQ((*searched)->depth(), 3u);
  EXPECT_EQ((*searched)->level(2).path(), dir_ / "daily/b1");
  EXPECT_EQ(ReadLog(**searched), content_);
  ChainOptions rooted = testutil::LocalChain();
  rooted.locators.backups_root = dir_.path();
  auto r = OpenResolved(dir_ / "daily/b3", rooted);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadLog(**r), content_);
  const std::string why =
      WhyBaseFound("File('daily/b1')", dir_ / "daily/b2", dir_ / "daily/b1", rooted.locators);
  EXPECT_NE(why.find("under the backups root"), std::string::npos) << why;
  // A root that is wrong: the search above the backup still finds the right one.
  rooted.locators.backups_root = dir_ / "nowhere";
  EXPECT_TRUE(OpenResolved(dir_ / "daily/b3", rooted).ok());
}

TEST_F(BaseSearchTest, ChainMovedAsAWholeStillOpens) {
  MakeChain(dir_ / "old/st", [](const std::string& base) { return FileLocator(base); });
  ASSERT_TRUE(
      OpenResolved(dir_ / "old/st/b3", testutil::LocalChain()).ok());  // Leaves indexes behind.
  std::filesystem::create_directories(dir_ / "new");
  std::filesystem::rename(dir_ / "old/st", dir_ / "new/st");
  auto r = OpenResolved(dir_ / "new/st/b3", testutil::LocalChain());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->level(1).path(), dir_ / "new/st/b2");
  EXPECT_EQ((*r)->level(2).path(), dir_ / "new/st/b1");
  EXPECT_EQ(ReadLog(**r), content_);
  // Opened again (now from an index that names the new places).
  auto again = OpenResolved(dir_ / "new/st/b3", testutil::LocalChain());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ReadLog(**again), content_);
}

TEST_F(BaseSearchTest, ACopiedChainReadsItsOwnBases) {
  MakeChain(dir_ / "st", [](const std::string& base) { return FileLocator(base); });
  std::filesystem::copy(dir_ / "st", dir_ / "copy", std::filesystem::copy_options::recursive);
  auto r = OpenResolved(dir_ / "copy/b3", testutil::LocalChain());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->level(1).path(), dir_ / "copy/b2");
  EXPECT_EQ((*r)->level(2).path(), dir_ / "copy/b1");
  EXPECT_EQ(ReadLog(**r), content_);
}

TEST_F(BaseSearchTest, AnotherBackupWhereTheSearchLooksIsNeverTaken) {
  MakeChain(dir_ / "daily", [&](const std::string& base) {
    return FileLocator("daily/" + std::filesystem::path(base).filename().string());
  });
  // A backup of another uuid at the first place looked at (beside the backup): skipped.
  FixtureBackup decoy(dir_ / "daily/daily/b2");
  decoy.AddStored("data/log.bin", "decoy");
  ASSERT_OK(decoy.Write());
  auto r = OpenResolved(dir_ / "daily/b3", testutil::LocalChain());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->level(1).path(), dir_ / "daily/b2");
  EXPECT_EQ(ReadLog(**r), content_);
  // With the real base gone, the decoy (the locator's own meaning here) is refused by uuid.
  std::filesystem::rename(dir_ / "daily/b2", dir_ / "gone");
  auto wrong = OpenResolved(dir_ / "daily/b3", testutil::LocalChain());
  EXPECT_EQ(wrong.status().code(), ErrorCode::kWrongBaseBackup) << wrong.status().ToString();
  // And with nothing anywhere: NO_BASE_BACKUP saying where it looked.
  std::filesystem::remove_all(dir_ / "daily/daily");
  auto none = OpenResolved(dir_ / "daily/b3", testutil::LocalChain());
  EXPECT_EQ(none.status().code(), ErrorCode::kNoBaseBackup);
  EXPECT_NE(none.status().message().find("other places looked at"), std::string::npos)
      << none.status().ToString();
}

TEST_F(BaseSearchTest, ACopyOwnedBySomeoneElseIsNeverTaken) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  MakeChain(dir_ / "x/daily", [&](const std::string& base) {
    return FileLocator("daily/" + std::filesystem::path(base).filename().string());
  });
  // b2 (b3's base) gone; it (and its own base) where the search looks (daily/ under a folder
  // above the chain, as /tmp/daily/b2 would be), planted by another user.
  std::filesystem::create_directories(dir_ / "daily");
  std::filesystem::rename(dir_ / "x/daily/b2", dir_ / "daily/b2");
  std::filesystem::rename(dir_ / "x/daily/b1", dir_ / "daily/b1");
  ASSERT_EQ(::chown((dir_ / "daily/b2").c_str(), 12345, 12345), 0);
  auto r = OpenResolved(dir_ / "x/daily/b3", testutil::LocalChain());
  EXPECT_EQ(r.status().code(), ErrorCode::kNoBaseBackup) << r.status().ToString();
  ASSERT_EQ(::chown((dir_ / "daily/b2").c_str(), 0, 0), 0);  // Root's (this user's): taken.
  auto ok = OpenResolved(dir_ / "x/daily/b3", testutil::LocalChain());
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ReadLog(**ok), content_);
}

TEST_F(BaseSearchTest, AMissingUuidAllowsOnlyTheLocatorsOwnMeaning) {
  MakeChain(dir_ / "daily", [&](const std::string& base) {
    return FileLocator("daily/" + std::filesystem::path(base).filename().string());
  });
  FixtureBackup top(dir_ / "daily/b4");
  top.header.base_backup = "File('daily/b3')";  // No <base_backup_uuid>: nothing to match.
  top.AddStitched("data/log.bin", content_ + "x", content_.size());
  ASSERT_OK(top.Write());
  EXPECT_EQ(OpenResolved(dir_ / "daily/b4", testutil::LocalChain()).status().code(),
            ErrorCode::kNoBaseBackup);
}

}  // namespace
}  // namespace stitchfs::engine
