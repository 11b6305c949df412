// Bytes changed on the way and kept there (an object store's block cache): a whole read that
// finds a file wrong drops what was kept (RandomAccessFile::DropCached) and reads the file once
// more (a flatten copies it once more), so verify, restore and flatten get the storage's
// bytes; bytes changed once and not kept are still reported. The storage is a MemStorage under
// a FaultStorage whose plan corrupts the first read of a data file (kCorruptKept or kCorrupt).
#include <gtest/gtest.h>

#include "engine/read/content_check.h"
#include "engine/read/restore.h"
#include "engine/read/verify.h"
#include "engine/write/flatten.h"
#include "tests/engine/backends/mem/mem_fixture.h"

namespace stitchfs::engine {
namespace {

class KeptCopyTest : public MemStoreTest {
 protected:
  void SetUp() override {
    SetSource({{"a/big.bin", testutil::RandomBytes(3 << 20, 7)}, {"a/small", "small"}});
    Written("b0");
  }
  // Backup b0, opened through a FaultStorage whose first read after the opening is corrupted
  // with `action`.
  std::shared_ptr<const ResolvedBackup> Open(FaultAction action) {
    plan_ = std::make_shared<FaultPlan>();
    ChainOptions o;
    o.storage = std::make_shared<FaultStorage>(mem_->NewProcess(), plan_);
    auto chain = OpenResolved(At("b0"), o);
    EXPECT_TRUE(chain.ok()) << chain.status().ToString();
    if (!chain.ok()) return nullptr;
    plan_->Add({.kind = Call::kRead, .nth = plan_->count(Call::kRead) + 1, .action = action});
    return *chain;
  }
  // Entry a/big.bin of `chain`, and its reader.
  static std::pair<size_t, std::shared_ptr<const RandomAccessFile>> Big(
      const ResolvedBackup& chain) {
    auto idx = chain.top().manifest().FindByName("a/big.bin");
    EXPECT_TRUE(idx);
    auto file = idx ? chain.OpenEntry(*idx) : Status::Internal("no a/big.bin");
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    return {idx.value_or(0), file.ok() ? *file : nullptr};
  }
  std::shared_ptr<FaultPlan> plan_;
};

TEST_F(KeptCopyTest, AKeptWrongByteIsReadWrongUntilDropped) {
  auto chain = Open(FaultAction::kCorruptKept);
  ASSERT_TRUE(chain);
  auto [idx, file] = Big(*chain);
  ASSERT_TRUE(file);
  std::string got(4096, '\0');
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(file->ReadAt(0, got).ok());
    EXPECT_NE(got, src_.at("a/big.bin").substr(0, 4096)) << "read " << i;
  }
  EXPECT_TRUE(file->DropCached());
  EXPECT_FALSE(file->DropCached()) << "nothing kept any more";
  ASSERT_TRUE(file->ReadAt(0, got).ok());
  EXPECT_EQ(got, src_.at("a/big.bin").substr(0, 4096));
}

TEST_F(KeptCopyTest, VerifyReadsAFileAgainWithNothingKept) {
  auto chain = Open(FaultAction::kCorruptKept);
  ASSERT_TRUE(chain);
  VerifyResult r = VerifyBackup(*chain, nullptr);
  EXPECT_EQ(plan_->fired(), 1);
  EXPECT_TRUE(r.problems.empty()) << r.problems[0].status.ToString();
  EXPECT_EQ(r.bytes_read, (3u << 20) + 5) << "the second read is not counted";
}

TEST_F(KeptCopyTest, BytesChangedOnceAndNotKeptAreStillReported) {
  auto chain = Open(FaultAction::kCorrupt);
  ASSERT_TRUE(chain);
  VerifyResult r = VerifyBackup(*chain, nullptr);
  EXPECT_EQ(plan_->fired(), 1);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].status.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(r.problems[0].status.message().find("checksum mismatch"), std::string::npos);
}

TEST_F(KeptCopyTest, RestoreCopiesAFileAgainWithNothingKept) {
  auto chain = Open(FaultAction::kCorruptKept);
  ASSERT_TRUE(chain);
  RestoreOptions o;
  o.target = dir_ / "out";
  auto r = RestoreBackup(*chain, o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(plan_->fired(), 1);
  for (const auto& [name, bytes] : src_)
    EXPECT_EQ(testutil::ReadFile(dir_ / ("out/" + name)), bytes);
}

TEST_F(KeptCopyTest, FlattenCopiesAFileAgainWithNothingKept) {
  auto chain = Open(FaultAction::kCorruptKept);
  ASSERT_TRUE(chain);
  // Written unwrapped: only the reads of b0 go wrong.
  auto flat = FlattenBackup(*chain, At("flat"), false, *mem_);
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_EQ(plan_->fired(), 1);
  EXPECT_EQ(Check(mem_->NewProcess(), At("flat"), src_), "");
}

TEST_F(KeptCopyTest, AFlattenOfBytesWrongOnlyOnTheWayOutIsNotCopiedAgain) {
  auto chain = Open(FaultAction::kCorrupt);
  ASSERT_TRUE(chain);
  // Nothing kept: the copy read back wrong is the copy's fault, as a failed write.
  auto flat = FlattenBackup(*chain, At("flat"), false, *mem_);
  EXPECT_EQ(flat.status().code(), ErrorCode::kIOError) << flat.status().ToString();
  EXPECT_EQ(flat.status().message().find("copied twice"), std::string::npos);
  EXPECT_NE(Check(mem_->NewProcess(), At("flat"), src_), "") << "no copy";
}

TEST_F(KeptCopyTest, AFileStillWrongWhenReadAgainSaysSo) {
  auto chain = Open(FaultAction::kCorruptKept);
  ASSERT_TRUE(chain);
  // A second kept byte, met by the second read: the file is wrong both times.
  auto [idx, file] = Big(*chain);
  ASSERT_TRUE(file);
  std::string buf(1 << 20, '\0');
  const uint64_t reads = plan_->count(Call::kRead);
  plan_->Add({.kind = Call::kRead, .nth = reads + 4, .action = FaultAction::kCorruptKept});
  Status s = CheckFile(*chain, idx, *file, buf);
  EXPECT_EQ(plan_->fired(), 2);
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(s.message().find("read twice"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace stitchfs::engine
