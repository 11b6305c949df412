// The files cache trusts a file's recorded times only when they are clearly older than the
// moment the base began reading (ManifestHeader::read_start_ns): a file changed again after the
// base read it, within one step of its timestamps, keeps them, and must be read again. The
// base's read start is set by rewriting its manifest, so no test waits for a clock.
#include <gtest/gtest.h>

#include <ctime>
#include <regex>

#include "engine/format/manifest_reader.h"
#include "tests/engine/backends/mem/mem_fixture.h"

namespace stitchfs::engine {
namespace {

class FilesCacheTest : public MemStoreTest {
 protected:
  void SetUp() override {
    SetSource({{"a", "alpha"}, {"dir/b", testutil::RandomBytes(70000, 5)}});
    timespec t;
    ::clock_gettime(CLOCK_REALTIME, &t);
    before_ = int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
    Written("b0");
  }
  // b0's manifest as stored, and parsed.
  std::string Xml() { return mem_->Get(At("b0/.backup")).value_or(""); }
  static std::unique_ptr<const Manifest> Parse(const std::string& xml) {
    auto m = ParseManifest(xml, "b0");
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? std::move(*m) : nullptr;
  }
  // b0's <stitchfs_read_start> replaced by `leaf` (empty: removed).
  void SetReadStart(const std::string& leaf) {
    const std::string xml = std::regex_replace(
        Xml(), std::regex("<stitchfs_read_start>[0-9]+</stitchfs_read_start>"), leaf);
    ASSERT_TRUE(mem_->Put(At("b0/.backup"), xml).ok());
  }
  // The latest ctime b0 recorded for a file, in ns.
  int64_t NewestCtime() {
    auto m = Parse(Xml());
    int64_t newest = 0;
    for (size_t i = 0; m && i < m->num_entries(); ++i) {
      const FileEntry e = m->entry(i);
      const FileTime c = e.meta.value_or(PosixMeta{}).ctime;
      newest = std::max(newest, c.sec * 1'000'000'000 + c.nsec);
    }
    return newest;
  }
  // A backup of the unchanged source on b0 with the files cache: the bytes it read.
  uint64_t BytesReadWithFilesCache() {
    BackupOptions o;
    o.source = dir_ / "src";
    o.dest = At("b1");
    o.base = At("b0");
    o.chain.storage = mem_->NewProcess();
    o.jobs = 1;
    o.files_cache = true;
    auto s = WriteBackup(o, nullptr);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(Check(mem_->NewProcess(), At("b1"), src_), "");
    return s.ok() ? s->bytes_read : UINT64_MAX;
  }
  int64_t before_ = 0;
};

TEST_F(FilesCacheTest, ABackupRecordsWhenItBeganReading) {
  auto m = Parse(Xml());
  ASSERT_TRUE(m && m->header().read_start_ns);
  EXPECT_GE(*m->header().read_start_ns, before_);
  EXPECT_LE(*m->header().read_start_ns, NewestCtime() + 1'000'000'000) << "not after the reads";
}

TEST_F(FilesCacheTest, FilesUnchangedSinceLongBeforeTheBaseReadAreTrusted) {
  SetReadStart("<stitchfs_read_start>" + std::to_string(NewestCtime() + 3'600'000'000'000) +
               "</stitchfs_read_start>");
  EXPECT_EQ(BytesReadWithFilesCache(), 0u);
}

TEST_F(FilesCacheTest, FilesChangedJustBeforeTheBaseReadAreReadAgain) {
  SetReadStart("<stitchfs_read_start>" + std::to_string(NewestCtime() + 1'000'000) +
               "</stitchfs_read_start>");
  EXPECT_GE(BytesReadWithFilesCache(), 70000u) << "the newest file, at least, is read";
}

TEST_F(FilesCacheTest, ABaseThatDoesNotSayWhenItReadIsNotTrusted) {
  SetReadStart("");
  EXPECT_FALSE(Parse(Xml())->header().read_start_ns);
  EXPECT_EQ(BytesReadWithFilesCache(), 70005u);
}

}  // namespace
}  // namespace stitchfs::engine
