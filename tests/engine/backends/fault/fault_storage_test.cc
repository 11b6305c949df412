#include "engine/backends/fault/fault_storage.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "engine/backends/local/local_storage.h"
#include "engine/backends/mem/mem_storage.h"
#include "engine/storage/store_moves.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

class FaultStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(mem_->Put("/s/b0/.backup", "manifest").ok());
    ASSERT_TRUE(mem_->Put("/s/b0/a", "alpha").ok());
  }
  // A FaultStorage over a new process of the disk, whose crashes kill that process.
  std::shared_ptr<FaultStorage> Faulty(std::vector<Fault> faults) {
    auto process = mem_->NewProcess();
    auto plan = std::make_shared<FaultPlan>([process] { process->Kill(); });
    for (Fault& f : faults) plan->Add(std::move(f));
    return std::make_shared<FaultStorage>(process, plan);
  }
  static StatusOr<std::unique_ptr<BackupWriter>> Start(const Storage& s, const std::string& at) {
    std::string notice;
    return s.StartBackup(at, WriterIntent{testutil::NewUuid(), "", ""}, &notice);
  }

  std::shared_ptr<MemStorage> mem_ = MemStorage::Create();
};

TEST_F(FaultStorageTest, CountsCallsByKind) {
  auto s = Faulty({});
  auto folder = s->OpenFolder("/s/b0");
  ASSERT_TRUE(folder.ok());
  auto file = s->OpenDataFile(*folder, "a", 5);
  ASSERT_TRUE(file.ok());
  char buf[5];
  ASSERT_TRUE((*file)->ReadAt(0, buf).ok());
  ASSERT_TRUE((*file)->ReadAt(2, buf).ok());
  EXPECT_EQ(s->plan().count(Call::kOpenFolder), 1u);
  EXPECT_EQ(s->plan().count(Call::kRead), 2u);
  EXPECT_EQ(s->plan().total(), 4u);
  EXPECT_EQ(s->plan().trace(),
            (std::vector<Call>{Call::kOpenFolder, Call::kOpenDataFile, Call::kRead, Call::kRead}));
  EXPECT_STREQ(CallName(Call::kSetAside), "SetAside");
}

TEST_F(FaultStorageTest, FailsTheNthCallOfAKindWithTheChosenStatus) {
  auto s = Faulty({{Call::kOpenDataFile, 2, FaultAction::kFail, Status::BackupDamaged("boom")}});
  auto folder = *s->OpenFolder("/s/b0");
  EXPECT_TRUE(s->OpenDataFile(folder, "a", 5).ok());
  auto second = s->OpenDataFile(folder, "a", 5);
  EXPECT_EQ(second.status().code(), ErrorCode::kBackupDamaged);
  EXPECT_EQ(second.status().message(), "boom");
  EXPECT_TRUE(s->OpenDataFile(folder, "a", 5).ok());
  EXPECT_EQ(s->plan().fired(), 1);
}

TEST_F(FaultStorageTest, FailsTheNthCallOfAnyKind) {
  auto s = Faulty({{std::nullopt, 3, FaultAction::kFail}});
  EXPECT_TRUE(s->StatManifest("/s/b0").ok());
  EXPECT_TRUE(s->ScanStore("/s").ok());
  EXPECT_EQ(s->OpenFolder("/s/b0").status().code(), ErrorCode::kIOError);
  EXPECT_TRUE(s->OpenFolder("/s/b0").ok());
}

TEST_F(FaultStorageTest, WritersFilesAndMovesAreWrappedToo) {
  auto s = Faulty({{Call::kAppend, 2, FaultAction::kFail}, {Call::kSetAside, 1}});
  auto w = Start(*s, "/s/b1");
  ASSERT_TRUE(w.ok());
  auto f = (*w)->CreateDataFile("x");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->fd(), -1);
  EXPECT_TRUE((*f)->Append("one").ok());
  EXPECT_FALSE((*f)->Append("two").ok());
  auto moves = s->MovesFor("/s");
  ASSERT_TRUE(moves.ok());
  EXPECT_FALSE((*moves)->SetAside("/s/b0").ok());
  EXPECT_TRUE(mem_->StatManifest("/s/b0")->has_value());
  EXPECT_EQ(s->plan().count(Call::kMovesFor), 1u);
}

TEST_F(FaultStorageTest, AStalledCallWaitsForRelease) {
  auto s = Faulty({{Call::kStatManifest, 1, FaultAction::kStall}});
  std::atomic<bool> done{false};
  std::thread t([&] {
    EXPECT_TRUE(s->StatManifest("/s/b0").ok());
    done = true;
  });
  ASSERT_TRUE(s->plan().WaitStalled(std::chrono::seconds(5)));
  EXPECT_FALSE(done.load());
  EXPECT_TRUE(s->StatManifest("/s/b0").ok());  // Other calls go on meanwhile.
  s->plan().Release();
  t.join();
  EXPECT_TRUE(done.load());
}

TEST_F(FaultStorageTest, ACrashFailsEveryLaterCallAndKillsTheProcess) {
  int crashes = 0;
  auto process = mem_->NewProcess();
  auto plan = std::make_shared<FaultPlan>([&] {
    ++crashes;
    process->Kill();
  });
  plan->Add({Call::kCreateDataFile, 2, FaultAction::kCrash});
  FaultStorage s(process, plan);
  auto w = Start(s, "/s/b1");
  ASSERT_TRUE(w.ok());
  auto f = (*w)->CreateDataFile("x");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*w)->CreateDataFile("y").status().sys_errno(), ECANCELED);
  EXPECT_EQ((*f)->Append("z").sys_errno(), ECANCELED);
  EXPECT_EQ(s.OpenFolder("/s/b0").status().sys_errno(), ECANCELED);
  EXPECT_TRUE(plan->crashed());
  EXPECT_EQ(crashes, 1);
  f->reset();
  w->reset();  // Dead: its partial backup and its lock stay, a dead writer's.
  EXPECT_TRUE(mem_->Get("/s/b1/.lock").has_value());
  std::string notice;
  EXPECT_TRUE(mem_->StartBackup("/s/b1", WriterIntent{"u", "", ""}, &notice).ok());
  EXPECT_NE(notice.find("took over"), std::string::npos);
}

TEST_F(FaultStorageTest, ACrashAfterACallLetsItTakeEffect) {
  auto s = Faulty({{Call::kFinish, 1, FaultAction::kCrashAfter}});
  auto w = Start(*s, "/s/b1");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->Finish("done").sys_errno(), ECANCELED);
  EXPECT_EQ(mem_->Get("/s/b1/.backup"), "done");
}

TEST_F(FaultStorageTest, WorksOverAnyStorage) {
  testutil::TempDir dir;
  auto plan = std::make_shared<FaultPlan>();
  plan->Add({Call::kClose, 1, FaultAction::kFail});
  FaultStorage s(LocalStorage::Create(), plan);
  auto w = Start(s, dir / "b0");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = (*w)->CreateDataFile("x");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)->Append("bytes").ok());
  EXPECT_FALSE((*f)->Close().ok());
  w->reset();
  EXPECT_FALSE(std::filesystem::exists(dir / "b0"));
}

}  // namespace
}  // namespace stitchfs::engine
