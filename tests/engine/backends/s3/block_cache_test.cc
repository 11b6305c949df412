#include "engine/backends/s3/block_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace stitchfs::engine {
namespace {

class BlockCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/block_cache_" + std::to_string(::getpid()) + "_" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string Bytes(char c, size_t n) { return std::string(n, c); }
  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    for (auto& e : std::filesystem::recursive_directory_iterator(dir_)) {
      if (e.is_regular_file()) out.push_back(e.path().string());
    }
    return out;
  }
  std::string dir_;
};

TEST_F(BlockCacheTest, KeepsBlocksByObjectVersionAndIndex) {
  auto cache = BlockCache::Open(dir_, 10 << 20);
  ASSERT_TRUE(cache);
  cache->Put("obj\nv1", 0, Bytes('a', 1000));
  std::string got(1000, '\0');
  EXPECT_TRUE(cache->Get("obj\nv1", 0, {got.data(), got.size()}));
  EXPECT_EQ(got, Bytes('a', 1000));
  EXPECT_FALSE(cache->Get("obj\nv2", 0, {got.data(), got.size()})) << "another version";
  EXPECT_FALSE(cache->Get("obj\nv1", 1, {got.data(), got.size()})) << "another block";
  std::string shorter(999, '\0');
  EXPECT_FALSE(cache->Get("obj\nv1", 0, {shorter.data(), shorter.size()})) << "another length";
}

TEST_F(BlockCacheTest, ADamagedBlockIsAMissAndIsRemoved) {
  auto cache = BlockCache::Open(dir_, 10 << 20);
  cache->Put("obj", 7, Bytes('b', 4096));
  auto files = Files();
  ASSERT_EQ(files.size(), 1u);
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-100, std::ios::end);  // A byte of the data (the header holds its checksums).
    f.put('X');
  }
  std::string got(4096, '\0');
  EXPECT_FALSE(cache->Get("obj", 7, {got.data(), got.size()}));
  EXPECT_TRUE(Files().empty());
  cache->Put("obj", 7, Bytes('b', 4096));
  std::filesystem::resize_file(Files()[0], 2000);  // Cut short.
  EXPECT_FALSE(cache->Get("obj", 7, {got.data(), got.size()}));
}

TEST_F(BlockCacheTest, APartOfABlockReadsOnlyItsPiecesAndChecksThem) {
  auto cache = BlockCache::Open(dir_, 10 << 20);
  std::string block(BlockCache::kBlockBytes, '\0');
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 13 % 251);
  cache->Put("big", 1, block);
  std::string part(5000, '\0');
  ASSERT_TRUE(cache->Get("big", 1, block.size(), 300000, {part.data(), part.size()}));
  EXPECT_EQ(part, block.substr(300000, 5000));
  {  // Damage a piece far from the one read: that read still passes; a read of it does not.
    std::fstream f(Files()[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('X');
  }
  EXPECT_TRUE(cache->Get("big", 1, block.size(), 300000, {part.data(), part.size()}));
  EXPECT_FALSE(cache->Get("big", 1, block.size(), block.size() - 5000, {part.data(), part.size()}));
  EXPECT_TRUE(Files().empty()) << "a damaged block is removed";
  cache->Put("big", 1, block);
  EXPECT_FALSE(cache->Get("big", 1, block.size() - 1, 0, {part.data(), part.size()}))
      << "another length";
}

TEST_F(BlockCacheTest, DropRemovesOneBlockOfOneObject) {
  auto cache = BlockCache::Open(dir_, 10 << 20);
  cache->Put("o\nv1", 0, Bytes('a', 1000));
  cache->Put("o\nv1", 1, Bytes('b', 1000));
  EXPECT_TRUE(cache->Drop("o\nv1", 1));
  EXPECT_FALSE(cache->Drop("o\nv1", 1)) << "no longer there";
  EXPECT_FALSE(cache->Drop("o\nv2", 0)) << "another version's";
  std::string got(1000, '\0');
  EXPECT_FALSE(cache->Get("o\nv1", 1, {got.data(), got.size()}));
  EXPECT_TRUE(cache->Get("o\nv1", 0, {got.data(), got.size()}));
  EXPECT_EQ(Files().size(), 1u);
  EXPECT_EQ(cache->bytes(), Files().size() * std::filesystem::file_size(Files()[0]));
}

TEST_F(BlockCacheTest, StaysWithinItsCapacityDroppingTheLeastRecentlyUsed) {
  auto cache = BlockCache::Open(dir_, 3 * 1200);
  std::string got(1000, '\0');
  for (int i = 0; i < 3; ++i) cache->Put("o", i, Bytes('0' + i, 1000));
  EXPECT_TRUE(cache->Get("o", 0, {got.data(), got.size()}));  // 0 is now the newest.
  cache->Put("o", 3, Bytes('3', 1000));
  EXPECT_LE(cache->bytes(), 3u * 1200);
  EXPECT_TRUE(cache->Get("o", 0, {got.data(), got.size()}));
  EXPECT_FALSE(cache->Get("o", 1, {got.data(), got.size()})) << "the least recently used went";
  EXPECT_TRUE(cache->Get("o", 3, {got.data(), got.size()}));
}

TEST_F(BlockCacheTest, AReopenedCacheAdoptsItsBlocksAndItsBound) {
  {
    auto cache = BlockCache::Open(dir_, 10 << 20);
    for (int i = 0; i < 5; ++i) cache->Put("o", i, Bytes('x', 1000));
  }
  std::ofstream(dir_ + "/00/left.tmp123") << "partial";
  auto again = BlockCache::Open(dir_, 2 * 1200);
  EXPECT_LE(again->bytes(), 2u * 1200);
  EXPECT_EQ(Files().size(), 2u) << "the oldest removed, the partial file too";
  EXPECT_FALSE(BlockCache::Open(dir_, 0)) << "capacity 0 is off";
}

}  // namespace
}  // namespace stitchfs::engine
