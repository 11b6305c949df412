// The fault sweeps: the writer (full, incremental, taking a dead writer's backup over), the
// readers, prune and flatten run on a MemStorage through a FaultStorage that fails, or
// crashes at, their Nth call, for N = 1, 2, ... until one completes without reaching it.
// After each run: an operation that reports success left a whole result; every backup that
// verified before still opens and reads byte-exact; nothing opens as a half backup; and a
// fresh run (another process, no faults) succeeds.
#include <gtest/gtest.h>

#include <functional>

#include "engine/read/open_resolved.h"
#include "engine/store/prune.h"
#include "engine/write/flatten.h"
#include "tests/engine/backends/mem/mem_fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::RandomBytes;

// (A process killed once a call is done leaves what one killed at the next call leaves; only
// after an operation's last call does that differ, and a power loss then shows more.)
enum class Mode {
  kFail,            // The call fails (kIOError, EIO); the process goes on.
  kKill,            // The process dies at the call; what it wrote stays.
  kPowerLoss,       // The machine dies at the call; what was not durable is lost.
  kPowerLossAfter,  // The machine dies once the call is done, before the process hears of it.
  kCorrupt,         // The call's bytes are silently wrong (an Append's, a Read's); it goes on.
};

std::string ModeName(const ::testing::TestParamInfo<Mode>& m) {
  switch (m.param) {
    case Mode::kFail:
      return "Fail";
    case Mode::kKill:
      return "Kill";
    case Mode::kPowerLoss:
      return "PowerLoss";
    case Mode::kPowerLossAfter:
      return "PowerLossAfter";
    case Mode::kCorrupt:
      return "Corrupt";
  }
  return "?";
}

class FaultSweepTest : public MemStoreTest, public ::testing::WithParamInterface<Mode> {
 protected:
  using Op = std::function<Status(std::shared_ptr<const Storage>)>;

  // `setup` on a new disk, then for N = 1, 2, ...: `op` on a copy of that disk (after
  // `prepare`, if any, there) through a FaultStorage faulting its Nth call as the mode says,
  // then `check` (given op's status). Stops at the first N op does not reach, or at a
  // failure; returns the runs.
  int Sweep(const std::function<void()>& setup, const Op& op,
            const std::function<void(const Status&, const FaultPlan&)>& check,
            const std::function<void()>& prepare = {}) {
    setup();
    const std::shared_ptr<MemStorage> image = mem_;
    for (uint64_t n = 1;; ++n) {
      mem_ = image->CopyDisk();
      if (prepare) prepare();
      auto process = mem_->NewProcess();
      std::function<void()> crash = [process] { process->Kill(); };
      if (GetParam() == Mode::kPowerLoss || GetParam() == Mode::kPowerLossAfter) {
        crash = [process] { process->LosePower(); };
      }
      auto plan = std::make_shared<FaultPlan>(crash);
      plan->Add({std::nullopt, n, Action()});
      const Status s = op(std::make_shared<FaultStorage>(process, plan));
      if (plan->fired() == 0) {
        EXPECT_TRUE(s.ok()) << s.ToString();
        EXPECT_GT(n, 1u);
        RecordProperty("runs", static_cast<int>(n - 1));
        return static_cast<int>(n - 1);
      }
      const Call at = plan->trace()[n - 1];
      mem_ = mem_->NewProcess();  // The checks' own: the one that ran may be dead.
      SCOPED_TRACE("fault at call " + std::to_string(n) + " (" + CallName(at) +
                   "): " + s.ToString());
      check(s, *plan);
      if (HasFailure()) return static_cast<int>(n);
    }
  }

  FaultAction Action() const {
    switch (GetParam()) {
      case Mode::kFail:
        return FaultAction::kFail;
      case Mode::kKill:
      case Mode::kPowerLoss:
        return FaultAction::kCrash;
      case Mode::kPowerLossAfter:
        return FaultAction::kCrashAfter;
      case Mode::kCorrupt:
        return FaultAction::kCorrupt;
    }
    return FaultAction::kFail;
  }

  // The writer's check: backup `name` written from the source is whole if it succeeded, and
  // either whole or absent if not, and written again by a fresh run then.
  void CheckWriter(const Status& s, const std::string& name, const std::string& base,
                   const std::set<std::string>& before) {
    if (s.ok()) {
      EXPECT_EQ(Check(mem_->NewProcess(), At(name), src_), "");
    } else {
      EXPECT_EQ(CheckStore(before, name, src_), "");
      auto again = Backup(mem_->NewProcess(), name, base);
      const bool whole_before = again.status().code() == ErrorCode::kBackupAlreadyExists &&
                                GetParam() == Mode::kPowerLossAfter;
      EXPECT_TRUE(again.ok() || whole_before) << again.status().ToString();
      EXPECT_EQ(Check(mem_->NewProcess(), At(name), src_), "");
    }
    written_[name] = src_;  // For this run's last look only.
    EXPECT_EQ(CheckStore(before), "");
    written_.erase(name);
  }

  // b0 <- b1 <- ... <- b<n-1>, one day apart, each with a file that grows, one that changes
  // now and then and one that stays.
  void WriteChain(int n) {
    const std::string fixed = RandomBytes(6000, 11);
    std::string grown = RandomBytes(9000, 12);
    for (int i = 0; i < n; ++i) {
      grown += "line " + std::to_string(i) + "\n";
      SetSource({{"log", grown}, {"conf", "v" + std::to_string(i / 2)}, {"fixed", fixed}});
      Written("b" + std::to_string(i), i == 0 ? "" : "b" + std::to_string(i - 1), i + 1);
    }
  }

  // Prune of the store keeping the last `n` backups, through `storage`.
  static Status KeepLast(std::shared_ptr<const Storage> storage, int n) {
    PrunePolicy p;
    p.keep_last = n;
    Context ctx;
    ctx.storage = std::move(storage);
    return PruneStore(kStore, p, ctx).status();
  }

  // Prune keeping the last 2 of a 4-deep chain: whatever call it stops at, what it leaves is
  // the whole store, or the kept backups with the older ones not yet removed, each opening
  // byte-exact; a fresh prune then finishes.
  void SweepPruneKeepLast() {
    const auto prune = [](std::shared_ptr<const Storage> storage) {
      return KeepLast(std::move(storage), 2);
    };
    const int runs =
        Sweep([&] { WriteChain(4); }, prune,
              [&](const Status& s, const FaultPlan& f) {
                // A prune that failed before removing anything removed nothing; one that stopped
                // while removing left the older backups it had not removed yet, each with its bases
                // (a backup is only ever marked until its removal: it still opens).
                const bool removing = f.count(Call::kRemove) > 0;
                const bool failed =
                    (GetParam() == Mode::kFail || GetParam() == Mode::kCorrupt) && !s.ok();
                std::set<std::string> left;  // The backups (marks and work folders start with '.').
                for (const std::string& n : mem_->List(kStore)) {
                  if (n.front() != '.') left.insert(n);
                }
                if (failed && !removing) {
                  EXPECT_EQ(left, (std::set<std::string>{"b0", "b1", "b2", "b3"}));
                } else {
                  EXPECT_TRUE(left == std::set<std::string>({"b2", "b3"}) ||
                              left == std::set<std::string>({"b0", "b2", "b3"}) ||
                              left == std::set<std::string>({"b0", "b1", "b2", "b3"}))
                      << ::testing::PrintToString(left);
                }
                EXPECT_EQ(CheckStore(left), "");
                if (s.ok()) {
                  EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b2", "b3"}));
                }
                EXPECT_TRUE(prune(mem_->NewProcess()).ok());
                EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b2", "b3"}));
                EXPECT_EQ(CheckStore({"b2", "b3"}), "");
                size_t depth = 0;
                EXPECT_EQ(Check(mem_, At("b2"), written_["b2"], &depth), "");
                EXPECT_EQ(depth, 1u);
              });
    EXPECT_GT(runs, 20);
  }

  // Flatten of the top of a 3-deep chain: a copy that reads byte-exact, or none and a fresh
  // run makes one.
  void SweepFlatten() {
    const auto flatten = [&](std::shared_ptr<const Storage> storage) -> Status {
      ChainOptions o;
      o.storage = storage;
      ASSIGN_OR_RETURN(auto chain, OpenResolved(At("b2"), o));
      return FlattenBackup(*chain, At("flat"), false, *storage).status();
    };
    const int runs =
        Sweep([&] { WriteChain(3); }, flatten,
              [&](const Status& s, const FaultPlan&) {
                const Tree& want = written_["b2"];
                EXPECT_EQ(CheckStore({"b0", "b1", "b2"}, "flat", want), "");
                if (!s.ok()) {
                  const Status again = flatten(mem_->NewProcess());
                  EXPECT_TRUE(again.ok() || (GetParam() == Mode::kPowerLossAfter &&
                                             again.code() == ErrorCode::kBackupAlreadyExists))
                      << again.ToString();
                }
                size_t depth = 0;
                EXPECT_EQ(Check(mem_, At("flat"), want, &depth), "");
                EXPECT_EQ(depth, 1u);
              });
    EXPECT_GT(runs, 10);
  }

  const Tree first_{{"a/one", RandomBytes(7000, 13)},
                    {"a/two", "two"},
                    {"dup1", "same bytes"},
                    {"dup2", "same bytes"},
                    {"empty", ""}};
  const Tree second_{{"a/one", first_.at("a/one") + "appended"},
                     {"moved/two", "two"},
                     {"dup1", "same bytes"},
                     {"new", RandomBytes(3000, 14)}};
};

TEST_P(FaultSweepTest, FullBackup) {
  const int runs = Sweep([&] { SetSource(first_); },
                         [&](auto storage) { return Backup(storage, "b0").status(); },
                         [&](const Status& s, const FaultPlan&) { CheckWriter(s, "b0", "", {}); });
  EXPECT_GT(runs, 10);
}

TEST_P(FaultSweepTest, IncrementalBackup) {
  const int runs = Sweep(
      [&] {
        SetSource(first_);
        Written("b0");
        SetSource(second_);
      },
      [&](auto storage) { return Backup(storage, "b1", "b0", 2).status(); },
      [&](const Status& s, const FaultPlan&) { CheckWriter(s, "b1", "b0", {"b0"}); });
  EXPECT_GT(runs, 10);
}

TEST_P(FaultSweepTest, BackupTakingADeadWritersOver) {
  const int runs = Sweep(
      [&] {
        SetSource(first_);
        Written("b0");
        SetSource(second_);
        auto dying = mem_->NewProcess();
        auto plan = std::make_shared<FaultPlan>([dying] { dying->Kill(); });
        plan->Add({Call::kClose, 1, FaultAction::kCrash});
        ASSERT_FALSE(Backup(std::make_shared<FaultStorage>(dying, plan), "b1", "b0").ok());
      },
      [&](auto storage) { return Backup(storage, "b1", "b0", 2).status(); },
      [&](const Status& s, const FaultPlan&) { CheckWriter(s, "b1", "b0", {"b0"}); });
  EXPECT_GT(runs, 10);
}

TEST_P(FaultSweepTest, ReadChain) {
  const int runs = Sweep([&] { WriteChain(3); },
                         [&](auto storage) -> Status {
                           const std::string why = Check(storage, At("b2"), written_["b2"]);
                           EXPECT_EQ(why.rfind("wrong", 0), std::string::npos) << why;
                           return why.empty() ? Status::OK() : Status::IOError(why, 5);
                         },
                         [&](const Status&, const FaultPlan&) {
                           EXPECT_EQ(CheckStore({"b0", "b1", "b2"}), "");
                         });
  EXPECT_GT(runs, 10);
}

TEST_P(FaultSweepTest, PruneKeepLast) { SweepPruneKeepLast(); }

TEST_P(FaultSweepTest, PruneSparesARunningWritersBase) {
  const auto prune = [](std::shared_ptr<const Storage> storage) {
    return KeepLast(std::move(storage), 1);
  };
  std::string base_uuid;
  std::unique_ptr<BackupWriter> running;  // Of a live process of each run's disk.
  const auto start_writer = [&] {
    std::string notice;
    auto w =
        mem_->NewProcess()->StartBackup(At("b3"), WriterIntent{"u3", base_uuid, At("b0")}, &notice);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    running = std::move(*w);
  };
  const auto setup = [&] {
    SetSource(first_);
    for (int i = 0; i < 3; ++i) Written("b" + std::to_string(i), "", i + 1);
    auto b0 = Backup::Open(*mem_, At("b0"), nullptr);
    ASSERT_TRUE(b0.ok());
    base_uuid = (*b0)->header().uuid;
  };
  const int runs = Sweep(
      setup, prune,
      [&](const Status&, const FaultPlan&) {
        EXPECT_EQ(CheckStore({"b0", "b2"}), "");
        // A power loss ends the writer too: its base may go then.
        const bool writing = GetParam() == Mode::kFail || GetParam() == Mode::kKill;
        EXPECT_TRUE(prune(mem_->NewProcess()).ok());
        EXPECT_EQ(
            CheckStore(writing ? std::set<std::string>{"b0", "b2"} : std::set<std::string>{"b2"}),
            "");
        if (writing) {
          EXPECT_EQ(mem_->List(kStore), (std::vector<std::string>{"b0", "b2", "b3"}));
        }
        running.reset();
      },
      start_writer);
  EXPECT_GT(runs, 20);
}

TEST_P(FaultSweepTest, Flatten) { SweepFlatten(); }

INSTANTIATE_TEST_SUITE_P(EveryCall, FaultSweepTest,
                         ::testing::Values(Mode::kFail, Mode::kKill, Mode::kPowerLoss,
                                           Mode::kPowerLossAfter),
                         ModeName);

// Bytes silently wrong at any one call (a disk's, a network's, a copy's fault) of the
// operations that copy backups and then rely on the copy: a flatten or a prune either fails
// or leaves only backups that read byte-exact. (A backup's writer does not read back what it
// wrote: `stitch verify` finds that.)
class CorruptSweepTest : public FaultSweepTest {};

TEST_P(CorruptSweepTest, PruneKeepLast) { SweepPruneKeepLast(); }
TEST_P(CorruptSweepTest, Flatten) { SweepFlatten(); }

INSTANTIATE_TEST_SUITE_P(EveryCall, CorruptSweepTest, ::testing::Values(Mode::kCorrupt), ModeName);

}  // namespace
}  // namespace stitchfs::engine
