#include "fs/sequential_check.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "tests/fs/view_fixture.h"

namespace stitchfs::fs::fstest {
namespace {

using engine::ErrorCode;

class SequentialCheckTest : public ViewTest {
 protected:
  // A check of log/app.log (stitched from three backups) of `chain`.
  std::unique_ptr<SequentialCheck> CheckOf(std::shared_ptr<const engine::ResolvedBackup> chain) {
    const size_t entry = *chain->top().manifest().FindByName("log/app.log");
    return std::make_unique<SequentialCheck>(
        std::make_unique<engine::ContentCheck>(*chain, entry, chain));
  }
  std::string Content() const { return a_ + b_ + c_; }
};

TEST_F(SequentialCheckTest, ReadsInOrderAndOutOfOrderPass) {
  auto check = CheckOf(backup_);
  const std::string all = Content();
  check->Begin(0);
  ASSERT_OK(check->Accept(0, std::string_view(all).substr(0, 2048)));
  // The next two reads served by two threads, the later one done first: it waits for the other.
  check->Begin(2048);
  check->Begin(4096);
  engine::Status later;
  std::thread t([&] { later = check->Accept(4096, std::string_view(all).substr(4096)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_OK(check->Accept(2048, std::string_view(all).substr(2048, 2048)));
  t.join();
  EXPECT_OK(later);
}

TEST_F(SequentialCheckTest, TheReadThatCompletesABadFileFails) {
  std::string base = testutil::ReadFile(dir_ / "we\"ird \\ dir/b0/log/app.log");
  base[100] = static_cast<char>(base[100] ^ 1);
  testutil::WriteFile(dir_ / "we\"ird \\ dir/b0/log/app.log", base);
  const std::string bad = base + b_ + c_;
  auto check = CheckOf(backup_);
  ASSERT_OK(check->Accept(0, std::string_view(bad).substr(0, 5000)));
  ASSERT_OK(check->Accept(5000, std::string_view(bad).substr(5000, 3000)));
  bool found_now = false;
  engine::Status last = check->Accept(8000, std::string_view(bad).substr(8000), &found_now);
  EXPECT_EQ(last.code(), ErrorCode::kBackupDamaged);
  EXPECT_TRUE(found_now);
  EXPECT_NE(last.message().find("b0, bytes [0, 8000)"), std::string::npos) << last.ToString();
  found_now = false;
  EXPECT_EQ(check->Accept(8000, std::string_view(bad).substr(8000), &found_now).code(),
            ErrorCode::kBackupDamaged)
      << "a re-read of the end fails again";
  EXPECT_FALSE(found_now) << "with the verdict found before";
  EXPECT_OK(check->Accept(0, std::string_view(bad).substr(0, 100)));  // Other reads do not.
}

TEST_F(SequentialCheckTest, AMiddleReadDoneEarlyIsKeptUntilItsTurn) {
  std::string base = testutil::ReadFile(dir_ / "we\"ird \\ dir/b0/log/app.log");
  base[3000] = static_cast<char>(base[3000] ^ 1);  // Inside the read done early.
  const std::string bad = base + b_ + c_;
  auto check = CheckOf(backup_);
  check->Begin(0);
  check->Begin(2048);
  check->AcceptAnswered(2048, std::string_view(bad).substr(2048, 2048));  // Early: kept.
  ASSERT_OK(check->Accept(0, std::string_view(bad).substr(0, 2048)));
  EXPECT_EQ(check->Accept(4096, std::string_view(bad).substr(4096)).code(),
            ErrorCode::kBackupDamaged);
  // A later open of the same file, told what this one found: its end fails at once.
  SequentialCheck again(std::make_unique<engine::ContentCheck>(
                            *backup_, *backup_->top().manifest().FindByName("log/app.log")),
                        check->result());
  EXPECT_EQ(again.Accept(4096, std::string_view(bad).substr(4096)).code(),
            ErrorCode::kBackupDamaged);
  EXPECT_OK(again.Accept(0, std::string_view(bad).substr(0, 2048)));
}

TEST_F(SequentialCheckTest, AReadAheadHandsItsBufferOver) {
  const std::string all = Content();
  auto check = CheckOf(backup_);
  ReadBuffer early;
  early.Reserve(2048);
  std::memcpy(early.data.get(), all.data() + 2048, 2048);
  check->Begin(0);
  check->Begin(2048);
  check->AcceptAnswered(2048, early, 2048);
  EXPECT_EQ(early.data, nullptr) << "kept: the thread takes another buffer";
  early.Reserve(2048);  // (From the pool or new.)
  EXPECT_GE(early.capacity, 2048u);
  ReadBuffer first;
  first.Reserve(2048);
  std::memcpy(first.data.get(), all.data(), 2048);
  check->AcceptAnswered(0, first, 2048);
  EXPECT_NE(first.data, nullptr) << "fed in order: the buffer stays the thread's";
  EXPECT_OK(check->Accept(4096, std::string_view(all).substr(4096)));
  ASSERT_TRUE(check->result().has_value());
  EXPECT_OK(*check->result());
}

// A small read ahead, in a thread's buffer grown large by an earlier read, is copied to be
// kept: the large buffer stays the thread's, not held (uncounted) for the small read's turn.
TEST_F(SequentialCheckTest, ASmallReadInALargeBufferIsCopiedToBeKept) {
  const std::string all = Content();
  auto check = CheckOf(backup_);
  ReadBuffer large;
  large.Reserve(1 << 20);
  std::memcpy(large.data.get(), all.data() + 2048, 2048);
  check->Begin(0);
  check->Begin(2048);
  check->AcceptAnswered(2048, large, 2048);
  ASSERT_NE(large.data, nullptr) << "the 1 MiB buffer was kept for a 2 KiB read";
  EXPECT_GE(large.capacity, 1u << 20);
  EXPECT_OK(check->Accept(0, std::string_view(all).substr(0, 2048)));
  EXPECT_OK(check->Accept(4096, std::string_view(all).substr(4096)));
  ASSERT_TRUE(check->result().has_value());
  EXPECT_TRUE(check->result()->ok()) << "the copy kept was fed in its turn";
}

TEST_F(SequentialCheckTest, AFailedReadOfTheGapEndsTheWait) {
  auto check = CheckOf(backup_);
  const std::string all = Content();
  check->Begin(0);
  check->Begin(4096);
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    check->Cancel(0);  // Its read failed (EIO to its reader).
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_OK(check->Accept(4096, std::string_view(all).substr(4096)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, SequentialCheck::kWait);
  t.join();
}

TEST_F(SequentialCheckTest, ASeekStopsTheCheckWithoutAnError) {
  auto check = CheckOf(backup_);
  std::string wrong = Content();
  wrong.back() = static_cast<char>(wrong.back() ^ 1);
  const auto t0 = std::chrono::steady_clock::now();
  check->Begin(4096);
  EXPECT_OK(check->Accept(4096, std::string_view(wrong).substr(4096)));  // Nothing before it.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, SequentialCheck::kWait)
      << "no read of the gap being served: no long wait";
  EXPECT_OK(check->Accept(0, std::string_view(wrong).substr(0, 4096)));
}

TEST(ReadBufferTest, AThreadGoingIdleGivesItsBufferBackForOthers) {
  constexpr size_t kSize = (3 << 20) + 7;  // Larger than any other test's buffers in the pool.
  ReadBuffer& mine = ThreadReadBuffer();
  mine.Reserve(kSize);
  const char* data = mine.data.get();
  ASSERT_NE(data, nullptr);
  ReleaseThreadReadBuffer();
  EXPECT_EQ(ThreadReadBuffer().data, nullptr);  // Nothing kept by the idle thread,
  std::thread([data] {
    ReadBuffer& theirs = ThreadReadBuffer();
    theirs.Reserve(kSize);
    EXPECT_EQ(theirs.data.get(), data);  // and the next thread to read takes it.
    ReleaseThreadReadBuffer();
  }).join();
}

}  // namespace
}  // namespace stitchfs::fs::fstest
