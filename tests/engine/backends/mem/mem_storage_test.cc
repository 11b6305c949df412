#include "engine/backends/mem/mem_storage.h"

#include <gtest/gtest.h>

#include "engine/storage/store_moves.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

class MemStorageTest : public ::testing::Test {
 protected:
  // A folder `path` holding `.backup` with `text`.
  void PutBackup(const std::string& path, const std::string& text) {
    ASSERT_TRUE(mem_->Put(path + "/.backup", text).ok());
  }
  std::string ReadAll(const RandomAccessFile& f) {
    std::string out(f.size(), '\0');
    auto n = f.ReadAt(0, out);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return out;
  }
  StatusOr<std::unique_ptr<BackupWriter>> Start(const MemStorage& s, const std::string& path,
                                                std::string* notice = nullptr) {
    std::string ignored;
    return s.StartBackup(path, WriterIntent{testutil::NewUuid(), "", ""},
                         notice ? notice : &ignored);
  }
  // Writes data file `name` holding `bytes` through `w`.
  void WriteData(BackupWriter& w, const std::string& name, const std::string& bytes) {
    auto f = w.CreateDataFile(name);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE((*f)->Append(bytes).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }

  std::shared_ptr<MemStorage> mem_ = MemStorage::Create();
};

TEST_F(MemStorageTest, OpensFoldersAndManifests) {
  PutBackup("/s/b0", "manifest one");
  auto folder = mem_->OpenFolder("/s/b0/");
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  EXPECT_EQ((*folder)->path(), "/s/b0");
  auto m = mem_->OpenManifest(**folder);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(ReadAll(*m->bytes), "manifest one");
  auto id = mem_->StatManifest("/s/b0");
  ASSERT_TRUE(id.ok() && id->has_value());
  EXPECT_EQ(**id, m->identity);
  EXPECT_EQ(mem_->OpenFolder("/s/none").status().code(), ErrorCode::kBackupNotFound);
  EXPECT_FALSE(mem_->StatManifest("/s/none")->has_value());
  EXPECT_EQ(mem_->LocatorFor("/s/b0"), "File('/s/b0')");
}

TEST_F(MemStorageTest, ARewrittenManifestHasAnotherIdentity) {
  PutBackup("/s/b0", "v1");
  auto before = **mem_->StatManifest("/s/b0");
  PutBackup("/s/b0", "v2");
  EXPECT_NE(**mem_->StatManifest("/s/b0"), before);
}

TEST_F(MemStorageTest, AFolderWithOnlyALockHasNoManifest) {
  ASSERT_TRUE(mem_->Put("/s/b0/.lock", "uuid\n").ok());
  auto folder = mem_->OpenFolder("/s/b0");
  ASSERT_TRUE(folder.ok());
  auto m = mem_->OpenManifest(**folder);
  EXPECT_EQ(m.status().code(), ErrorCode::kBackupNotFound);
  EXPECT_NE(m.status().message().find(".lock"), std::string::npos) << m.status().ToString();
}

TEST_F(MemStorageTest, DataFilesFollowTheLocalRules) {
  PutBackup("/s/b0", "m");
  ASSERT_TRUE(mem_->Put("/s/b0/data/a.bin", "0123456789").ok());
  auto folder = *mem_->OpenFolder("/s/b0");
  auto file = mem_->OpenDataFile(folder, "data/a.bin", 10);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(ReadAll(**file), "0123456789");
  EXPECT_EQ(mem_->OpenDataFile(folder, "data/none", 1).status().code(), ErrorCode::kBackupDamaged);
  EXPECT_EQ(mem_->OpenDataFile(folder, "data", 1).status().code(), ErrorCode::kBackupDamaged);
  EXPECT_EQ(mem_->OpenDataFile(folder, "../b1/x", 1).status().code(), ErrorCode::kInsecurePath);
  EXPECT_EQ(mem_->OpenDataFile(folder, "/s/b0/data/a.bin", 1).status().code(),
            ErrorCode::kInsecurePath);
  // The size is the file's own; a file cut short under its reader is damaged.
  EXPECT_EQ((*file)->CheckDeclaredSize(11).code(), ErrorCode::kBackupDamaged);
  ASSERT_TRUE(mem_->Truncate("/s/b0/data/a.bin", 4).ok());
  std::string buf(10, '\0');
  EXPECT_EQ((*file)->ReadAt(0, buf).status().code(), ErrorCode::kBackupDamaged);
}

TEST_F(MemStorageTest, AFileRemovedUnderItsReaderStillReads) {
  PutBackup("/s/b0", "m");
  ASSERT_TRUE(mem_->Put("/s/b0/a", "bytes").ok());
  auto file = *mem_->OpenDataFile(*mem_->OpenFolder("/s/b0"), "a", 5);
  mem_->RemoveAll("/s/b0/a");
  EXPECT_EQ(ReadAll(*file), "bytes");
}

TEST_F(MemStorageTest, AReplacedFolderIsRefused) {
  PutBackup("/s/b0", "m");
  ASSERT_TRUE(mem_->Put("/s/b0/a", "old").ok());
  auto folder = *mem_->OpenFolder("/s/b0");
  mem_->RemoveAll("/s/b0");
  PutBackup("/s/b0", "m");
  ASSERT_TRUE(mem_->Put("/s/b0/a", "new").ok());
  EXPECT_EQ(mem_->OpenDataFile(folder, "a", 3).status().code(), ErrorCode::kBackupDamaged);
  EXPECT_EQ(mem_->OpenManifest(*folder).status().code(), ErrorCode::kBackupDamaged);
  EXPECT_EQ(mem_->ReadIndex(*folder).status().code(), ErrorCode::kBackupDamaged);
}

TEST_F(MemStorageTest, IndexesAreWrittenAndReadWhole) {
  PutBackup("/s/b0", "m");
  auto folder = *mem_->OpenFolder("/s/b0");
  EXPECT_EQ(mem_->ReadIndex(*folder).status().code(), ErrorCode::kBackupNotFound);
  ASSERT_TRUE(mem_->WriteIndex(*folder, "index one").ok());
  ASSERT_TRUE(mem_->WriteIndex(*folder, "index two").ok());
  auto got = mem_->ReadIndex(*folder);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->view(), "index two");
}

TEST_F(MemStorageTest, ScanStoreListsFoldersWithAManifestByName) {
  PutBackup("/s/b2", "m");
  PutBackup("/s/b1", "m");
  PutBackup("/s/.b3.stitch-deleting", "m");
  ASSERT_TRUE(mem_->Put("/s/b4/.lock", "u").ok());
  ASSERT_TRUE(mem_->Put("/s/file", "x").ok());
  auto listed = mem_->ScanStore("/s");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "b1");
  EXPECT_EQ((*listed)[1].path, "/s/b2");
  EXPECT_EQ((*listed)[1].manifest, **mem_->StatManifest("/s/b2"));
  EXPECT_EQ((*listed)[1].folder, (*mem_->OpenFolder("/s/b2"))->identity());
  EXPECT_EQ(mem_->ScanStore("/none").status().code(), ErrorCode::kBackupNotFound);
}

TEST_F(MemStorageTest, AFinishedBackupOpensAndItsLockIsGone) {
  auto w = Start(*mem_, "/s/b0");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  WriteData(**w, "d/a", "alpha");
  auto staged = (*w)->CreateStaged("1", "d/b");
  ASSERT_TRUE(staged.ok());
  ASSERT_TRUE((*staged)->Append("beta").ok());
  ASSERT_TRUE((*staged)->Close().ok());
  ASSERT_TRUE((*w)->Publish("1", "d/b").ok());
  EXPECT_FALSE(mem_->StatManifest("/s/b0")->has_value());
  ASSERT_TRUE((*w)->Finish("manifest").ok());
  w->reset();
  EXPECT_EQ(mem_->Get("/s/b0/.backup"), "manifest");
  EXPECT_EQ(mem_->Get("/s/b0/d/b"), "beta");
  EXPECT_EQ(mem_->List("/s/b0"), (std::vector<std::string>{".backup", "d"}));
}

TEST_F(MemStorageTest, AWriterDroppedWithoutFinishLeavesNothing) {
  auto w = Start(*mem_, "/s/b0");
  ASSERT_TRUE(w.ok());
  WriteData(**w, "a", "alpha");
  w->reset();
  EXPECT_EQ(mem_->List("/s"), std::vector<std::string>{});
}

TEST_F(MemStorageTest, StartBackupRefusesWhatTheLocalBackendRefuses) {
  PutBackup("/s/b0", "m");
  EXPECT_EQ(Start(*mem_, "/s/b0").status().code(), ErrorCode::kBackupAlreadyExists);
  EXPECT_EQ(Start(*mem_, "/s/b0/inner").status().code(), ErrorCode::kBackupAlreadyExists);
  ASSERT_TRUE(mem_->Put("/s/full/x", "x").ok());
  EXPECT_EQ(Start(*mem_, "/s/full").status().code(), ErrorCode::kBackupAlreadyExists);
  EXPECT_EQ(Start(*mem_, "/s/full/x").status().code(), ErrorCode::kBackupAlreadyExists);
  auto live = Start(*mem_, "/s/b1");
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(Start(*mem_->NewProcess(), "/s/b1").status().code(), ErrorCode::kBackupAlreadyExists);
  EXPECT_EQ(Start(*mem_, "/s/b1").status().code(), ErrorCode::kBackupAlreadyExists);
  EXPECT_EQ(Start(*mem_, "/s/b1/inner").status().code(), ErrorCode::kBackupAlreadyExists);
}

TEST_F(MemStorageTest, AKilledWritersBackupIsTakenOverOnce) {
  auto dying = mem_->NewProcess();
  auto w = Start(*dying, "/s/b0");
  ASSERT_TRUE(w.ok());
  WriteData(**w, "partial", "bytes");
  dying->Kill();
  EXPECT_FALSE(dying->alive());
  EXPECT_EQ((*w)->CreateDataFile("more").status().sys_errno(), ECANCELED);
  w->reset();  // A dead process cleans nothing up.
  EXPECT_EQ(mem_->Get("/s/b0/partial"), "bytes");
  std::string notice;
  auto next = Start(*mem_, "/s/b0", &notice);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_NE(notice.find("took over"), std::string::npos);
  EXPECT_FALSE(mem_->Get("/s/b0/partial").has_value());
  EXPECT_EQ(Start(*mem_->NewProcess(), "/s/b0").status().code(), ErrorCode::kBackupAlreadyExists);
}

TEST_F(MemStorageTest, APowerLossKeepsOnlyWhatWasMadeDurable) {
  PutBackup("/s/b0", "kept");
  auto done = Start(*mem_, "/s/b1");
  ASSERT_TRUE(done.ok());
  WriteData(**done, "a", "alpha");
  ASSERT_TRUE((*done)->Finish("m1").ok());
  auto open = Start(*mem_, "/s/b2");
  ASSERT_TRUE(open.ok());
  WriteData(**open, "a", "lost");
  mem_->LosePower();
  EXPECT_FALSE(mem_->alive());
  EXPECT_EQ(mem_->Get("/s/b0/.backup"), "kept");
  EXPECT_EQ(mem_->Get("/s/b1/a"), "alpha");
  EXPECT_EQ(mem_->List("/s"), (std::vector<std::string>{"b0", "b1"}));
  auto after = mem_->NewProcess();
  EXPECT_TRUE(after->alive());
  EXPECT_TRUE(Start(*after, "/s/b2").ok());
}

TEST_F(MemStorageTest, AListingMayLagBehindReadsByName) {
  mem_->SetListingLag(2);
  PutBackup("/s/b0", "m");
  EXPECT_EQ(mem_->ScanStore("/s").status().code(), ErrorCode::kBackupNotFound);
  EXPECT_TRUE(mem_->StatManifest("/s/b0")->has_value());
  PutBackup("/s/b1", "m");
  PutBackup("/s/b2", "m");
  auto listed = mem_->ScanStore("/s");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].name, "b0");
  mem_->SetListingLag(0);
  EXPECT_EQ(mem_->ScanStore("/s")->size(), 3u);
}

TEST_F(MemStorageTest, StoreMovesSetAsideSwapAndLock) {
  PutBackup("/s/b0", "m0");
  PutBackup("/s/b1", "m1");
  auto moves = mem_->MovesFor("/s");
  ASSERT_TRUE(moves.ok()) << moves.status().ToString();
  ASSERT_TRUE((*moves)->Lock().ok());
  auto other = mem_->NewProcess()->MovesFor("/s");
  EXPECT_EQ((*other)->Lock().sys_errno(), EBUSY);
  ASSERT_TRUE((*moves)->SetAside("/s/b0").ok());
  EXPECT_TRUE(mem_->StatManifest("/s/b0")->has_value()) << "marked, it still opens";
  EXPECT_TRUE(*mem_->BeingRemoved("/s/b0"));
  EXPECT_FALSE(*mem_->BeingRemoved("/s/b1"));
  (*moves)->PutBack("/s/b0");
  EXPECT_FALSE(*mem_->BeingRemoved("/s/b0"));
  EXPECT_TRUE(mem_->StatManifest("/s/b0")->has_value());
  auto copy = (*moves)->StartReplace("/s/b1", "uuid");
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  WriteData(**copy, "flat", "flat bytes");
  ASSERT_TRUE((*copy)->Finish("m1 flat").ok());
  EXPECT_EQ((*copy)->bytes_written(), std::string("flat bytes"
                                                  "m1 flat")
                                          .size());
  EXPECT_EQ(mem_->Get("/s/b1/.backup"), "m1 flat");
  EXPECT_EQ(mem_->List("/s"), (std::vector<std::string>{"b0", "b1"}));
  ASSERT_TRUE((*moves)->SetAside("/s/b0").ok());
  ASSERT_TRUE((*moves)->Remove("/s/b0").ok());
  EXPECT_EQ(mem_->List("/s"), std::vector<std::string>{"b1"});
  moves->reset();
  EXPECT_TRUE((*other)->Lock().ok());
}

TEST_F(MemStorageTest, StoreMovesSeeLiveWritersAndNestedBackups) {
  PutBackup("/s/b0", "m0");
  ASSERT_TRUE(mem_->Put("/s/b0/inner/.backup", "nested").ok());
  auto w = Start(*mem_->NewProcess(), "/s/b1");
  ASSERT_TRUE(w.ok());
  auto moves = std::move(mem_->MovesFor("/s")).value();
  auto writers = moves->Writers({"b0"});
  ASSERT_TRUE(writers.ok());
  ASSERT_EQ(writers->size(), 1u);
  EXPECT_EQ((*writers)[0].path, "/s/b1");
  ManifestBuilder none;
  auto m = none.Finish();
  EXPECT_EQ(moves->NestedBackup("/s/b0", *m), "/s/b0/inner");
  EXPECT_EQ(moves->BytesFreed({"/s/b0", "/s/none"}),
            (std::vector<uint64_t>{std::string("m0nested").size(), 0}));
}

}  // namespace
}  // namespace stitchfs::engine
