#include "fs/listing_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace stitchfs::fs {
namespace {

// Collects the folders the policy invalidates.
struct Recorder {
  std::mutex mu;
  std::vector<uint64_t> dirs;
  ListingPolicy::Invalidator Fn() {
    return [this](uint64_t d) {
      std::lock_guard<std::mutex> lock(mu);
      dirs.push_back(d);
    };
  }
};

TEST(ListingPolicy, StartsLeanAndSwitchesAtTheFirstFileLookup) {
  ListingPolicy p;
  Recorder r;
  p.Start(r.Fn());
  EXPECT_FALSE(p.FileAttrs());
  p.ListedLean(1);
  p.ListedLean(7);
  EXPECT_FALSE(p.FileAttrs());
  p.FileLookedUp();
  EXPECT_TRUE(p.FileAttrs());
  p.Wait();
  std::sort(r.dirs.begin(), r.dirs.end());
  EXPECT_EQ(r.dirs, (std::vector<uint64_t>{1, 7}));
}

TEST(ListingPolicy, AfterTheSwitchNothingIsRecordedOrInvalidatedAgain) {
  ListingPolicy p;
  Recorder r;
  p.Start(r.Fn());
  p.ListedLean(3);
  p.FileLookedUp();
  p.ListedLean(4);  // A listing that raced with the switch: not remembered.
  p.FileLookedUp();
  p.Wait();
  EXPECT_EQ(r.dirs, (std::vector<uint64_t>{3}));
}

TEST(ListingPolicy, WithoutAnInvalidatorSwitchingStillWorks) {
  ListingPolicy p;  // Never started: nothing to invalidate through.
  p.ListedLean(2);
  p.FileLookedUp();
  EXPECT_TRUE(p.FileAttrs());
}

TEST(ListingPolicy, TooManyLeanFoldersSwitchAndInvalidateThemAll) {
  ListingPolicy p;
  Recorder r;
  p.Start(r.Fn());
  uint64_t n = 0;
  while (!p.FileAttrs() && n < (uint64_t{1} << 22)) p.ListedLean(++n);
  EXPECT_TRUE(p.FileAttrs());
  EXPECT_LT(n, uint64_t{1} << 22);  // The record is bounded.
  p.Wait();
  EXPECT_EQ(r.dirs.size(), n);
}

TEST(ListingPolicy, StopAbandonsInvalidationsUnderWay) {
  ListingPolicy p;
  Recorder r;
  p.Start(r.Fn());
  for (uint64_t d = 1; d <= 100000; ++d) p.ListedLean(d);
  p.FileLookedUp();
  p.Stop();  // Returns without a hang; afterwards no invalidation runs.
  const size_t after_stop = r.dirs.size();
  EXPECT_LE(after_stop, 100000u);
  EXPECT_EQ(r.dirs.size(), after_stop);
}

}  // namespace
}  // namespace stitchfs::fs
