#include "engine/write/snapshot_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "engine/format/manifest_reader.h"
#include "engine/read/open_resolved.h"
#include "engine/read/restore.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"
#include "tests/testutil/tree.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {
namespace {

using testutil::ReadFile;
using testutil::TempDir;
using testutil::WriteFile;

class WriterTest : public ::testing::Test {
 protected:
  std::string Src(const std::string& rel = "") const {
    return rel.empty() ? dir_ / "src" : dir_ / ("src/" + rel);
  }

  StatusOr<BackupSummary> Backup(const std::string& name, const std::string& base = "",
                                 std::vector<std::string> immutable = {}) {
    BackupOptions o;
    o.chain = testutil::LocalChain();
    o.source = Src();
    o.dest = dir_ / name;
    o.base = base.empty() ? "" : dir_ / base;
    o.immutable_globs = std::move(immutable);
    o.jobs = 2;
    return WriteBackup(o, nullptr);
  }

  std::shared_ptr<const ResolvedBackup> Open(const std::string& name) {
    auto c = OpenResolved(dir_ / name, testutil::LocalChain());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : nullptr;
  }

  FileEntry Entry(const std::string& backup, const std::string& name) {
    auto chain = Open(backup);
    const Manifest& m = chain->top().manifest();
    auto idx = m.FindByName(name);
    EXPECT_TRUE(idx.has_value()) << name;
    keep_ = chain;
    return m.entry(*idx);
  }

  std::string Restored(const std::string& backup) {
    auto chain = Open(backup);
    RestoreOptions o;
    o.target = dir_ / ("restored-" + backup);
    auto r = RestoreBackup(*chain, o, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return o.target;
  }

  bool HasDataFile(const std::string& backup, const std::string& name) {
    return fs::exists(dir_ / (backup + "/" + name));
  }

  TempDir dir_;
  std::shared_ptr<const ResolvedBackup> keep_;
};

TEST_F(WriterTest, AppendStoresExactlyTheTail) {
  const std::string head = testutil::RandomBytes(100000, 1), tail = "appended line\n";
  WriteFile(Src("log/app.log"), head);
  ASSERT_TRUE(Backup("b0").ok());
  WriteFile(Src("log/app.log"), head + tail);
  auto s = Backup("b1", "b0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(fs::file_size(dir_ / "b1/log/app.log"), tail.size());
  EXPECT_EQ(s->bytes_stored, tail.size());
  EXPECT_EQ(s->bytes_from_base_prefix, head.size());
  FileEntry e = Entry("b1", "log/app.log");
  EXPECT_EQ(e.base_size, head.size());
  EXPECT_EQ(ReadFile(Restored("b1") + "/log/app.log"), head + tail);
}

TEST_F(WriterTest, UnchangedAndRenamedStoreNothing) {
  WriteFile(Src("a"), "unchanged content");
  WriteFile(Src("old-name"), "renamed content");
  ASSERT_TRUE(Backup("b0").ok());
  fs::rename(Src("old-name"), Src("new-name"));
  auto s = Backup("b1", "b0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->bytes_stored, 0u);
  EXPECT_EQ(s->data_files, 0u);
  EXPECT_FALSE(HasDataFile("b1", "a"));
  EXPECT_FALSE(HasDataFile("b1", "new-name"));
  EXPECT_EQ(Entry("b1", "new-name").base_size, 15u);
  EXPECT_EQ(ReadFile(Restored("b1") + "/new-name"), "renamed content");
}

TEST_F(WriterTest, ShrunkRewrittenAndMismatchedPrefixAreStoredWhole) {
  WriteFile(Src("shrunk"), "0123456789");
  WriteFile(Src("rewritten"), "aaaaaaaaaa");
  WriteFile(Src("grown-but-changed"), "prefix-one");
  ASSERT_TRUE(Backup("b0").ok());
  WriteFile(Src("shrunk"), "01234");
  WriteFile(Src("rewritten"), "bbbbbbbbbb");
  WriteFile(Src("grown-but-changed"), "PREFIX-one and more");
  auto s = Backup("b1", "b0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (const char* name : {"shrunk", "rewritten", "grown-but-changed"}) {
    EXPECT_EQ(Entry("b1", name).base_size, 0u) << name;
    EXPECT_EQ(fs::file_size(dir_ / (std::string("b1/") + name)), fs::file_size(Src(name))) << name;
  }
  EXPECT_EQ(s->bytes_stored, 5u + 10u + 19u);
  const std::string out = Restored("b1");
  EXPECT_EQ(ReadFile(out + "/grown-but-changed"), "PREFIX-one and more");
}

TEST_F(WriterTest, DedupAndEmptyFiles) {
  WriteFile(Src("x/one"), "identical bytes");
  WriteFile(Src("y/two"), "identical bytes");
  WriteFile(Src("z/empty"), "");
  auto s = Backup("b0");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->data_files, 1u);
  EXPECT_EQ(s->bytes_deduplicated, 15u);
  EXPECT_TRUE(HasDataFile("b0", "x/one"));
  EXPECT_FALSE(HasDataFile("b0", "y/two"));
  EXPECT_FALSE(HasDataFile("b0", "z/empty"));
  EXPECT_EQ(Entry("b0", "y/two").data_file, "x/one");
  EXPECT_EQ(testutil::DescribeTree(Restored("b0")), testutil::DescribeTree(Src()));
}

TEST_F(WriterTest, ImmutableFilesNeverGetAPrefix) {
  WriteFile(Src("part.bin"), "immutable");
  ASSERT_TRUE(Backup("b0").ok());
  WriteFile(Src("part.bin"), "immutable, and then appended");
  ASSERT_TRUE(Backup("b1", "b0", {"*.bin"}).ok());
  EXPECT_EQ(Entry("b1", "part.bin").base_size, 0u);
}

TEST_F(WriterTest, ImmutableFileGrowingWhileReadFailsTheBackup) {
  WriteFile(Src("big.bin"), testutil::RandomBytes(64 << 20, 3));
  std::atomic<bool> stop{false};
  std::thread appender([&] {
    std::ofstream out(Src("big.bin"), std::ios::app | std::ios::binary);
    while (!stop) out.write("more", 4).flush();
  });
  auto s = Backup("b0", "", {"*.bin"});
  stop = true;
  appender.join();
  EXPECT_EQ(s.status().code(), ErrorCode::kExpectedEndOfFile) << s.status().ToString();
  EXPECT_NE(s.status().message().find("big.bin"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "b0")) << "a failed backup leaves nothing behind";
}

TEST_F(WriterTest, MetadataSymlinksFoldersAndHardLinksRoundTrip) {
  WriteFile(Src("a/file"), "data");
  WriteFile(Src("a/private"), "secret");
  ::chmod(Src("a/private").c_str(), 0600);
  fs::create_directories(Src("empty/dir"));
  fs::create_symlink("../a/file", Src("a/link"));
  fs::create_symlink("/nonexistent/target", Src("dangling"));
  fs::create_hard_link(Src("a/file"), Src("hard"));
  ::chown(Src("a/file").c_str(), 1234, 5678);
  struct timespec t[2] = {{1000000000, 123456789}, {1000000000, 123456789}};
  ::utimensat(AT_FDCWD, Src("a/private").c_str(), t, 0);
  ::utimensat(AT_FDCWD, Src("empty/dir").c_str(), t, 0);
  ASSERT_TRUE(Backup("b0").ok());
  EXPECT_EQ(testutil::DescribeTree(Restored("b0")), testutil::DescribeTree(Src()));
}

TEST_F(WriterTest, ManifestFollowsClickHouseReaderRules) {
  WriteFile(Src("f"), "x");
  fs::create_directories(Src("d"));
  fs::create_symlink("f", Src("l"));
  ASSERT_TRUE(Backup("b0").ok());
  const std::string xml = ReadFile(dir_ / "b0/.backup");
  // Header first, nodes only after </contents>, entries only for regular files.
  EXPECT_EQ(xml.rfind("<config><version>1</version><deduplicate_files>1</deduplicate_files>", 0),
            0u);
  EXPECT_LT(xml.find("<stitchfs_checksum>"), xml.find("<contents>"));
  EXPECT_GT(xml.find("<stitchfs_dir>"), xml.find("</contents>"));
  EXPECT_GT(xml.find("<stitchfs_symlink>"), xml.find("</contents>"));
  auto m = ParseManifest(xml, "b0");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->num_entries(), 1u);
  EXPECT_EQ((*m)->num_nodes(), 2u);
  EXPECT_FALSE(fs::exists(dir_ / "b0/.lock"));
  EXPECT_FALSE(fs::exists(dir_ / "b0/.stitch-tmp"));
}

TEST_F(WriterTest, AClickHouseShapedTreeGetsClickHouseChecksums) {
  WriteFile(Src("data/db/t/all_1_1_0/data.bin"), "Some text");
  WriteFile(Src("plain.txt"), "x");
  auto plain = Backup("plain");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->algorithm, ChecksumAlgorithm::kXxh3) << "no metadata/*.sql: XXH3";
  WriteFile(Src("metadata/db/t.sql"), "ATTACH TABLE t (a UInt8) ENGINE = Log\n");
  auto ch = Backup("ch");
  ASSERT_TRUE(ch.ok());
  EXPECT_EQ(ch->algorithm, ChecksumAlgorithm::kClickHouse);
  EXPECT_EQ(Entry("ch", "data/db/t/all_1_1_0/data.bin").checksum.ToHex(),
            "28b5529750ac210952ffd366774363ed");
  BackupOptions o;
  o.chain = testutil::LocalChain();
  o.source = Src();
  o.dest = dir_ / "forced";
  o.algorithm = ChecksumAlgorithm::kXxh3;
  auto forced = WriteBackup(o, nullptr);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->algorithm, ChecksumAlgorithm::kXxh3) << "--checksum wins";
  fs::remove_all(Src("metadata"));
  WriteFile(Src("shards/1/replicas/1/metadata/db.sql"), "ATTACH DATABASE db\n");
  EXPECT_EQ(Backup("cluster")->algorithm, ChecksumAlgorithm::kClickHouse);
}

TEST_F(WriterTest, BaseLocatorIsWhatClickHouseResolvesWithoutHelp) {
  WriteFile(Src("log.bin"), "one");
  ASSERT_TRUE(Backup("root/st/b1").ok());
  auto next = [&](const std::string& name, const std::string& base, const std::string& root,
                  const std::string& named) {
    WriteFile(Src("log.bin"), ReadFile(Src("log.bin")) + " more");
    BackupOptions o;
    o.chain = testutil::LocalChain();
    o.source = Src();
    o.dest = dir_ / name;
    o.base = dir_ / base;
    o.base_locator = named;
    o.chain.locators.backups_root = root;
    EXPECT_TRUE(WriteBackup(o, nullptr).ok());
    return ReadFile(dir_ / (name + "/.backup"));
  };
  // Under the backups root: relative to it (ClickHouse's meaning of a relative File()).
  EXPECT_NE(next("root/st/b2", "root/st/b1", dir_ / "root", "")
                .find("<base_backup>File(&apos;st/b1&apos;)</base_backup>"),
            std::string::npos);
  // Named through a disk: the same Disk() locator, its path normal.
  EXPECT_NE(next("root/st/b3", "root/st/b2", "", "Disk('backups', './st//b2/')")
                .find("<base_backup>Disk(&apos;backups&apos;, &apos;st/b2&apos;)</base_backup>"),
            std::string::npos);
  // A root that does not hold the base, or none: the absolute path.
  const std::string abs =
      "<base_backup>File(&apos;" + dir_ / "root/st/b3" + "&apos;)</base_backup>";
  EXPECT_NE(next("root/st/b4", "root/st/b3", dir_ / "elsewhere", "").find(abs), std::string::npos);
  EXPECT_EQ(ReadFile(Src("log.bin")), "one more more more");
  auto chain = Open("root/st/b4");
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(chain->depth(), 4u) << "found again: root-relative, Disk() and absolute locators";
}

TEST_F(WriterTest, IncrementalOnAClickHouseBaseUsesClickHouseChecksums) {
  testutil::FixtureBackup ch(dir_ / "ch");
  ch.AddStored("log/data.bin", "Some text");
  ASSERT_OK(ch.Write());
  WriteFile(Src("log/data.bin"), "Some textAppended");
  auto s = Backup("b1", "ch");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  FileEntry e = Entry("b1", "log/data.bin");
  EXPECT_EQ(e.checksum.ToHex(), "5a1f10f638dc7a226231f3fd927d1726");
  EXPECT_EQ(e.base_size, 9u);
  EXPECT_EQ(e.base_checksum.ToHex(), "28b5529750ac210952ffd366774363ed");
  EXPECT_EQ(ReadFile(dir_ / "b1/log/data.bin"), "Appended");
  const std::string xml = ReadFile(dir_ / "b1/.backup");
  EXPECT_EQ(xml.find("<stitchfs_checksum>"), std::string::npos)
      << "ClickHouse's algorithm is the default";
  // An absolute path: what ClickHouse resolves without knowing its backups root.
  EXPECT_NE(xml.find("<base_backup>File(&apos;" + dir_ / "ch" + "&apos;)</base_backup>"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("base_backup_copy_s3_credentials_from_backup"), std::string::npos);
  BackupOptions o;
  o.chain = testutil::LocalChain();
  o.source = Src();
  o.dest = dir_ / "b2";
  o.base = dir_ / "ch";
  o.algorithm = ChecksumAlgorithm::kXxh3;
  EXPECT_EQ(WriteBackup(o, nullptr).status().code(), ErrorCode::kInvalidArgument);
}

// Two writers into one destination at once: one writes the backup, the other is refused and
// leaves nothing (it used to leave a fresh .lock in the finished backup: waiting for the lock,
// it found the winner's unlinked and made its own before seeing the .backup).
TEST_F(WriterTest, TheWriterRefusedByARaceLeavesNoLock) {
  WriteFile(Src("f"), std::string(100000, 'x'));
  for (int round = 0; round < 12; ++round) {
    const std::string name = "race" + std::to_string(round);
    std::optional<StatusOr<BackupSummary>> other_result;
    std::thread other([&] { other_result.emplace(Backup(name)); });
    const StatusOr<BackupSummary> a = Backup(name);
    other.join();
    const StatusOr<BackupSummary>& b = *other_result;
    EXPECT_NE(a.ok(), b.ok()) << a.status().ToString() << " / " << b.status().ToString();
    const Status& refused = a.ok() ? b.status() : a.status();
    EXPECT_EQ(refused.code(), ErrorCode::kBackupAlreadyExists) << refused.ToString();
    EXPECT_FALSE(fs::exists(dir_ / (name + "/.lock"))) << name;
    EXPECT_TRUE(fs::exists(dir_ / (name + "/.backup"))) << name;
  }
}

TEST_F(WriterTest, DestinationRules) {
  WriteFile(Src("f"), "x");
  ASSERT_TRUE(Backup("b0").ok());
  EXPECT_EQ(Backup("b0").status().code(), ErrorCode::kBackupAlreadyExists);
  EXPECT_FALSE(fs::exists(dir_ / "b0/.lock")) << "a refused writer leaves no .lock behind";
  WriteFile(dir_ / "full/somefile", "user data");
  EXPECT_EQ(Backup("full").status().code(), ErrorCode::kBackupAlreadyExists);
  EXPECT_TRUE(fs::exists(dir_ / "full/somefile")) << "never touches a folder it does not own";
  // A .lock nobody holds (its writer died) is taken over with its partial contents.
  WriteFile(dir_ / "dead/.lock", "uuid");
  WriteFile(dir_ / "dead/partial", "half");
  auto s = Backup("dead");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(fs::exists(dir_ / "dead/partial"));
  EXPECT_FALSE(s->warnings.empty());
  EXPECT_TRUE(Open("dead") != nullptr);
}

TEST_F(WriterTest, SkippedAndUnreadableFilesAreReportedNotDropped) {
  WriteFile(Src("ok"), "fine");
  ::mkfifo(Src("fifo").c_str(), 0644);
  WriteFile(Src("locked"), "no access");
  ::chmod(Src("locked").c_str(), 0);
  auto s = Backup("b0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("fifo"), std::string::npos);
  if (::geteuid() != 0) {  // Root reads it anyway.
    ASSERT_EQ(s->missing.size(), 1u);
    EXPECT_EQ(s->missing[0].name, "locked");
  }
}

}  // namespace
}  // namespace stitchfs::engine
