#include "engine/base/lru.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stitchfs::engine {
namespace {

std::vector<int> Keys(const Lru<int, std::string>& lru) {
  std::vector<int> keys;
  lru.ForEach([&](int k, const std::string&) { keys.push_back(k); });
  return keys;
}

TEST(LruTest, GetMakesMostRecentPeekDoesNot) {
  Lru<int, std::string> lru;
  lru.Put(1, "a");
  lru.Put(2, "b");
  lru.Put(3, "c");
  EXPECT_EQ(Keys(lru), (std::vector<int>{3, 2, 1}));
  ASSERT_NE(lru.Get(1), nullptr);
  EXPECT_EQ(*lru.Get(1), "a");
  EXPECT_EQ(Keys(lru), (std::vector<int>{1, 3, 2}));
  ASSERT_NE(lru.Peek(2), nullptr);
  EXPECT_EQ(Keys(lru), (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(lru.Get(9), nullptr);
  EXPECT_EQ(lru.Peek(9), nullptr);
}

TEST(LruTest, PutReplacesAndWeighs) {
  Lru<int, std::string> lru;
  lru.Put(1, "a", 10);
  lru.Put(2, "b", 5);
  EXPECT_EQ(lru.weight(), 15u);
  lru.Put(1, "z", 3);
  EXPECT_EQ(lru.size(), 2u);
  EXPECT_EQ(lru.weight(), 8u);
  EXPECT_EQ(*lru.Peek(1), "z");
  EXPECT_TRUE(lru.Erase(1));
  EXPECT_FALSE(lru.Erase(1));
  EXPECT_EQ(lru.weight(), 5u);
  lru.Clear();
  EXPECT_EQ(lru.size(), 0u);
  EXPECT_EQ(lru.weight(), 0u);
}

TEST(LruTest, TrimRemovesOldestFirstWithinLimits) {
  Lru<int, std::string> lru;
  for (int k = 1; k <= 5; ++k) lru.Put(k, std::to_string(k), 10);
  lru.Get(1);  // 1 is now the most recent; 2 the oldest.
  std::vector<int> gone;
  const size_t n = lru.Trim(
      {.max_entries = 3}, [](int, const std::string&) { return false; },
      [&](int k, const std::string& v) {
        EXPECT_EQ(v, std::to_string(k));
        gone.push_back(k);
      });
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(gone, (std::vector<int>{2, 3}));
  EXPECT_EQ(Keys(lru), (std::vector<int>{1, 5, 4}));
  EXPECT_EQ(lru.weight(), 30u);
  lru.Trim({.max_weight = 15});
  EXPECT_EQ(Keys(lru), (std::vector<int>{1}));
}

TEST(LruTest, TrimKeepsMinimumAndSkipsEntriesInUse) {
  Lru<int, std::string> lru;
  lru.Put(1, "big", 100);
  lru.Trim({.max_weight = 10, .min_entries = 1});
  EXPECT_EQ(lru.size(), 1u);  // Kept: the one just given.
  lru.Put(2, "b", 100);
  lru.Put(3, "c", 100);
  // 1 (the oldest) is in use: 2 goes instead, then nothing else may.
  lru.Trim(
      {.max_weight = 200}, [](int k, const std::string&) { return k == 1; },
      [](int, const std::string&) {});
  EXPECT_EQ(Keys(lru), (std::vector<int>{3, 1}));
  lru.Trim(
      {.max_entries = 0}, [](int, const std::string&) { return true; },
      [](int, const std::string&) {});
  EXPECT_EQ(lru.size(), 2u);  // Everything in use: nothing removed, no endless loop.
}

}  // namespace
}  // namespace stitchfs::engine
