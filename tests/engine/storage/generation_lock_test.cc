// The lock protocol on conditional creation alone (engine/storage/generation_lock.h), on an
// in-memory object store: racing takeovers, the release-between-look-and-create race, listings
// that lag behind the writes, and a fault (failed call, crash before or after it) at every call
// of a takeover and of a release. The safety property: never two live holders; the liveness
// property: once every holder is dead, a new writer takes the lock.
#include "engine/storage/generation_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "engine/backends/fault/fault_objects.h"
#include "engine/backends/mem/mem_objects.h"

namespace stitchfs::engine {
namespace {

const std::string kKey = "store/d5/.lock";

// Takes the lock for `text` if it is free or its holder's text is `dead`; true if taken.
StatusOr<bool> TakeOver(const ObjectStore& s, const std::string& text, const std::string& dead) {
  ASSIGN_OR_RETURN(auto lock, CurrentLock(s, kKey));
  if (!lock) return CreateLockGeneration(s, kKey, 0, text);
  if (lock->text != dead) return false;  // A live holder's.
  return CreateLockGeneration(s, kKey, lock->generation + 1, text, dead);
}

// The generation `text` holds, or -1.
int HeldBy(const MemObjects& objects, const std::string& text) {
  int held = -1;
  for (const auto& [key, body] : objects.Snapshot()) {
    if (body == text) held = std::max(held, LockGenerationOf(key, kKey));
  }
  return held;
}

TEST(GenerationLockTest, GenerationsAreTheKeyAndItsNumberedSuccessors) {
  EXPECT_EQ(LockGenerationOf(kKey, kKey), 0);
  EXPECT_EQ(LockGenerationOf(kKey + ".3", kKey), 3);
  EXPECT_EQ(LockGenerationOf(kKey + ".03", kKey), -1);
  EXPECT_EQ(LockGenerationOf(kKey + ".", kKey), -1);
  EXPECT_EQ(LockGenerationOf(kKey + "x", kKey), -1);
  EXPECT_EQ(LockGenerationOf(kKey + ".1x", kKey), -1);
}

TEST(GenerationLockTest, AFreeLockIsTakenOnceAndReleasedWhole) {
  MemObjects objects;
  EXPECT_TRUE(*CreateLockGeneration(objects, kKey, 0, "a"));
  EXPECT_FALSE(*CreateLockGeneration(objects, kKey, 0, "b"));
  // A retry of the same create whose answer was lost is the same holder.
  EXPECT_TRUE(*CreateLockGeneration(objects, kKey, 0, "a"));
  ASSERT_TRUE(*CreateLockGeneration(objects, kKey, 1, "c", "a"));
  ASSERT_TRUE(ReleaseLock(objects, kKey, 1).ok());
  EXPECT_TRUE(objects.Snapshot().empty());
}

TEST(GenerationLockTest, RacingTakeoversOfADeadHolderMakeOneHolder) {
  for (size_t lag : {0, 1, 3}) {
    for (int round = 0; round < 40; ++round) {
      MemObjects objects;
      ASSERT_TRUE(*CreateLockGeneration(objects, kKey, 0, "dead"));
      objects.SetListingLag(lag);  // The writers' own creates hidden from each other's listings.
      std::atomic<int> ready{0}, winners{0};
      std::vector<std::thread> writers;
      for (int w = 0; w < 6; ++w) {
        writers.emplace_back([&, w] {
          ++ready;
          while (ready < 6) std::this_thread::yield();
          auto taken = TakeOver(objects, "w" + std::to_string(w), "dead");
          ASSERT_TRUE(taken.ok()) << taken.status().ToString();
          winners += *taken ? 1 : 0;
        });
      }
      for (auto& t : writers) t.join();
      EXPECT_EQ(winners, 1) << "lag " << lag << ", round " << round;
    }
  }
}

TEST(GenerationLockTest, AHolderThatCameAndWentBetweenALookAndATakeoverIsNotTakenOver) {
  MemObjects objects;
  ASSERT_TRUE(*CreateLockGeneration(objects, kKey, 0, "dead"));
  auto look = CurrentLock(objects, kKey);  // A writer judges generation 0 dead...
  ASSERT_TRUE(look.ok() && *look);
  ASSERT_TRUE(*TakeOver(objects, "quick", "dead"));  // ...another takes it over and is done,
  ASSERT_TRUE(ReleaseLock(objects, kKey, 1).ok());
  ASSERT_TRUE(*TakeOver(objects, "live", "dead"));  // and a third one holds it afresh.
  auto late = CreateLockGeneration(objects, kKey, (*look)->generation + 1, "late", "dead");
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(*late);
  EXPECT_EQ(HeldBy(objects, "live"), 0);
  EXPECT_EQ(HeldBy(objects, "late"), -1) << "what the late writer made is deleted";
}

// Checks, after writer A's takeover (or release) under `plan`, that a second writer B is
// refused while A holds the lock and takes it once A is dead or gone.
void CheckAfter(MemObjects& objects, bool a_holds, const std::string& what) {
  objects.SetListingLag(0);  // Later looks see every change (S3 lags for a while only).
  if (a_holds) {
    auto b = TakeOver(objects, "B", "dead");
    ASSERT_TRUE(b.ok()) << what;
    EXPECT_FALSE(*b) << what << ": B took the lock A holds";
    ASSERT_TRUE(ReleaseLock(objects, kKey, HeldBy(objects, "A")).ok()) << what;
  }
  // A is dead (its operation failed or it crashed) or gone: whatever it left is a dead
  // holder's, which B may take over.
  auto now = CurrentLock(objects, kKey);
  ASSERT_TRUE(now.ok()) << what;
  const std::string dead = *now ? (*now)->text : "";
  auto b = TakeOver(objects, "B", dead);
  ASSERT_TRUE(b.ok()) << what;
  EXPECT_TRUE(*b) << what << ": B could not take a dead holder's lock";
  ASSERT_TRUE(ReleaseLock(objects, kKey, HeldBy(objects, "B")).ok()) << what;
  EXPECT_TRUE(objects.Snapshot().empty()) << what << ": objects left after every release";
}

struct SweepCase {
  FaultAction action;
  size_t lag;
};

class EveryLockCallTest : public ::testing::TestWithParam<SweepCase> {};

TEST_P(EveryLockCallTest, ATakeoverWithAFaultAtAnyCallLeavesOneHolderAtMost) {
  for (uint64_t n = 1;; ++n) {
    MemObjects objects;
    ASSERT_TRUE(*CreateLockGeneration(objects, kKey, 0, "dead"));
    objects.SetListingLag(GetParam().lag);
    auto plan = std::make_shared<FaultPlan>();
    plan->Add({std::nullopt, n, GetParam().action, Status::IOError("injected", EIO)});
    FaultObjects a(objects, plan);
    auto taken = TakeOver(a, "A", "dead");
    const bool a_holds = taken.ok() && *taken && !plan->crashed();
    const std::string what = "fault at call " + std::to_string(n);
    if (taken.ok() && !*taken) ADD_FAILURE() << what << ": A refused a dead holder's lock";
    CheckAfter(objects, a_holds, what);
    if (plan->fired() == 0) break;  // The takeover made fewer than n calls.
    ASSERT_LT(n, 50u);
  }
}

TEST_P(EveryLockCallTest, AReleaseWithAFaultAtAnyCallLeavesADeadHoldersLock) {
  for (uint64_t n = 1;; ++n) {
    MemObjects objects;
    ASSERT_TRUE(*CreateLockGeneration(objects, kKey, 0, "dead"));
    ASSERT_TRUE(*TakeOver(objects, "A", "dead"));
    objects.SetListingLag(GetParam().lag);
    auto plan = std::make_shared<FaultPlan>();
    plan->Add({std::nullopt, n, GetParam().action, Status::IOError("injected", EIO)});
    const Status released = ReleaseLock(FaultObjects(objects, plan), kKey, 1);
    const std::string what = "fault at call " + std::to_string(n);
    // Released or not, A is gone now: a failed release leaves a dead holder's generation.
    CheckAfter(objects, /*a_holds=*/false, what);
    if (plan->fired() == 0) {
      EXPECT_TRUE(released.ok()) << released.ToString();
      break;
    }
    ASSERT_LT(n, 50u);
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, EveryLockCallTest,
                         ::testing::Values(SweepCase{FaultAction::kFail, 0},
                                           SweepCase{FaultAction::kCrash, 0},
                                           SweepCase{FaultAction::kCrashAfter, 0},
                                           SweepCase{FaultAction::kFail, 2},
                                           SweepCase{FaultAction::kCrashAfter, 2}));

}  // namespace
}  // namespace stitchfs::engine
