// A mount of one backup whose chain changes on disk under it (SingleView).
#include "fs/single_view.h"

#include <filesystem>
#include <future>
#include <thread>

#include "engine/write/flatten.h"
#include "tests/fs/view_fixture.h"

namespace stitchfs::fs::fstest {
namespace {

namespace fs = std::filesystem;

class SingleViewTest : public ViewTest {
 protected:
  void SetUp() override {
    ViewTest::SetUp();
    single_ = std::make_unique<SingleView>(std::make_shared<const BackupView>(backup_, Attr()),
                                           testutil::LocalChain(), Attr(),
                                           [this](const std::string& l) { log_.push_back(l); });
  }
  std::string Folder(const char* name) const {
    return dir_ / (std::string("we\"ird \\ dir/") + name);
  }
  // As stitch prune does: b1 flattened in place (same uuid), then b0 removed.
  void FlattenB1AndRemoveB0() {
    auto b1 = engine::OpenResolved(Folder("b1"), testutil::LocalChain());
    ASSERT_OK(b1.status());
    ASSERT_OK(engine::FlattenBackup(**b1, Folder("b1-flat"), /*keep_uuid=*/true).status());
    fs::rename(Folder("b1"), Folder("b1-old"));
    fs::rename(Folder("b1-flat"), Folder("b1"));
    fs::remove_all(Folder("b1-old"));
    fs::remove_all(Folder("b0"));
  }
  std::string Read(uint64_t ino) {
    auto reads = single_->Reads(ino);
    if (!reads.ok()) return reads.status().ToString();
    const engine::RandomAccessFile& r = *(*reads)->reader();
    std::string out(r.size(), '\0');
    auto n = r.ReadAt(0, out);
    return n.ok() ? out.substr(0, *n) : n.status().ToString();
  }

  std::unique_ptr<SingleView> single_;
  std::vector<std::string> log_;
};

TEST_F(SingleViewTest, AFileReadsThroughTheChainAsItIsAfterAPrune) {
  const uint64_t log = Ino("log/app.log"), mirror = Ino(".appended/log/app.log");
  const struct stat before = *single_->Attr(log);
  FlattenB1AndRemoveB0();
  EXPECT_EQ(Read(log), a_ + b_ + c_);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("its chain changed on disk"), std::string::npos) << log_[0];
  EXPECT_NE(single_->Now().get(), view_.get());
  // What the mount shows stays the first view's: attributes, and b2's own tail.
  EXPECT_EQ(single_->Attr(log)->st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(single_->Attr(log)->st_size, before.st_size);
  EXPECT_EQ(Read(mirror), c_);
  EXPECT_EQ(Read(Ino("new/name.bin")), "renamed content");
}

// A file whose reader the mount kept, its data file's fd let go (one fd for the whole chain)
// and the file gone under it: the read fails, the chain is opened again, a second read works.
TEST_F(SingleViewTest, AKeptReaderWhoseFileWentIsReadAgainThroughTheChainOpenedAgain) {
  engine::ResolveOptions r;
  r.origins = true;
  auto one_fd = engine::OpenResolved(Folder("b2"), testutil::LocalChain(/*max_open_files=*/1), r);
  ASSERT_OK(one_fd.status());
  single_ = std::make_unique<SingleView>(std::make_shared<const BackupView>(*one_fd, Attr()),
                                         testutil::LocalChain(1), Attr(), nullptr);
  const uint64_t log = Ino("log/app.log");
  auto kept = single_->Reads(log);
  ASSERT_OK(kept.status());
  FlattenB1AndRemoveB0();
  std::string buf(a_.size() + b_.size() + c_.size(), '\0');
  auto n = (*kept)->reader()->ReadAt(0, buf);  // b0's part: its fd was let go, the file is gone.
  ASSERT_FALSE(n.ok());
  EXPECT_TRUE(single_->ReadFailed(log, n.status()));
  EXPECT_EQ(Read(log), a_ + b_ + c_);
  EXPECT_FALSE(single_->ReadFailed(Ino(".appended/log/app.log"), n.status()))
      << "the top's own files are never read otherwise";
}

// Two reads through the old chain fail once it changed: the first opens it again, and the
// second, on another thread, is read again too (was: EIO, the chain being already renewed).
TEST_F(SingleViewTest, EveryReadFailingOnTheOldChainIsReadAgain) {
  auto one_fd = engine::OpenResolved(Folder("b2"), testutil::LocalChain(/*max_open_files=*/1));
  ASSERT_OK(one_fd.status());
  single_ = std::make_unique<SingleView>(std::make_shared<const BackupView>(*one_fd, Attr()),
                                         testutil::LocalChain(1), Attr(), nullptr);
  const uint64_t log = Ino("log/app.log");
  std::string buf(a_.size() + b_.size() + c_.size(), '\0');
  std::promise<void> got, renewed;
  std::promise<bool> retried;
  std::thread other([&] {
    auto mine = single_->Reads(log);  // Through the old chain.
    got.set_value();
    renewed.get_future().wait();
    std::string theirs(buf.size(), '\0');
    auto n = mine.ok() ? (*mine)->reader()->ReadAt(0, theirs) : mine.status();
    retried.set_value(!n.ok() && single_->ReadFailed(log, n.status()));
  });
  auto kept = single_->Reads(log);
  ASSERT_OK(kept.status());
  got.get_future().wait();
  FlattenB1AndRemoveB0();
  auto n = (*kept)->reader()->ReadAt(0, buf);
  ASSERT_FALSE(n.ok());
  EXPECT_TRUE(single_->ReadFailed(log, n.status())) << "the first opens the chain again";
  renewed.set_value();
  EXPECT_TRUE(retried.get_future().get()) << "the second is read again too";
  other.join();
  EXPECT_EQ(Read(log), a_ + b_ + c_);
}

TEST_F(SingleViewTest, DamageIsNotAChangeOfTheChain) {
  fs::resize_file(Folder("b0") + "/log/app.log", 10);  // Cut short; no manifest changed.
  const auto first = single_->Now();
  const std::string got = Read(Ino("log/app.log"));
  EXPECT_NE(got.find("BACKUP_DAMAGED"), std::string::npos) << got.substr(0, 200);
  EXPECT_EQ(single_->Now(), first) << "not opened again";
  EXPECT_TRUE(log_.empty());
  EXPECT_EQ(Read(Ino("metadata/db.sql")), kSql) << "the others read on";
}

TEST_F(SingleViewTest, AnotherBackupInItsPlaceIsNeverReadForIt) {
  testutil::FixtureBackup other(Folder("b2-other"));
  other.header.timestamp = "2026-10-03 00:00:00";
  other.AddStored("log/app.log", std::string(a_.size() + b_.size() + c_.size(), 'Z'));
  ASSERT_OK(other.Write());
  fs::remove_all(Folder("b2"));
  fs::remove_all(Folder("b0"));
  fs::rename(Folder("b2-other"), Folder("b2"));
  const std::string got = Read(Ino("log/app.log"));
  // (Not one 'Z': the error read may name the test's folder, whose random name may hold one.)
  EXPECT_EQ(got.find(std::string(8, 'Z')), std::string::npos) << got.substr(0, 200);
  EXPECT_NE(got, std::string(a_.size() + b_.size() + c_.size(), 'Z'));
  ASSERT_FALSE(log_.empty());
  EXPECT_NE(log_[0].find("shows other content now"), std::string::npos) << log_[0];
}

}  // namespace
}  // namespace stitchfs::fs::fstest
