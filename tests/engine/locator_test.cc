#include "engine/storage/locator.h"

#include <gtest/gtest.h>

namespace stitchfs::engine {
namespace {

TEST(LocatorTest, ParsesClickHouseLocators) {
  auto l = ParseLocator("Disk('backups', 'base')");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->engine, "Disk");
  EXPECT_EQ(l->args, (std::vector<std::string>{"backups", "base"}));
  auto f = ParseLocator("File('/backups/it\\'s/')");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->args[0], "/backups/it's/");
  auto s3 = ParseLocator("S3(named_coll, url = 'https://x/y?a=1&b=2')");
  ASSERT_TRUE(s3.ok());
  EXPECT_EQ(s3->args.size(), 2u);
  for (const char* bad : {"", "File", "File(", "File('x'", "File('x') junk", "('x')"}) {
    EXPECT_FALSE(ParseLocator(bad).ok()) << bad;
  }
}

TEST(LocatorTest, FileLocatorRoundTrips) {
  const std::string path = "/a b/it's\\x";
  auto l = ParseLocator(FileLocator(path));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->args[0], path);
}

TEST(LocatorTest, Resolves) {
  std::map<std::string, std::string> disks{{"backups", "/srv/bk"}};
  EXPECT_EQ(*ResolveLocator("File('/abs/base/')", "/store", disks), "/abs/base");
  EXPECT_EQ(*ResolveLocator("File('base')", "/store", disks), "/store/base");
  EXPECT_EQ(*ResolveLocator("Disk('backups', 'daily/1')", "/store", disks), "/srv/bk/daily/1");
  EXPECT_EQ(ResolveLocator("Disk('other', 'x')", "/store", disks).status().code(),
            ErrorCode::kNoBaseBackup);
  EXPECT_EQ(ResolveLocator("Disk('backups', '../../etc')", "/store", disks).status().code(),
            ErrorCode::kInsecurePath);
  auto s3 = ResolveLocator("S3('https://s3/bucket/base')", "/store", disks);
  EXPECT_EQ(s3.status().code(), ErrorCode::kNotSupported);
  EXPECT_NE(s3.status().message().find("S3('https://s3/bucket/base')"), std::string::npos);
  EXPECT_EQ(ResolveLocator("File('b.zip')", "/s", disks).status().code(), ErrorCode::kNotSupported);
  // Any spelling of a path inside the disk resolves there; none reaches above it.
  EXPECT_EQ(*ResolveLocator("Disk('backups', '.')", "/store", disks), "/srv/bk");
  EXPECT_EQ(*ResolveLocator("Disk('backups', '')", "/store", disks), "/srv/bk");
  EXPECT_EQ(*ResolveLocator("Disk('backups', './daily//1/')", "/store", disks), "/srv/bk/daily/1");
  EXPECT_EQ(*ResolveLocator("Disk('backups', '/daily/1')", "/store", disks), "/srv/bk/daily/1");
  EXPECT_EQ(ResolveLocator("Disk('backups', 'a/../..')", "/store", disks).status().code(),
            ErrorCode::kInsecurePath);
  // File() paths come back absolute and normal, whatever the holder's spelling.
  EXPECT_EQ(*ResolveLocator("File('../day8')", "/store/./x/../", disks), "/day8");
  EXPECT_EQ(*ResolveLocator("File('../day8/')", "/srv/store/day9/..", disks), "/srv/day8");
}

}  // namespace
}  // namespace stitchfs::engine
