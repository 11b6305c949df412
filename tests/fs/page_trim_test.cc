// PageTrim: mapped pages released a period after requests, and no wake-ups while idle.
#include "fs/page_trim.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace stitchfs::fs {
namespace {

using std::chrono::milliseconds;

// Waits up to 10 s for `trim` to have released at least `n` times.
bool ReleasedAtLeast(const PageTrim& trim, uint64_t n) {
  for (int i = 0; i < 1000 && trim.releases() < n; ++i)
    std::this_thread::sleep_for(milliseconds(10));
  return trim.releases() >= n;
}

TEST(PageTrimTest, ReleasesAfterRequestsAndSleepsWhileIdle) {
  PageTrim trim(milliseconds(20));
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(trim.releases(), 0u) << "no request yet: nothing to release, no round";
  trim.Busy();
  ASSERT_TRUE(ReleasedAtLeast(trim, 1));
  std::this_thread::sleep_for(milliseconds(100));
  const uint64_t after_idle = trim.releases();
  EXPECT_EQ(after_idle, 1u) << "idle after one request: one round";
  // Busy all along: a round each period, however many requests come.
  const auto end = std::chrono::steady_clock::now() + milliseconds(200);
  while (std::chrono::steady_clock::now() < end) trim.Busy();
  ASSERT_TRUE(ReleasedAtLeast(trim, after_idle + 2));
}

TEST(PageTrimTest, StopsPromptlyWhateverItWaitsFor) {
  const auto start = std::chrono::steady_clock::now();
  { PageTrim idle(std::chrono::hours(1)); }
  {
    PageTrim waiting(std::chrono::hours(1));
    waiting.Busy();  // Now in its hour-long wait.
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace stitchfs::fs
