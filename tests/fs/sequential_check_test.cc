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
  std::unique_ptr<SequentialCheck> CheckOf(std::shared_ptr<const engine::ResolvedBackup> chain,
                                           SequentialCheck::Bounds bounds = {}) {
    const size_t entry = *chain->top().manifest().FindByName("log/app.log");
    return std::make_unique<SequentialCheck>(
        std::make_unique<engine::ContentCheck>(*chain, entry, chain),
        chain->OpenEntry(entry).value(), std::nullopt, bounds);
  }
  std::string Content() const { return a_ + b_ + c_; }
  // The file's stored bytes with the byte at `at` of its base's data file (b0) flipped on disk:
  // what the file's reader now reads.
  std::string DamageBase(size_t at, const std::string& rest) {
    const auto file = dir_ / "we\"ird \\ dir/b0/log/app.log";
    std::string base = testutil::ReadFile(file);
    base[at] = static_cast<char>(base[at] ^ 1);
    testutil::WriteFile(file, base);
    return base + rest;
  }
};

TEST_F(SequentialCheckTest, ReadsInOrderAndOutOfOrderPass) {
  auto check = CheckOf(backup_);
  const std::string all = Content();
  check->Begin(0, 2048);
  ASSERT_OK(check->Accept(0, std::string_view(all).substr(0, 2048)));
  // The next two reads served by two threads, the later one done first: it waits for the other.
  check->Begin(2048, 2048);
  check->Begin(4096, all.size() - 4096);
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
  check->Begin(0, 2048);
  check->Begin(2048, 2048);
  (void)check->AcceptAnswered(2048, std::string_view(bad).substr(2048, 2048));  // Early: kept.
  ASSERT_OK(check->Accept(0, std::string_view(bad).substr(0, 2048)));
  EXPECT_EQ(check->Accept(4096, std::string_view(bad).substr(4096)).code(),
            ErrorCode::kBackupDamaged);
  // A later open of the same file, told what this one found: its end fails at once.
  SequentialCheck again(std::make_unique<engine::ContentCheck>(
                            *backup_, *backup_->top().manifest().FindByName("log/app.log")),
                        nullptr, check->result());
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
  check->Begin(0, 2048);
  check->Begin(2048, 2048);
  (void)check->AcceptAnswered(2048, early, 2048);
  EXPECT_EQ(early.data, nullptr) << "kept: the thread takes another buffer";
  early.Reserve(2048);  // (From the pool or new.)
  EXPECT_GE(early.capacity, 2048u);
  ReadBuffer first;
  first.Reserve(2048);
  std::memcpy(first.data.get(), all.data(), 2048);
  (void)check->AcceptAnswered(0, first, 2048);
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
  check->Begin(0, 2048);
  check->Begin(2048, 2048);
  (void)check->AcceptAnswered(2048, large, 2048);
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
  check->Begin(0, 4096);
  check->Begin(4096, all.size() - 4096);
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    check->Cancel(0);  // Its read failed (EIO to its reader).
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_OK(check->Accept(4096, std::string_view(all).substr(4096)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, SequentialCheck::Bounds().wait);
  t.join();
}

TEST_F(SequentialCheckTest, ASeekStopsTheCheckWithoutAnError) {
  auto check = CheckOf(backup_);
  std::string wrong = Content();
  wrong.back() = static_cast<char>(wrong.back() ^ 1);
  const auto t0 = std::chrono::steady_clock::now();
  check->Begin(4096, wrong.size() - 4096);
  EXPECT_OK(check->Accept(4096, std::string_view(wrong).substr(4096)));  // Nothing before it.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, SequentialCheck::Bounds().wait)
      << "no read of the gap being served: no long wait";
  EXPECT_OK(check->Accept(0, std::string_view(wrong).substr(0, 4096)));
}

// Reads that cannot be kept for their turn (here: no room at all) are read again from the
// file when the bytes before them were fed: the file is checked all the same.
TEST_F(SequentialCheckTest, ReadsThatCannotBeKeptAreReadAgainToCheckTheFile) {
  SequentialCheck::Bounds no_room;
  no_room.max_pending = 0;
  for (const bool damaged : {false, true}) {
    const std::string bytes = damaged ? DamageBase(3000, b_ + c_) : Content();
    auto check = CheckOf(backup_, no_room);
    check->Begin(0, 2048);
    check->Begin(2048, 2048);
    check->Begin(4096, 2048);
    (void)check->AcceptAnswered(4096, std::string_view(bytes).substr(4096, 2048));  // Dropped,
    (void)check->AcceptAnswered(2048, std::string_view(bytes).substr(2048, 2048));  // and merged.
    (void)check->AcceptAnswered(0, std::string_view(bytes).substr(0, 2048));  // Then read again.
    bool found_now = false;
    engine::Status end = check->Accept(6144, std::string_view(bytes).substr(6144), &found_now);
    EXPECT_TRUE(found_now) << "damaged " << damaged;
    if (damaged) {
      EXPECT_EQ(end.code(), ErrorCode::kBackupDamaged) << end.ToString();
    } else {
      EXPECT_OK(end);
    }
  }
}

// The read of the end, when a read before it does not come in time, reads those bytes itself.
TEST_F(SequentialCheckTest, TheReadOfTheEndReadsALateGapItself) {
  SequentialCheck::Bounds quick;
  quick.wait = std::chrono::milliseconds(20);
  quick.arrival = std::chrono::milliseconds(5);
  const std::string bad = DamageBase(100, b_ + c_);
  auto check = CheckOf(backup_, quick);
  check->Begin(0, 4096);  // Served so slowly that the read of the end stops waiting for it.
  check->Begin(4096, bad.size() - 4096);
  bool found_now = false;
  engine::Status end = check->Accept(4096, std::string_view(bad).substr(4096), &found_now);
  EXPECT_EQ(end.code(), ErrorCode::kBackupDamaged) << end.ToString();
  EXPECT_TRUE(found_now);
  (void)check->AcceptAnswered(
      0, std::string_view(bad).substr(0, 4096));  // (Comes at last: no matter.)
  EXPECT_EQ(check->result()->code(), ErrorCode::kBackupDamaged);
}

// A read that overlaps bytes already fed (the kernel read some pages again) feeds the rest.
TEST_F(SequentialCheckTest, AReadOverlappingWhatWasFedFeedsTheRest) {
  const std::string all = Content();
  auto check = CheckOf(backup_);
  (void)check->AcceptAnswered(0, std::string_view(all).substr(0, 3000));
  (void)check->AcceptAnswered(2048, std::string_view(all).substr(2048, 2048));
  bool found_now = false;
  EXPECT_OK(check->Accept(4096, std::string_view(all).substr(4096), &found_now));
  EXPECT_TRUE(found_now) << "the bytes [3000, 4096) of the second read were fed";
}

// A reader that leaves bytes unread is not checked, and nothing is read again for it.
TEST_F(SequentialCheckTest, ReadsThatLeaveAHoleAreNotReadAgain) {
  const std::string bad = DamageBase(3000, b_ + c_);
  auto check = CheckOf(backup_);
  check->Begin(0, 2048);
  EXPECT_OK(check->Accept(0, std::string_view(bad).substr(0, 2048)));
  check->Begin(4096, bad.size() - 4096);  // [2048, 4096) never read.
  EXPECT_OK(check->Accept(4096, std::string_view(bad).substr(4096)));
  EXPECT_FALSE(check->result().has_value());
  // Reads all over the file (a query): too many separate ranges stop the check at once.
  SequentialCheck::Bounds no_room;
  no_room.max_pending = 0;
  auto scattered = CheckOf(backup_, no_room);
  scattered->Begin(0, 1);
  for (size_t i = 0; i <= SequentialCheck::kMaxDropped; ++i) {
    (void)scattered->AcceptAnswered(2 + 2 * i, std::string_view(bad).substr(2 + 2 * i, 1));
  }
  (void)scattered->AcceptAnswered(0, std::string_view(bad).substr(0, 1));
  EXPECT_OK(scattered->Accept(4096, std::string_view(bad).substr(4096)));
  EXPECT_FALSE(scattered->result().has_value());
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
