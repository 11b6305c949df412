#include "engine/base/polled_read.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "engine/base/unique_fd.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

class PolledReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = testutil::RandomBytes(1 << 20, 3);
    path_ = dir_.path() + "/f";
    testutil::WriteFile(path_, bytes_);
    fd_ = UniqueFd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd_);
  }
  void TearDown() override { SetReadPolling({}); }
  // Puts the file's pages out of the page cache (written back first), so reads go to the disk.
  void Evict() {
    ASSERT_EQ(::fdatasync(fd_.get()), 0);
    ASSERT_EQ(::posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_DONTNEED), 0);
  }
  std::string Read(uint64_t offset, size_t n, Status* s) {
    std::string got(n, '\0');
    *s = PolledRead(fd_.get(), offset, {got.data(), got.size()}, "f");
    return got;
  }

  testutil::TempDir dir_;
  std::string bytes_, path_;
  UniqueFd fd_;
};

TEST_F(PolledReadTest, ReadsExactBytesPolledOrNot) {
  for (const ReadPolling& p : {ReadPolling{}, ReadPolling{64 << 10, std::chrono::microseconds(200)},
                               ReadPolling{0, std::chrono::microseconds(1)}}) {
    SetReadPolling(p);
    for (uint64_t off : {uint64_t{0}, uint64_t{4096 * 7 + 5}, uint64_t{(1 << 20) - 4096}}) {
      Evict();
      Status s;
      EXPECT_EQ(Read(off, 4096, &s), bytes_.substr(off, 4096)) << off;
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    Evict();
    Status s;
    EXPECT_EQ(Read(1000, 300000, &s), bytes_.substr(1000, 300000)) << "longer than max_bytes";
    EXPECT_TRUE(s.ok());
  }
}

TEST_F(PolledReadTest, AHalfCachedReadGetsTheRestToo) {
  SetReadPolling({64 << 10, std::chrono::microseconds(500)});
  Evict();
  std::string head(8192, '\0');
  ASSERT_EQ(::pread(fd_.get(), head.data(), head.size(), 8192), 8192);  // Pages 2-3 cached.
  Status s;
  EXPECT_EQ(Read(4096, 32768, &s), bytes_.substr(4096, 32768));
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(PolledReadTest, AFileEndingFirstIsDamagedAsWithPread) {
  SetReadPolling({64 << 10, std::chrono::microseconds(200)});
  Status s;
  Read((1 << 20) - 100, 4096, &s);
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.ToString();
}

TEST_F(PolledReadTest, AnFdThatCannotReadIsAnIOError) {
  SetReadPolling({64 << 10, std::chrono::microseconds(200)});
  UniqueFd w(::open(path_.c_str(), O_WRONLY | O_CLOEXEC));
  std::string got(4096, '\0');
  Status s = PolledRead(w.get(), 0, {got.data(), got.size()}, "f");
  EXPECT_EQ(s.code(), ErrorCode::kIOError);
}

}  // namespace
}  // namespace stitchfs::engine
