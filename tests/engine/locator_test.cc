#include "engine/storage/locator.h"

#include <gtest/gtest.h>

#include "engine/s3/s3_address.h"
#include "engine/s3/s3_keyring.h"

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
  EXPECT_EQ(*ResolveLocator("S3('https://s3.example/bucket/base')", "/store", disks),
            "https://s3.example/bucket/base");
  auto azure = ResolveLocator("AzureBlobStorage('conn', 'c', 'b')", "/store", disks);
  EXPECT_EQ(azure.status().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(*ResolveLocator("File('b.zip')", "/s", disks), "/s/b.zip");  // An archive backup.
  EXPECT_EQ(*ResolveLocator("Disk('backups', '1.tar.zst')", "/s", disks),
            disks.at("backups") + "/1.tar.zst");
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

TEST(LocatorTest, ResolvesS3LocatorsWithoutShowingSecrets) {
  std::map<std::string, std::string> none;
  auto r = ResolveLocator("S3('http://127.0.0.1:9/bk/day1', 'AKEY', 'SECRET')", "/s", none);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "http://127.0.0.1:9/bk/day1");
  auto kept = S3Keyring::Global().Find(*ParseS3Address(*r));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->access_key, "AKEY");
  EXPECT_EQ(kept->secret_key, "SECRET");
  const std::string shown =
      RedactLocator("S3('http://h/b/k?X-Amz-Signature=zz', 'AKEY', 'SECRET')");
  EXPECT_EQ(shown, "S3('http://h/b/k', '[HIDDEN]', '[HIDDEN]')");
  EXPECT_EQ(RedactLocator("File('/a')"), "File('/a')");
  auto bad = ResolveLocator("S3('http://h/b/k', 'AKEY')", "/s", none);
  EXPECT_EQ(bad.status().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(bad.status().message().find("AKEY"), std::string::npos);
}

TEST(LocatorTest, RelativeFileBesideAnS3BackupStaysInItsBucket) {
  std::map<std::string, std::string> none;
  EXPECT_EQ(*ResolveLocator("File('../day1')", "s3://bk/store/x", none), "s3://bk/store/day1");
  EXPECT_EQ(*ResolveLocator("File('day1')", "s3://bk/store", none), "s3://bk/store/day1");
  EXPECT_EQ(ResolveLocator("File('../../x')", "s3://bk/store", none).status().code(),
            ErrorCode::kInsecurePath);
  EXPECT_EQ(NormalLocation("s3://bk//a/b/"), "s3://bk/a/b");
}

}  // namespace
}  // namespace stitchfs::engine
