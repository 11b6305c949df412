// Prune, flatten and the locks on MemStorage: retention with a flatten in place, a running
// writer's base spared, flattened copies, two writers and a dead writer's lock taken over once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "engine/base/interrupt.h"
#include "engine/read/open_resolved.h"
#include "engine/store/prune.h"
#include "engine/write/flatten.h"
#include "tests/engine/backends/mem/mem_fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::RandomBytes;

class MemPruneTest : public MemStoreTest {
 protected:
  // A chain b0 <- b1 <- b2 <- b3, one day apart.
  void WriteChain() {
    const std::string log = RandomBytes(20000, 7);
    std::string grown = log;
    for (int i = 0; i < 4; ++i) {
      grown += "line " + std::to_string(i) + "\n";
      SetSource({{"log", grown}, {"conf", "v" + std::to_string(i / 2)}, {"fixed", log}});
      Written("b" + std::to_string(i), i == 0 ? "" : "b" + std::to_string(i - 1), i + 1);
    }
  }
  // b3 flattened into "flat", written through a FaultStorage with `plan`.
  StatusOr<FlattenResult> FlattenThrough(std::shared_ptr<FaultPlan> plan) {
    ChainOptions o;
    o.storage = mem_;
    ASSIGN_OR_RETURN(auto chain, OpenResolved(At("b3"), o));
    FaultStorage faulty(mem_->NewProcess(), std::move(plan));
    return FlattenBackup(*chain, At("flat"), false, faulty);
  }
  StatusOr<std::vector<PruneAction>> Prune(std::shared_ptr<const Storage> storage, int keep_last,
                                           bool dry_run = false) {
    PrunePolicy p;
    p.keep_last = keep_last;
    p.dry_run = dry_run;
    Context ctx;
    ctx.storage = std::move(storage);
    return PruneStore(kStore, p, ctx);
  }
};

TEST_F(MemPruneTest, KeepLastFlattensTheOldestKeptAndRemovesTheRest) {
  WriteChain();
  auto plan = Prune(mem_, 2);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->size(), 4u);
  EXPECT_EQ((*plan)[0].kind, PruneAction::kRemove);
  EXPECT_EQ((*plan)[1].kind, PruneAction::kRemove);
  EXPECT_EQ((*plan)[2].kind, PruneAction::kFlatten);
  EXPECT_GT((*plan)[2].written, 20000u);
  EXPECT_EQ((*plan)[3].kind, PruneAction::kKeep);
  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b2", "b3"}));
  size_t depth = 0;
  EXPECT_EQ(Check(mem_->NewProcess(), At("b2"), written_["b2"], &depth), "");
  EXPECT_EQ(depth, 1u);
  EXPECT_EQ(Check(mem_->NewProcess(), At("b3"), written_["b3"], &depth), "");
  EXPECT_EQ(depth, 2u);
}

TEST_F(MemPruneTest, ADryRunChangesNothing) {
  WriteChain();
  auto plan = Prune(mem_, 1, /*dry_run=*/true);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ((*plan)[3].kind, PruneAction::kFlatten);
  EXPECT_EQ(CheckStore({"b0", "b1", "b2", "b3"}), "");
}

TEST_F(MemPruneTest, ARunningWritersBaseIsSpared) {
  SetSource({{"a", RandomBytes(5000, 8)}});
  Written("b0", "", 1);
  Written("b1", "", 2);
  Written("b2", "", 3);
  SetSource({{"a", src_["a"] + "more"}});
  auto plan = std::make_shared<FaultPlan>();
  plan->Add({Call::kFinish, 1, FaultAction::kStall});
  auto writing = std::make_shared<FaultStorage>(mem_->NewProcess(), plan);
  StatusOr<BackupSummary> result = Status::Internal("not run");
  std::thread writer([&] { result = Backup(writing, "b3", "b0", 4); });
  ASSERT_TRUE(plan->WaitStalled(std::chrono::seconds(10)));
  auto pruned = Prune(mem_->NewProcess(), 1);
  plan->Release();
  writer.join();
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ((*pruned)[0].kind, PruneAction::kKeep);
  EXPECT_NE((*pruned)[0].why.find("being written"), std::string::npos) << (*pruned)[0].why;
  EXPECT_EQ((*pruned)[1].kind, PruneAction::kRemove);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  written_["b3"] = src_;
  written_.erase("b1");
  EXPECT_EQ(CheckStore({"b0", "b2", "b3"}), "");
}

TEST_F(MemPruneTest, TwoPrunesAtOnceOneWaitsItsTurn) {
  WriteChain();
  auto plan = std::make_shared<FaultPlan>();
  plan->Add({Call::kWriters, 1, FaultAction::kStall});
  auto first_storage = std::make_shared<FaultStorage>(mem_->NewProcess(), plan);
  StatusOr<std::vector<PruneAction>> first = Status::Internal("not run");
  std::thread t([&] { first = Prune(first_storage, 2); });
  ASSERT_TRUE(plan->WaitStalled(std::chrono::seconds(10)));
  auto second = Prune(mem_->NewProcess(), 2);
  plan->Release();
  t.join();
  EXPECT_EQ(second.status().sys_errno(), EBUSY) << second.status().ToString();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b2", "b3"}));
}

TEST_F(MemPruneTest, AKilledPrunesLockAndLeftoversGo) {
  WriteChain();
  auto dying = mem_->NewProcess();
  auto plan = std::make_shared<FaultPlan>([dying] { dying->Kill(); });
  plan->Add({Call::kSetAside, 2, FaultAction::kCrash});
  auto pruned = Prune(std::make_shared<FaultStorage>(dying, plan), 2);
  EXPECT_EQ(pruned.status().sys_errno(), ECANCELED);
  EXPECT_EQ(CheckStore({"b2", "b3"}), "");
  auto again = Prune(mem_->NewProcess(), 2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b2", "b3"}));
  EXPECT_EQ(CheckStore({"b2", "b3"}), "");
}

// A backup written on a base after prune planned to remove that base, but before prune marked
// it, and the prune killed after marking and before its proof (which would have seen the new
// backup): nothing was taken out, so the new backup restores; the next prune takes the marks
// away and flattens what it keeps.
TEST_F(MemPruneTest, APruneKilledBeforeItsProofTakesNothingOut) {
  WriteChain();
  auto dying = mem_->NewProcess();
  auto plan = std::make_shared<FaultPlan>([dying] { dying->Kill(); });
  plan->Add({Call::kSetAside, 1, FaultAction::kStall});  // Planned, b2 flattened.
  plan->Add({Call::kWriters, 2, FaultAction::kCrash});   // The proof's look for writers.
  auto storage = std::make_shared<FaultStorage>(dying, plan);
  StatusOr<std::vector<PruneAction>> pruned = Status::Internal("not run");
  std::thread t([&] { pruned = Prune(storage, 2); });
  ASSERT_TRUE(plan->WaitStalled(std::chrono::seconds(10)));
  SetSource({{"log", src_["log"] + "day 5\n"}, {"conf", "v5"}, {"fixed", src_["fixed"]}});
  auto written = Backup(mem_->NewProcess(), "b4", "b1", 5);  // b1: to be removed, unmarked.
  plan->Release();
  t.join();
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  written_["b4"] = src_;
  EXPECT_EQ(pruned.status().sys_errno(), ECANCELED) << pruned.status().ToString();
  EXPECT_EQ(Check(mem_->NewProcess(), At("b4"), written_["b4"]), "");
  EXPECT_EQ(CheckStore({"b0", "b1", "b2", "b3", "b4"}), "");
  // A writer refuses a marked base until a prune takes the mark away.
  EXPECT_EQ(Backup(mem_->NewProcess(), "b5", "b1", 6).status().code(), ErrorCode::kNoBaseBackup);
  auto again = Prune(mem_->NewProcess(), 2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b3", "b4"}));
  EXPECT_EQ(CheckStore({"b3", "b4"}), "");
}

// A backup stamped before its base (a clock, a time zone, --timestamp): removals go children
// first by chain, not by time, so one that stops part way never lists a backup without its base.
TEST_F(MemPruneTest, RemovalsGoChildrenFirstWhateverTheirTimestamps) {
  SetSource({{"log", RandomBytes(20000, 3)}});
  Written("b0", "", 5);
  SetSource({{"log", src_["log"] + "more"}});
  Written("b1", "b0", 1);  // On b0, stamped four days before it.
  Written("b2", "", 6);
  Written("b3", "", 7);
  auto plan = std::make_shared<FaultPlan>();
  plan->Add({Call::kRemove, 2, FaultAction::kFail});  // The second removal fails.
  auto pruned = Prune(std::make_shared<FaultStorage>(mem_->NewProcess(), plan), 2);
  EXPECT_FALSE(pruned.ok());
  std::set<std::string> left;
  for (const std::string& n : mem_->List(kStore)) {
    if (n.front() != '.') left.insert(n);
  }
  EXPECT_EQ(left, (std::set<std::string>{"b0", "b2", "b3"}));
  EXPECT_EQ(CheckStore(left), "");
  auto again = Prune(mem_->NewProcess(), 2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b2", "b3"}));
}

TEST_F(MemPruneTest, ALaggingListingMakesPruneKeepMoreNeverBreakOne) {
  mem_->SetListingLag(3);  // The store will list as it was before b3 was finished.
  WriteChain();
  auto plan = Prune(mem_, 2);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->size(), 3u);  // b3 is not in the plan,
  EXPECT_EQ((*plan)[0].kind, PruneAction::kRemove);
  EXPECT_EQ((*plan)[1].kind, PruneAction::kFlatten);
  mem_->SetListingLag(0);
  written_.erase("b0");
  EXPECT_EQ(CheckStore({"b1", "b2", "b3"}), "");  // but it still opens, on its kept base.
  ASSERT_TRUE(Prune(mem_, 2).ok());
  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b2", "b3"}));
}

TEST_F(MemPruneTest, FlattenWritesAWholeCopy) {
  WriteChain();
  ChainOptions o;
  o.storage = mem_;
  auto chain = OpenResolved(At("b3"), o);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  uint64_t done = 0, total = 0;  // Progress: every byte copied, then read back.
  const Manifest& m = (*chain)->top().manifest();
  for (size_t i = 0; i < m.num_entries(); ++i) total += m.entry(i).size;
  auto flat = FlattenBackup(**chain, At("flat"), false, *mem_, [&](uint64_t n) { done += n; });
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_EQ(done, kFlattenPasses * total);
  size_t depth = 0;
  EXPECT_EQ(Check(mem_, At("flat"), written_["b3"], &depth), "");
  EXPECT_EQ(depth, 1u);
  EXPECT_EQ(FlattenBackup(**chain, At("flat"), false, *mem_).status().code(),
            ErrorCode::kBackupAlreadyExists);
}

// A backup marked incomplete (a source file left out) stays marked in its flattened copy, and
// in the copy a prune puts in its place: the files it lacks are still listed.
TEST_F(MemPruneTest, AnIncompleteBackupStaysIncompleteWhenFlattened) {
  SetSource({{"log", "a"}, {"bad\x01name", "left out"}});
  auto b0 = Backup(mem_->NewProcess(), "b0");
  ASSERT_TRUE(b0.ok()) << b0.status().ToString();
  ASSERT_EQ(b0->missing.size(), 1u);
  SetSource({{"log", "ab"}, {"bad\x01name", "left out"}});
  auto b1 = Backup(mem_->NewProcess(), "b1", "b0", 2);
  ASSERT_TRUE(b1.ok()) << b1.status().ToString();
  ChainOptions o;
  o.storage = mem_;
  auto chain = OpenResolved(At("b0"), o);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  ASSERT_TRUE(FlattenBackup(**chain, At("flat"), false, *mem_).ok());
  for (const std::string name : {"flat", "b1"}) {
    if (name == "b1") {
      ASSERT_TRUE(Prune(mem_->NewProcess(), 1).ok());  // b1 flattened in place.
    }
    auto opened = OpenResolved(At(name), o);
    ASSERT_TRUE(opened.ok()) << name << ": " << opened.status().ToString();
    EXPECT_EQ((*opened)->depth(), 1u) << name;
    const Manifest& m = (*opened)->top().manifest();
    EXPECT_EQ(m.header().incomplete, 1u) << name;
    ASSERT_EQ(m.missing().size(), 1u) << name;
    EXPECT_NE(m.missing()[0].name.find("bad"), std::string::npos) << name;
  }
}

// Bytes that go wrong on the way into the copy (a disk's, a network's or a copy's fault) are
// caught by reading the copy back: the flatten fails saying so, and leaves no backup.
TEST_F(MemPruneTest, FlattenReadsItsCopyBack) {
  WriteChain();
  auto plan = std::make_shared<FaultPlan>();
  plan->Add({Call::kAppend, 2, FaultAction::kCorrupt});
  auto flat = FlattenThrough(plan);
  EXPECT_EQ(flat.status().code(), ErrorCode::kIOError) << flat.status().ToString();
  // The copy's bytes are blamed, never a backup's (b0 is whole).
  EXPECT_NE(flat.status().message().find("reads back wrong"), std::string::npos)
      << flat.status().ToString();
  EXPECT_NE(flat.status().message().find("the backup's own bytes read right"), std::string::npos)
      << flat.status().ToString();
  EXPECT_EQ(flat.status().message().find("bad bytes are in"), std::string::npos)
      << flat.status().ToString();
  EXPECT_GE(plan->count(Call::kReadBack), 1u);
  EXPECT_FALSE(mem_->Get(At("flat/.backup")));
  EXPECT_EQ(CheckStore({"b0", "b1", "b2", "b3"}), "");
}

// A copy that is not there, or of another length, when read back is the copy's fault too
// (IO_ERROR), not the backup's: the backup reads right.
TEST_F(MemPruneTest, ACopyMissingWhenReadBackIsTheCopysFault) {
  WriteChain();
  auto plan = std::make_shared<FaultPlan>();
  plan->Add({Call::kReadBack, 1, FaultAction::kFail, Status::BackupDamaged("not there")});
  auto flat = FlattenThrough(plan);
  EXPECT_EQ(flat.status().code(), ErrorCode::kIOError) << flat.status().ToString();
  EXPECT_NE(flat.status().message().find("the backup's own bytes read right"), std::string::npos)
      << flat.status().ToString();
  EXPECT_FALSE(mem_->Get(At("flat/.backup")));
}

// A stop asked for (Ctrl-C: RequestStop) while the copy is being read back ends the flatten,
// and no manifest is written after it: no backup is left. (In a child process: a stop is
// process-wide and cannot be taken back.)
TEST_F(MemPruneTest, AStopDuringTheReadBackLeavesNoCopy) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  WriteChain();
  EXPECT_EXIT(
      {
        auto plan = std::make_shared<FaultPlan>();
        plan->Add({Call::kReadBack, 1, FaultAction::kStall});
        std::thread stop([plan] {
          if (plan->WaitStalled(std::chrono::seconds(30))) RequestStop();
          plan->Release();
        });
        auto flat = FlattenThrough(plan);
        stop.join();
        const bool stopped = !flat.ok() &&
                             flat.status().message().find("interrupted") != std::string::npos &&
                             !mem_->Get(At("flat/.backup"));
        std::fprintf(stderr, "%s\n", flat.status().ToString().c_str());
        std::exit(stopped ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "interrupted");
}

// A prune whose flatten in place reads its copy back wrong takes nothing out: every backup
// still opens and reads byte-exact, and the next prune does the work.
TEST_F(MemPruneTest, APruneWhoseCopyReadsBackWrongTakesNothingOut) {
  WriteChain();
  auto plan = std::make_shared<FaultPlan>();
  plan->Add({Call::kAppend, 1, FaultAction::kCorrupt});
  auto pruned = Prune(std::make_shared<FaultStorage>(mem_->NewProcess(), plan), 2);
  EXPECT_EQ(pruned.status().code(), ErrorCode::kIOError) << pruned.status().ToString();
  EXPECT_EQ(CheckStore({"b0", "b1", "b2", "b3"}), "");
  auto again = Prune(mem_->NewProcess(), 2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(CheckStore({"b2", "b3"}), "");
}

// A prune whose flattened copy's manifest reads back other bytes than were written (a disk's
// silent fault) puts nothing in the backup's place: every backup still opens and reads
// byte-exact, the copy is gone, and the next prune does the work.
TEST_F(MemPruneTest, ACopyWhoseManifestReadsBackWrongReplacesNothing) {
  WriteChain();
  mem_->CorruptNextManifest(At(".b2.stitch-flatten"));
  auto pruned = Prune(mem_->NewProcess(), 2);
  EXPECT_EQ(pruned.status().code(), ErrorCode::kIOError) << pruned.status().ToString();
  EXPECT_NE(pruned.status().message().find(".backup reads back other bytes than were written "
                                           "(from byte 0); the backup " +
                                           At("b2") + " was not replaced"),
            std::string::npos)
      << pruned.status().ToString();
  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b0", "b1", "b2", "b3"}));
  EXPECT_EQ(CheckStore({"b0", "b1", "b2", "b3"}), "");
  auto again = Prune(mem_->NewProcess(), 2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(CheckStore({"b2", "b3"}), "");
}

// A backup whose own bytes went bad (bit rot in a base) is never copied as if whole: the
// prune that would flatten it fails naming the backup that holds the bad bytes, and removes
// nothing (another copy of the data may still be needed to mend it).
TEST_F(MemPruneTest, APruneFlatteningDamagedBytesFailsAndRemovesNothing) {
  WriteChain();
  std::string fixed = *mem_->Get(At("b0/fixed"));
  fixed[fixed.size() / 2] ^= 0x40;
  ASSERT_TRUE(mem_->Put(At("b0/fixed"), fixed).ok());
  auto pruned = Prune(mem_->NewProcess(), 2);
  EXPECT_EQ(pruned.status().code(), ErrorCode::kBackupDamaged) << pruned.status().ToString();
  EXPECT_NE(pruned.status().message().find("the bad bytes are in backup " + At("b0")),
            std::string::npos)
      << pruned.status().ToString();
  EXPECT_EQ(pruned.status().message().find("reads back wrong"), std::string::npos)
      << pruned.status().ToString();
  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b0", "b1", "b2", "b3"}));
}

TEST_F(MemPruneTest, TwoWritersOfOneBackupOneWins) {
  SetSource({{"a", RandomBytes(30000, 9)}, {"b", "bee"}});
  std::atomic<int> won{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&] {
      auto s = Backup(mem_->NewProcess(), "b0");
      if (s.ok()) ++won;
      if (s.status().code() == ErrorCode::kBackupAlreadyExists) ++refused;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(refused.load(), 1);
  EXPECT_EQ(Check(mem_, At("b0"), src_), "");
}

TEST_F(MemPruneTest, ADeadWritersLockIsTakenOverExactlyOnce) {
  SetSource({{"a", RandomBytes(30000, 10)}, {"b", "bee"}});
  auto dying = mem_->NewProcess();
  auto plan = std::make_shared<FaultPlan>([dying] { dying->Kill(); });
  plan->Add({Call::kClose, 2, FaultAction::kCrash});
  EXPECT_EQ(Backup(std::make_shared<FaultStorage>(dying, plan), "b0").status().sys_errno(),
            ECANCELED);
  ASSERT_TRUE(mem_->Get(At("b0/.lock")).has_value());
  std::atomic<int> took_over{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      auto s = Backup(mem_->NewProcess(), "b0");
      if (s.ok() && !s->warnings.empty() && s->warnings[0].find("took over") == 0) ++took_over;
      if (s.status().code() == ErrorCode::kBackupAlreadyExists) ++refused;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(took_over.load(), 1);
  EXPECT_EQ(refused.load(), 5);
  EXPECT_EQ(Check(mem_, At("b0"), src_), "");
}

}  // namespace
}  // namespace stitchfs::engine
