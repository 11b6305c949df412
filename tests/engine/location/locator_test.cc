#include "engine/location/locator.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engine/location/s3_address.h"
#include "engine/location/s3_keyring.h"
#include "engine/storage/base_candidates.h"

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
  for (const char* bad : {"", "File", "File(", "File('x'", "File('x') junk", "('x')",
                          "S3('https://x/b/k' 'key', 'secret')", "Disk('d' 'p')"}) {
    EXPECT_FALSE(ParseLocator(bad).ok()) << bad;
  }
}

TEST(LocatorTest, FileLocatorRoundTrips) {
  const std::string path = "/a b/it's\\x";
  auto l = ParseLocator(FileLocator(path));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->args[0], path);
}

// The location FindBaseCandidates tries first (the locator's meaning to ClickHouse).
StatusOr<std::string> Primary(std::string_view locator, const std::string& child,
                              const LocatorContext& c) {
  ASSIGN_OR_RETURN(BaseSearch s, FindBaseCandidates(locator, child, c));
  for (const auto& candidate : s.candidates) {
    if (candidate.primary) return candidate.location;
  }
  return Status::NoBaseBackup(s.no_primary);
}

std::vector<std::string> Locations(const BaseSearch& s) {
  std::vector<std::string> out;
  for (const auto& c : s.candidates) out.push_back(c.location);
  return out;
}

TEST(LocatorTest, Resolves) {
  LocatorContext disks;
  disks.disks = {{"backups", "/srv/bk"}};
  EXPECT_EQ(*Primary("File('/abs/base/')", "/store/x", disks), "/abs/base");
  EXPECT_EQ(*Primary("File('base')", "/store/x", disks), "/store/base");
  EXPECT_EQ(*Primary("Disk('backups', 'daily/1')", "/store/x", disks), "/srv/bk/daily/1");
  EXPECT_EQ(Primary("Disk('other', 'x')", "/store/x", disks).status().code(),
            ErrorCode::kNoBaseBackup);
  EXPECT_EQ(Primary("Disk('backups', '../../etc')", "/store/x", disks).status().code(),
            ErrorCode::kInsecurePath);
  EXPECT_EQ(*Primary("S3('https://s3.example/bucket/base')", "/store/x", disks),
            "https://s3.example/bucket/base");
  auto azure = Primary("AzureBlobStorage('conn', 'c', 'b')", "/store/x", disks);
  EXPECT_EQ(azure.status().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(*Primary("File('b.zip')", "/s/x", disks), "/s/b.zip");  // An archive backup.
  EXPECT_EQ(*Primary("Disk('backups', '1.tar.zst')", "/s/x", disks), "/srv/bk/1.tar.zst");
  // Any spelling of a path inside the disk resolves there; none reaches above it.
  EXPECT_EQ(*Primary("Disk('backups', '.')", "/store/x", disks), "/srv/bk");
  EXPECT_EQ(*Primary("Disk('backups', '')", "/store/x", disks), "/srv/bk");
  EXPECT_EQ(*Primary("Disk('backups', './daily//1/')", "/store/x", disks), "/srv/bk/daily/1");
  EXPECT_EQ(*Primary("Disk('backups', '/daily/1')", "/store/x", disks), "/srv/bk/daily/1");
  EXPECT_EQ(Primary("Disk('backups', 'a/../..')", "/store/x", disks).status().code(),
            ErrorCode::kInsecurePath);
  // File() paths come back absolute and normal.
  EXPECT_EQ(*Primary("File('../day8')", "/store/x", disks), "/day8");
  EXPECT_EQ(*Primary("File('../day8/')", "/srv/store/day9", disks), "/srv/day8");
  EXPECT_EQ(Primary("File('../../../x')", "/a/b", disks).status().code(), ErrorCode::kInsecurePath);
}

TEST(LocatorTest, RelativeFileIsUnderTheBackupsRootWhenOneIsKnown) {
  LocatorContext c;
  c.backups_root = "/backups";
  c.origin = "--backups-root";
  auto s = FindBaseCandidates("File('daily/b1')", "/backups/daily/b2", c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_FALSE(s->candidates.empty());
  EXPECT_TRUE(s->candidates[0].primary);
  EXPECT_EQ(s->candidates[0].location, "/backups/daily/b1");
  EXPECT_NE(s->candidates[0].why.find("backups root /backups (--backups-root)"), std::string::npos)
      << s->candidates[0].why;
  // Then the folders above the backup, none of them primary.
  EXPECT_EQ(Locations(*s), (std::vector<std::string>{"/backups/daily/b1", "/backups/daily/daily/b1",
                                                     "/daily/b1"}));
  EXPECT_FALSE(s->candidates[1].primary);
}

TEST(LocatorTest, WithoutARootTheFoldersAboveTheBackupAreSearched) {
  auto s = FindBaseCandidates("File('daily/b1')", "/backups/daily/b2", {});
  ASSERT_TRUE(s.ok());
  // The same name beside the backup, then the path beside it (the locator's meaning to the
  // server whose backups root is this folder), then the folders above.
  EXPECT_EQ(Locations(*s), (std::vector<std::string>{"/backups/daily/b1", "/backups/daily/daily/b1",
                                                     "/daily/b1"}));
  EXPECT_FALSE(s->candidates[0].primary);
  EXPECT_TRUE(s->candidates[1].primary);
  EXPECT_FALSE(s->candidates[2].primary);
  EXPECT_EQ(WhyBaseFound("File('daily/b1')", "/backups/daily/b2", "/backups/daily/b1", {}),
            s->candidates[0].why);
  EXPECT_EQ(WhyBaseFound("File('daily/b1')", "/backups/daily/b2", "/elsewhere", {}), "");
}

TEST(LocatorTest, AnAbsolutePathIsAlsoLookedForWhereAMovedChainWouldBe) {
  auto s = FindBaseCandidates("File('/old/st/s1')", "/new/st/s2", {});
  ASSERT_TRUE(s.ok());
  const auto l = Locations(*s);
  ASSERT_GE(l.size(), 3u);
  EXPECT_EQ(l[0], "/new/st/s1") << "the same name beside the backup, first";
  EXPECT_EQ(l[1], "/old/st/s1");
  EXPECT_TRUE(s->candidates[1].primary);
  EXPECT_EQ(l[2], "/new/st/st/s1");
}

TEST(LocatorTest, AnUnmappedDiskHasNoPrimaryButIsSearched) {
  auto s = FindBaseCandidates("Disk('backups', 'st/b1')", "/var/lib/ch/disks/backups/st/b2", {});
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->no_primary.find("disk 'backups' is not mapped"), std::string::npos);
  for (const auto& c : s->candidates) EXPECT_FALSE(c.primary);
  const auto l = Locations(*s);
  EXPECT_NE(std::find(l.begin(), l.end(), "/var/lib/ch/disks/backups/st/b1"), l.end());
}

TEST(LocatorTest, OverrideIsTheOnlyCandidate) {
  auto s = FindBaseCandidates("File('x')", "/a/b", {}, "/c/./d/");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->candidates.size(), 1u);
  EXPECT_EQ(s->candidates[0].location, "/c/d");
  EXPECT_TRUE(s->candidates[0].primary);
}

TEST(LocatorTest, UserLocatorsResolveInTheirContext) {
  LocatorContext c;
  EXPECT_EQ(*ResolveUserLocator("File('/a/./b/')", c), "/a/b");
  EXPECT_EQ(ResolveUserLocator("File('b')", c).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ResolveUserLocator("Disk('d', 'b')", c).status().code(), ErrorCode::kInvalidArgument);
  c.backups_root = "/bk";
  c.disks = {{"d", "/disk"}};
  EXPECT_EQ(*ResolveUserLocator("File('daily/b1')", c), "/bk/daily/b1");
  EXPECT_EQ(*ResolveUserLocator("Disk('d', 'st/b1')", c), "/disk/st/b1");
  EXPECT_EQ(ResolveUserLocator("Disk('d', '../x')", c).status().code(), ErrorCode::kInsecurePath);
  EXPECT_TRUE(LooksLikeLocator("File('x')"));
  EXPECT_TRUE(LooksLikeLocator("Disk('d', 'x')"));
  EXPECT_FALSE(LooksLikeLocator("/File('x')"));
  EXPECT_FALSE(LooksLikeLocator("s3://b/x"));
  EXPECT_EQ(DiskLocator("d", "it's"), "Disk('d', 'it\\'s')");
}

TEST(LocatorTest, ResolvesS3LocatorsWithoutShowingSecrets) {
  auto r = Primary("S3('http://127.0.0.1:9/bk/day1', 'AKEY', 'SECRET')", "/s/x", {});
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
  auto bad = Primary("S3('http://h/b/k', 'AKEY')", "/s/x", {});
  EXPECT_EQ(bad.status().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(bad.status().message().find("AKEY"), std::string::npos);
}

TEST(LocatorTest, RelativeFileBesideAnS3BackupStaysInItsBucket) {
  EXPECT_EQ(*Primary("File('../day1')", "s3://bk/store/x/y", {}), "s3://bk/store/day1");
  EXPECT_EQ(*Primary("File('day1')", "s3://bk/store/y", {}), "s3://bk/store/day1");
  EXPECT_EQ(Primary("File('../../x')", "s3://bk/store/y", {}).status().code(),
            ErrorCode::kInsecurePath);
  EXPECT_EQ(NormalLocation("s3://bk//a/b/"), "s3://bk/a/b");
  // The folders above an S3 backup are its bucket's prefixes, never above the bucket.
  auto s = FindBaseCandidates("File('daily/b1')", "s3://bk/x/daily/b2", {});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Locations(*s),
            (std::vector<std::string>{"s3://bk/x/daily/b1", "s3://bk/x/daily/daily/b1",
                                      "s3://bk/daily/b1"}));
}

}  // namespace
}  // namespace stitchfs::engine
