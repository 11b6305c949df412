#include "engine/base/concat_file.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "engine/backends/routing_storage.h"
#include "engine/read/open_resolved.h"
#include "engine/read/resolved_backup.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

// An in-memory file (optionally shorter than it claims, to simulate truncation).
class MemFile final : public RandomAccessFile {
 public:
  explicit MemFile(std::string data, uint64_t claimed = UINT64_MAX)
      : data_(std::move(data)), claimed_(claimed == UINT64_MAX ? data_.size() : claimed) {}
  uint64_t size() const override { return claimed_; }

 protected:
  Status ReadExact(uint64_t off, std::span<char> dst) const override {
    if (off + dst.size() > data_.size()) return Status::BackupDamaged("mem file truncated");
    std::copy_n(data_.data() + off, dst.size(), dst.data());
    return Status::OK();
  }

 private:
  std::string data_;
  uint64_t claimed_;
};

TEST(ConcatFileTest, ReadsAcrossBoundariesAndDropsEmptySegments) {
  auto a = std::make_shared<MemFile>("xxHELLO");
  auto b = std::make_shared<MemFile>("");
  auto c = std::make_shared<MemFile>(" WORLD!yy");
  ConcatFile f({{a, 2, 5}, {b, 0, 0}, {c, 0, 7}});
  EXPECT_EQ(f.size(), 12u);
  EXPECT_EQ(f.segments().size(), 2u);
  std::string buf(100, '#');
  EXPECT_EQ(*f.ReadAt(0, buf), 12u);
  EXPECT_EQ(buf.substr(0, 12), "HELLO WORLD!");
  EXPECT_EQ(*f.ReadAt(3, std::span<char>(buf.data(), 4)), 4u);
  EXPECT_EQ(buf.substr(0, 4), "LO W");
  EXPECT_EQ(*f.ReadAt(12, buf), 0u);
  EXPECT_EQ(*f.ReadAt(1000, buf), 0u);
  EXPECT_EQ(*f.ReadAt(5, std::span<char>()), 0u);
}

TEST(ConcatFileTest, TruncatedSegmentIsDamage) {
  auto a = std::make_shared<MemFile>("abc", 10);
  auto b = std::make_shared<MemFile>("0123456789");
  ConcatFile f({{a, 0, 10}, {b, 0, 10}});
  std::string buf(20, '\0');
  EXPECT_EQ(f.ReadAt(0, buf).status().code(), ErrorCode::kBackupDamaged);
  EXPECT_EQ(*f.ReadAt(10, buf), 10u);
}

TEST(ConcatFileTest, EmptyFile) {
  ConcatFile f({});
  std::string buf(4, '\0');
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(*f.ReadAt(0, buf), 0u);
}

// Random ranges of a file stitched over a 12-deep chain, from 8 threads at once, compared
// with the original bytes.
TEST(ConcatFileTest, RandomConcurrentReadsOfAStitchedChainMatchTheOriginal) {
  testutil::TempDir dir;
  std::string content;
  std::vector<std::unique_ptr<testutil::FixtureBackup>> chain;
  std::mt19937 rng(42);
  for (int i = 0; i < 12; ++i) {
    const size_t base_size = content.size();
    content += testutil::RandomBytes(1 + rng() % 9000, 100 + i);
    auto b = std::make_unique<testutil::FixtureBackup>(dir / ("b" + std::to_string(i)),
                                                       ChecksumAlgorithm::kClickHouse);
    if (i == 0) {
      b->AddStored("grow.log", content);
    } else {
      b->SetBase(*chain.back());
      b->AddStitched("grow.log", content, base_size);
    }
    ASSERT_OK(b->Write());
    chain.push_back(std::move(b));
  }
  // Fewer open data files than the 12: reads must reopen as needed.
  ChainOptions options = testutil::LocalChain(/*max_open_files=*/4);
  auto opened = OpenResolved(chain.back()->dir(), options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto file = (*opened)->OpenEntry(0);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ((*file)->size(), content.size());
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 r(t);
      std::string buf;
      for (int i = 0; i < 2000; ++i) {
        uint64_t off = r() % (content.size() + 100);
        buf.assign(r() % 20000, '\0');
        auto n = (*file)->ReadAt(off, buf);
        size_t expect = off >= content.size() ? 0 : std::min(buf.size(), content.size() - off);
        if (!n.ok() || *n != expect ||
            (expect > 0 && buf.compare(0, expect, content, off, expect) != 0)) {
          ++mismatches;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_LE(
      dynamic_cast<const RoutingStorage&>((*opened)->storage()).local().fd_cache().open_count(),
      4u);
}

}  // namespace
}  // namespace stitchfs::engine
