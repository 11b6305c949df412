#include "engine/backends/s3/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace stitchfs::engine {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(BufferPoolTest, CapacitiesAreWholeHugePagesAlignedToThem) {
  BufferPool pool(64 * kMiB);
  for (size_t n : {size_t{1}, kMiB, 3 * kMiB, 36 * kMiB}) {
    BufferPool::Buffer b = pool.Take(n);
    EXPECT_GE(b.capacity, n);
    EXPECT_EQ(b.capacity % BufferPool::kUnit, 0u);
    EXPECT_LT(b.capacity, n + BufferPool::kUnit);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % BufferPool::kUnit, 0u);
    std::memset(b.data, 0x5a, n);  // All of it is writable (ASan checks the bounds).
    pool.Give(b);
  }
}

TEST(BufferPoolTest, AGivenBufferIsTakenAgain) {
  BufferPool pool(64 * kMiB);
  BufferPool::Buffer a = pool.Take(36 * kMiB);
  pool.Give(a);
  EXPECT_EQ(pool.kept_bytes(), a.capacity);
  BufferPool::Buffer b = pool.Take(35 * kMiB);  // Same size once rounded.
  EXPECT_EQ(b.data, a.data);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  pool.Give(b);
}

// A stream's first window makes small ranges (1, 2, 4, 8, 16 MiB) before full-width ones; kept
// first, they must not stop the pool from keeping the large ones (each object's range would
// then be a fresh allocation, zeroed by the kernel page by page).
TEST(BufferPoolTest, SmallBuffersKeptFirstGiveWayToALargeOne) {
  BufferPool pool(64 * kMiB);
  for (size_t n : {1, 2, 4, 8, 16}) pool.Give(pool.Take(n * kMiB));
  BufferPool::Buffer large = pool.Take(48 * kMiB);
  pool.Give(large);
  EXPECT_LE(pool.kept_bytes(), 64 * kMiB);
  for (int i = 0; i < 3; ++i) {  // One object after another reuses the same buffer.
    BufferPool::Buffer again = pool.Take(47 * kMiB);
    EXPECT_EQ(again.data, large.data);
    pool.Give(again);
  }
}

TEST(BufferPoolTest, ABufferMoreThanTwiceTooLargeIsNotUsedForASmallRange) {
  BufferPool pool(64 * kMiB);
  BufferPool::Buffer large = pool.Take(32 * kMiB);
  pool.Give(large);
  BufferPool::Buffer small = pool.Take(kMiB);
  EXPECT_NE(small.data, large.data);
  EXPECT_EQ(small.capacity, BufferPool::kUnit);
  EXPECT_EQ(pool.kept_bytes(), large.capacity);  // Still kept for the next large range.
  pool.Give(small);
}

TEST(BufferPoolTest, TheBestFitIsTaken) {
  BufferPool pool(64 * kMiB);
  BufferPool::Buffer b8 = pool.Take(8 * kMiB), b6 = pool.Take(6 * kMiB);
  pool.Give(b8);
  pool.Give(b6);
  EXPECT_EQ(pool.Take(5 * kMiB).data, b6.data);
  EXPECT_EQ(pool.Take(5 * kMiB).data, b8.data);
  pool.Give(b6);
  pool.Give(b8);
}

TEST(BufferPoolTest, NothingAboveTheBudgetIsKept) {
  BufferPool pool(8 * kMiB);
  pool.Give(pool.Take(16 * kMiB));
  EXPECT_EQ(pool.kept_bytes(), 0u);
  for (int i = 0; i < 6; ++i) pool.Give(pool.Take(2 * kMiB * static_cast<size_t>(1 + i % 2)));
  EXPECT_LE(pool.kept_bytes(), 8 * kMiB);
}

}  // namespace
}  // namespace stitchfs::engine
