// Cache folders are private: made 0700, tightened when too open, refused when another user's;
// what each cache writes is 0600 in 0700 folders.
#include "engine/base/cache_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "engine/backends/s3/block_cache.h"
#include "engine/format/manifest_cache.h"
#include "engine/format/manifest_reader.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

namespace fs = std::filesystem;

unsigned ModeOf(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// Every folder beneath `dir` (and itself) is 0700 and every file 0600.
void ExpectPrivate(const std::string& dir) {
  EXPECT_EQ(ModeOf(dir), 0700u) << dir;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    EXPECT_EQ(ModeOf(e.path()), e.is_directory() ? 0700u : 0600u) << e.path();
  }
}

TEST(CacheDirTest, MakesMissingFoldersPrivateAndTightensOpenOnes) {
  testutil::TempDir t;
  const std::string deep = t / "a/b/cache";
  ASSERT_OK(PrivateFolder(deep));
  EXPECT_EQ(ModeOf(deep), 0700u);
  EXPECT_EQ(ModeOf(t / "a/b"), 0700u);  // Missing parents are made private too.
  ASSERT_EQ(::chmod(deep.c_str(), 0755), 0);
  ASSERT_OK(PrivateFolder(deep));
  EXPECT_EQ(ModeOf(deep), 0700u);
  ASSERT_EQ(::chmod(t.path().c_str(), 0755), 0);  // An existing parent is not ours to change.
  ASSERT_OK(PrivateFolder(t / "other"));
  EXPECT_EQ(ModeOf(t.path()), 0755u);
  testutil::WriteFile(t / "file", "x");
  EXPECT_FALSE(PrivateFolder(t / "file").ok());
}

// The trim at a process's start runs at most once per kStartTrimEverySec, said by a stamp
// file; a missing, old or future stamp asks for it.
TEST(CacheDirTest, StartTrimIsDueOncePerPeriod) {
  testutil::TempDir t;
  const std::string stamp = t / ".trimmed";
  EXPECT_TRUE(StartTrimDue(t.path()));  // No stamp yet: due, and stamped.
  EXPECT_EQ(ModeOf(stamp), 0600u);
  EXPECT_FALSE(StartTrimDue(t.path()));
  EXPECT_FALSE(StartTrimDue(t.path()));
  auto set_age = [&](int64_t seconds) {
    struct timespec ts[2] = {{::time(nullptr) - seconds, 0}, {::time(nullptr) - seconds, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, stamp.c_str(), ts, 0), 0);
  };
  set_age(kStartTrimEverySec - 100);
  EXPECT_FALSE(StartTrimDue(t.path()));
  set_age(kStartTrimEverySec + 1);
  EXPECT_TRUE(StartTrimDue(t.path()));  // Old: due, and stamped anew.
  EXPECT_FALSE(StartTrimDue(t.path()));
  set_age(-24 * 3600);  // A clock set back must not stop trims for a day.
  EXPECT_TRUE(StartTrimDue(t.path()));
  ASSERT_EQ(::unlink(stamp.c_str()), 0);
  ASSERT_EQ(::mkdir(stamp.c_str(), 0700), 0);  // Not a file: due every time, nothing breaks.
  EXPECT_TRUE(StartTrimDue(t.path()));
  EXPECT_TRUE(StartTrimDue(t.path()));
}

TEST(CacheDirTest, AnotherUsersFolderIsRefusedSayingWhy) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder away";
  testutil::TempDir t;
  const std::string dir = t / "theirs";
  ASSERT_OK(PrivateFolder(dir));
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  Status s = PrivateFolder(dir);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("belongs to uid 65534"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("STITCH_CACHE_DIR"), std::string::npos);
}

TEST(CacheDirTest, CachesWritePrivateFilesInPrivateFolders) {
  testutil::TempDir t;
  ManifestCache cache(t / "manifests", uint64_t{1} << 30);
  auto m = ParseManifest(
      std::string("<config><version>1</version><timestamp>2024-01-01 00:00:00</timestamp>"
                  "<uuid>00000000-0000-0000-0000-000000000001</uuid><contents/></config>"),
      "b");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  cache.Store(ManifestIdentity{1, 2, 3, {}, {}}, **m);
  cache.StoreIndex("key", "bytes");
  auto blocks = BlockCache::Open(t / "blocks", 1 << 24);
  ASSERT_TRUE(blocks);
  blocks->Put("http://h/b/k\netag", 0, "block bytes");
  ExpectPrivate(t / "manifests");
  ExpectPrivate(t / "blocks");
  // An older, too open folder of blocks is tightened when the cache is opened again.
  ASSERT_EQ(::chmod((t / "blocks").c_str(), 0755), 0);
  for (const auto& e : fs::directory_iterator(t / "blocks")) ::chmod(e.path().c_str(), 0755);
  ASSERT_TRUE(BlockCache::Open(t / "blocks", 1 << 24));
  ExpectPrivate(t / "blocks");
}

TEST(CacheDirTest, AManifestWhoseLocatorHoldsCredentialsIsNotCached) {
  testutil::TempDir t;
  ManifestCache cache(t / "manifests", uint64_t{1} << 30);
  auto m = ParseManifest(
      std::string("<config><version>1</version><timestamp>2024-01-01 00:00:00</timestamp>"
                  "<uuid>00000000-0000-0000-0000-000000000001</uuid>"
                  "<base_backup>S3('http://h:1/b/base', 'AKID', 'TOPSECRET')</base_backup>"
                  "<base_backup_uuid>00000000-0000-0000-0000-000000000002</base_backup_uuid>"
                  "<contents/></config>"),
      "b");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const ManifestIdentity id{1, 2, 3, {}, {}};
  cache.Store(id, **m);
  EXPECT_EQ(cache.Load(id), nullptr);
  EXPECT_FALSE(fs::exists(t / "manifests") && !fs::is_empty(t / "manifests"));
}

}  // namespace
}  // namespace stitchfs::engine
