#include "engine/base/polled_read.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "engine/base/concat_file.h"
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
  // Pages of the file in the page cache (mincore of a mapping of it).
  size_t Resident() const {
    void* p = ::mmap(nullptr, bytes_.size(), PROT_READ, MAP_SHARED, fd_.get(), 0);
    if (p == MAP_FAILED) return SIZE_MAX;
    std::vector<unsigned char> in((bytes_.size() + 4095) / 4096);
    const bool ok = ::mincore(p, bytes_.size(), in.data()) == 0;
    ::munmap(p, bytes_.size());
    size_t n = 0;
    for (unsigned char c : in) n += c & 1;
    return ok ? n : SIZE_MAX;
  }
  // True if the file's pages can be put out of the cache and read without waiting here (not
  // tmpfs: its pages are the file; not a kernel without RWF_NOWAIT reads starting the disk).
  bool CanPoll() {
    Evict();
    char c;
    iovec v{&c, 1};
    return Resident() == 0 && ::preadv2(fd_.get(), &v, 1, 0, RWF_NOWAIT) < 0 && errno == EAGAIN;
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

TEST_F(PolledReadTest, AColdReadPollsAndOnlyThen) {
  if (!CanPoll()) GTEST_SKIP() << "pages cannot leave the cache here, or no RWF_NOWAIT reads";
  SetReadPolling({64 << 10, std::chrono::microseconds(1000)});
  Evict();
  uint64_t before = PolledReads();
  Status s;
  EXPECT_EQ(Read(40960, 4096, &s), bytes_.substr(40960, 4096));
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(PolledReads(), before + 1) << "a read of pages not in the cache polled";
  before = PolledReads();
  EXPECT_EQ(Read(40960, 4096, &s), bytes_.substr(40960, 4096));
  EXPECT_EQ(PolledReads(), before) << "pages in the cache: nothing to wait for";
  SetReadPolling({});
  Evict();
  EXPECT_EQ(Read(40960, 4096, &s), bytes_.substr(40960, 4096));
  EXPECT_EQ(PolledReads(), before) << "polling off";
}

// A file read with PolledRead, as a local data file is.
class PolledFile final : public RandomAccessFile {
 public:
  PolledFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  uint64_t size() const override { return size_; }

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    return PolledRead(fd_, offset, dst, "f");
  }

 private:
  const int fd_;
  const uint64_t size_;
};

TEST_F(PolledReadTest, ALongReadOfSmallSegmentsSleepsAsALongReadWould) {
  if (!CanPoll()) GTEST_SKIP() << "pages cannot leave the cache here, or no RWF_NOWAIT reads";
  SetReadPolling({64 << 10, std::chrono::microseconds(1000)});
  // 16 segments of 16 KiB, 64 KiB apart in the file: each piece of a read is small and cold.
  auto file = std::make_shared<const PolledFile>(fd_.get(), bytes_.size());
  std::vector<Segment> segments;
  std::string want;
  for (uint64_t i = 0; i < 16; ++i) {
    segments.push_back({file, i * (64 << 10), 16 << 10});
    want += bytes_.substr(i * (64 << 10), 16 << 10);
  }
  const ConcatFile stitched(std::move(segments));
  Evict();
  uint64_t before = PolledReads();
  std::string got(want.size(), '\0');
  ASSERT_TRUE(stitched.ReadAt(0, got).ok());
  EXPECT_EQ(got, want);
  EXPECT_EQ(PolledReads(), before) << "a 256 KiB read polled for its 16 KiB pieces";
  Evict();
  std::string piece(4096, '\0');
  ASSERT_TRUE(stitched.ReadAt(20 << 10, piece).ok());
  EXPECT_EQ(piece, want.substr(20 << 10, 4096));
  EXPECT_EQ(PolledReads(), before + 1) << "a small read of a stitched file still polls";
  Evict();
  ASSERT_TRUE(stitched.ReadAt((16 << 10) - 2048, piece).ok());  // 2 KiB of two segments each.
  EXPECT_EQ(piece, want.substr((16 << 10) - 2048, 4096));
  EXPECT_GE(PolledReads(), before + 2) << "a small read across two segments polls";
  before = PolledReads();
  Evict();
  Status s;
  EXPECT_EQ(Read(0, 4096, &s), bytes_.substr(0, 4096));
  EXPECT_EQ(PolledReads(), before + 1) << "the scope ended with the stitched read";
  // A stitched read that fails ends its scope too.
  auto longer = std::make_shared<const PolledFile>(fd_.get(), bytes_.size() + 4096);
  const ConcatFile cut({{longer, bytes_.size() - (100 << 10), 104 << 10}, {file, 0, 8192}});
  std::string long_read(112 << 10, '\0');
  EXPECT_EQ(cut.ReadAt(0, long_read).status().code(), ErrorCode::kBackupDamaged)
      << "a segment past its file's end";
  before = PolledReads();
  Evict();
  EXPECT_EQ(Read(0, 4096, &s), bytes_.substr(0, 4096));
  EXPECT_EQ(PolledReads(), before + 1) << "the failed stitched read's scope ended";
}

TEST_F(PolledReadTest, AHalfCachedReadGetsTheRestToo) {
  if (!CanPoll()) GTEST_SKIP() << "pages cannot leave the cache here, or no RWF_NOWAIT reads";
  SetReadPolling({64 << 10, std::chrono::microseconds(1000)});
  Evict();
  std::string head(8192, '\0');
  ASSERT_EQ(::pread(fd_.get(), head.data(), head.size(), 8192), 8192);  // Pages 2-3 cached.
  Status s;  // The first answer is the cached pages alone; the rest is polled for.
  EXPECT_EQ(Read(8192, 32768, &s), bytes_.substr(8192, 32768));
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
