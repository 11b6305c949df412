// Reading one source file for a backup while it changes: the size taken, what is re-read, what
// is refused, and whose fault a failure is.
#include "engine/write/source_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "engine/backends/local/local_storage.h"
#include "engine/base/unique_fd.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::ReadFile;
using testutil::TempDir;
using testutil::WriteFile;

class SourceReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "src");
    src_ = UniqueFd(::open((dir_ / "src").c_str(), O_RDONLY | O_DIRECTORY));
    std::string notice;
    auto writer =
        LocalStorage::Create()->StartBackup(dir_ / "dest", {testutil::NewUuid(), "", ""}, &notice);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    writer_ = std::move(*writer);
    o_.source_fd = src_.get();
    o_.writer = writer_.get();
    o_.immutable_globs = &immutable_;
  }
  // What the walk saw of `name` now.
  SourceFile Walk(const std::string& name) {
    SourceFile f{name, {}};
    EXPECT_EQ(::lstat((dir_ / ("src/" + name)).c_str(), &f.st), 0);
    return f;
  }
  std::string Src(const std::string& name) { return dir_ / ("src/" + name); }
  std::string Stored(size_t index) {
    return ReadFile(dir_ / ("dest/.stitch-tmp/" + std::to_string(index)));
  }

  TempDir dir_;
  UniqueFd src_;
  std::unique_ptr<BackupWriter> writer_;
  std::vector<std::string> immutable_;
  SourceReadOptions o_;
};

// A file that grew since the walk is taken as it is when opened: appended to, or rewritten
// longer in place (same inode), whose first bytes were never the walk's (cutting it to the
// walk's size stored a state the file never had).
TEST_F(SourceReadTest, AFileThatGrewSinceTheWalkIsTakenAsItIsWhenOpened) {
  WriteFile(Src("app.log"), "0123456789");
  const SourceFile log = Walk("app.log");
  std::FILE* out = std::fopen(Src("app.log").c_str(), "a");
  std::fputs("appended", out);
  std::fclose(out);
  FileResult r = ReadSourceFile(o_, log, 0);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.size, 18u);
  EXPECT_EQ(Stored(0), "0123456789appended");
  Hasher h(o_.algorithm);
  h.Update("0123456789appended");
  EXPECT_EQ(r.pass.checksum, h.Digest());

  WriteFile(Src("config"), "OLD-CONFIG-v1\n");
  const SourceFile config = Walk("config");
  const ino_t ino = config.st.st_ino;
  out = std::fopen(Src("config").c_str(), "w");  // Truncated and written again, in place.
  std::fputs("NEW-CONFIG-v2-longer-lines\n", out);
  std::fclose(out);
  ASSERT_EQ(Walk("config").st.st_ino, ino);
  r = ReadSourceFile(o_, config, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(Stored(1), "NEW-CONFIG-v2-longer-lines\n");
}

TEST_F(SourceReadTest, AReplacedOrShrunkFileIsTakenAsItIsNow) {
  WriteFile(Src("rotated"), "old content, long");
  const SourceFile rotated = Walk("rotated");
  std::filesystem::rename(Src("rotated"), Src("elsewhere"));
  WriteFile(Src("rotated"), "new");
  FileResult r = ReadSourceFile(o_, rotated, 0);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(Stored(0), "new");
  WriteFile(Src("shrunk"), "0123456789");
  const SourceFile shrunk = Walk("shrunk");
  ASSERT_EQ(::truncate(Src("shrunk").c_str(), 4), 0);
  r = ReadSourceFile(o_, shrunk, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(Stored(1), "0123");
}

TEST_F(SourceReadTest, AnythingButARegularFileIsASourceFaultAndNeverBlocks) {
  WriteFile(dir_ / "outside", "secret");
  for (const char* kind : {"fifo", "symlink", "folder", "vanished"}) {
    const std::string name = std::string("swapped-") + kind;
    WriteFile(Src(name), "regular when walked");
    const SourceFile f = Walk(name);
    std::filesystem::remove(Src(name));
    if (std::string(kind) == "fifo") {
      ASSERT_EQ(::mkfifo(Src(name).c_str(), 0644), 0);
    }
    if (std::string(kind) == "symlink")
      std::filesystem::create_symlink(dir_ / "outside", Src(name));
    if (std::string(kind) == "folder") std::filesystem::create_directory(Src(name));
    const auto start = std::chrono::steady_clock::now();
    FileResult r = ReadSourceFile(o_, f, 2);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << kind;
    EXPECT_FALSE(r.status.ok()) << kind;
    EXPECT_EQ(r.fault, PassFault::kSource) << kind;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "dest/.stitch-tmp/2")) << kind;
  }
}

TEST_F(SourceReadTest, AnImmutableFileIsTakenWholeAtItsSizeNow) {
  immutable_.push_back("*.bin");
  WriteFile(Src("part.bin"), "0123456789");
  const SourceFile f = Walk("part.bin");
  std::FILE* out = std::fopen(Src("part.bin").c_str(), "a");
  std::fputs("ab", out);
  std::fclose(out);
  FileResult r = ReadSourceFile(o_, f, 0);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(Stored(0), "0123456789ab");
}

TEST_F(SourceReadTest, AFailureToWriteTheDestinationIsTheDestinationsFault) {
  WriteFile(Src("data"), "some bytes");
  // A destination that is full: staging a data file fails.
  class FullDisk final : public BackupWriter {
   public:
    StatusOr<std::unique_ptr<WritableFile>> CreateStaged(const std::string&,
                                                         const std::string&) override {
      return Status::IOError("create a staged data file", ENOSPC);
    }
    Status DropStaged(const std::string&) override { return Status::OK(); }
    Status Publish(const std::string&, const std::string&) override { return Status::OK(); }
    StatusOr<std::unique_ptr<WritableFile>> CreateDataFile(const std::string&) override {
      return Status::IOError("create", ENOSPC);
    }
    Status Finish(std::string_view) override { return Status::OK(); }
    StatusOr<std::shared_ptr<const RandomAccessFile>> ReadBack(const std::string&,
                                                               uint64_t) override {
      return Status::IOError("read back", EIO);
    }
  } full;
  o_.writer = &full;
  FileResult r = ReadSourceFile(o_, Walk("data"), 0);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.fault, PassFault::kDestination) << r.status.ToString();
}

}  // namespace
}  // namespace stitchfs::engine
