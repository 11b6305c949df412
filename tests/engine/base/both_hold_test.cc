#include "engine/base/both_hold.h"

#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <thread>

namespace stitchfs::engine {
namespace {

TEST(BothHoldTest, HoldsOnlyWhenBothHold) {
  for (const bool a : {false, true}) {
    for (const bool b : {false, true}) {
      EXPECT_EQ(BothHold([a] { return a; }, [b] { return b; }), a && b) << a << b;
    }
  }
}

TEST(BothHoldTest, TheOtherRunsOnAThreadOfItsOwnAndBothRunToTheEnd) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id here, other;
  std::atomic<int> ran{0};
  EXPECT_FALSE(BothHold(
      [&] {
        here = std::this_thread::get_id();
        ++ran;
        return false;
      },
      [&] {
        other = std::this_thread::get_id();
        ++ran;
        return true;
      }));
  EXPECT_EQ(ran.load(), 2);
  EXPECT_EQ(here, caller);
  EXPECT_NE(other, caller);
}

TEST(BothHoldTest, WhatEitherThrowsReachesTheCallerAfterBothEnded) {
  std::atomic<bool> other_ended{false};
  EXPECT_THROW(BothHold([]() -> bool { throw std::bad_alloc(); },
                        [&] {
                          std::this_thread::sleep_for(std::chrono::milliseconds(20));
                          other_ended = true;
                          return true;
                        }),
               std::bad_alloc);
  EXPECT_TRUE(other_ended.load());
  EXPECT_THROW(BothHold([] { return true; }, []() -> bool { throw std::bad_alloc(); }),
               std::bad_alloc);
}

}  // namespace
}  // namespace stitchfs::engine
