// FileReads (what the reads of one file share, found by inode), the walk order a view gives
// (NextFile, FirstFileIn) and WalkAhead (files opened and read ahead of a tree walk).
#include "fs/walk_ahead.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/fs/view_fixture.h"

namespace stitchfs::fs::fstest {
namespace {

using engine::ErrorCode;

// Waits up to 5 s for `walk` to have prefetched `n` files; then its count.
uint64_t PrefetchedSoon(const WalkAhead& walk, uint64_t n) {
  for (int i = 0; i < 500 && walk.prefetched() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return walk.prefetched();
}

// Its count once what was asked had time to happen (for counts that must not grow).
uint64_t PrefetchedSettled(const WalkAhead& walk) {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return walk.prefetched();
}

TEST_F(ViewTest, FileReadsAreSharedByInodeAndAReadFromTheStartIsCheckedAgain) {
  const uint64_t ino = Ino("log/app.log");
  auto reads = view_->Reads(ino);
  ASSERT_OK(reads.status());
  EXPECT_EQ(view_->Reads(ino).value(), *reads);  // Kept: every read finds the same.
  const std::string whole = a_ + b_ + c_;
  std::shared_ptr<SequentialCheck> first = (*reads)->CheckFor(0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ((*reads)->CheckFor(0), first);  // Nothing read yet: the same check.
  // The first reads out of order (the kernel sends several at once): the read of the start
  // joins the check a later read began and was kept by, and the whole file is checked.
  EXPECT_EQ((*reads)->CheckFor(4096), first);
  first->Begin(4096, 100);
  (void)first->AcceptAnswered(4096, std::string_view(whole).substr(4096, 100));
  EXPECT_EQ((*reads)->CheckFor(0), first) << "a read of the start joins the reads served";
  first->Begin(0, 4096);
  ASSERT_OK(first->Accept(0, std::string_view(whole).substr(0, 4096)));
  first->Begin(4196, whole.size() - 4196);
  bool found_now = false;
  ASSERT_OK(first->Accept(4196, std::string_view(whole).substr(4196), &found_now));
  EXPECT_TRUE(found_now) << "the whole file was checked";
  std::shared_ptr<SequentialCheck> again = (*reads)->CheckFor(0);
  EXPECT_NE(again, first);
  EXPECT_TRUE(again->Unfed());
  EXPECT_EQ((*reads)->CheckFor(4096), again);  // Only a read of the start begins a new one.
  // Bytes that are not the backup's fail the end, and go on failing it for later readers.
  std::string wrong = whole;
  wrong[10] ^= 1;
  again->Begin(0, wrong.size());
  EXPECT_EQ(again->Accept(0, wrong).code(), ErrorCode::kBackupDamaged);
  std::shared_ptr<SequentialCheck> later = (*reads)->CheckFor(0);
  later->Begin(whole.size() - 100, 100);
  EXPECT_EQ(later->Accept(whole.size() - 100, whole.substr(whole.size() - 100)).code(),
            ErrorCode::kBackupDamaged);
  // Files without bytes to check have no check.
  auto empty = view_->Reads(Ino("empty.txt"));
  ASSERT_OK(empty.status());
  EXPECT_EQ((*empty)->CheckFor(0), nullptr);
  EXPECT_EQ(view_->Reads(Ino("log")).status().code(), ErrorCode::kEntryNotFound);
}

TEST_F(ViewTest, FilesComeInTheOrderOfTheirPaths) {
  // The order tar and cp -a read them: folders in listing order, depth first.
  std::vector<uint64_t> walk;
  for (auto f = view_->FirstFileIn(1); f; f = view_->NextFile(*f)) walk.push_back(*f);
  EXPECT_EQ(walk, (std::vector<uint64_t>{Ino("copy/a.bin"), Ino("copy/b.bin"), Ino("empty.txt"),
                                         Ino("log/app.log"), Ino("metadata/db.sql"),
                                         Ino("new/name.bin")}));
  EXPECT_EQ(view_->FirstFileIn(Ino("log")), Ino("log/app.log"));
  EXPECT_EQ(view_->FirstFileIn(Ino("empty.txt")), std::nullopt);
  EXPECT_EQ(view_->NextFile(Ino("log")), std::nullopt);  // A folder is not in the walk.
  EXPECT_EQ(view_->NextFile(0), std::nullopt);
}

TEST_F(ViewTest, AWalkIsReadAheadWithinItsLimits) {
  WalkAheadLimits limits;
  limits.files = 2;
  WalkAhead walk(*view_, limits);
  walk.Started(Ino("copy/a.bin"));
  EXPECT_EQ(PrefetchedSettled(walk), 0u);  // One file read is not a walk.
  walk.Started(Ino("copy/b.bin"));         // The next one: a walk.
  // Two files with bytes ahead (empty.txt has none): log/app.log and metadata/db.sql.
  EXPECT_EQ(PrefetchedSoon(walk, 2), 2u);
  EXPECT_EQ(PrefetchedSettled(walk), 2u);
  walk.Started(Ino("log/app.log"));  // The walker moved on: one more.
  EXPECT_EQ(PrefetchedSoon(walk, 3), 3u);
}

TEST_F(ViewTest, AListedFolderThenItsFilesIsAWalkAndAJumpEndsIt) {
  WalkAheadLimits limits;
  limits.files = 8;
  WalkAhead walk(*view_, limits);
  walk.Listed(Ino("copy"));
  walk.Started(Ino("copy/a.bin"));  // (The folder's first file: the same place.)
  walk.Started(Ino("copy/b.bin"));
  EXPECT_EQ(PrefetchedSoon(walk, 3), 3u);  // log/app.log, metadata/db.sql, new/name.bin.
  WalkAhead other(*view_, limits);
  other.Started(Ino("new/name.bin"));
  other.Started(Ino("copy/a.bin"));   // Backwards: not a walk.
  other.Started(Ino("log/app.log"));  // Nor a jump forwards.
  EXPECT_EQ(PrefetchedSettled(other), 0u);
  WalkAhead listing(*view_, limits);  // `ls -R` lists folders one after another: no walk.
  listing.Listed(Ino("log"));
  listing.Listed(Ino("metadata"));
  listing.Listed(Ino("new"));
  EXPECT_EQ(PrefetchedSettled(listing), 0u);
  WalkAhead off(*view_, WalkAheadLimits{.files = 0});
  off.Started(Ino("copy/a.bin"));
  off.Started(Ino("copy/b.bin"));
  EXPECT_EQ(PrefetchedSettled(off), 0u);
}

}  // namespace
}  // namespace stitchfs::fs::fstest
