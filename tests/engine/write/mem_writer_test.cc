// The backup writer and the readers on MemStorage: full and incremental backups, base
// prefixes, renames and duplicates, chains read back byte for byte.
#include <gtest/gtest.h>

#include "engine/format/data_file_name.h"
#include "engine/read/open_resolved.h"
#include "tests/engine/backends/mem/mem_fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::RandomBytes;

class MemWriterTest : public MemStoreTest {
 protected:
  // The manifest entry `name` of backup `backup`.
  FileEntry Entry(const std::string& backup, const std::string& name) {
    ChainOptions o;
    o.storage = mem_;
    auto chain = OpenResolved(At(backup), o);
    EXPECT_TRUE(chain.ok()) << chain.status().ToString();
    keep_ = *chain;
    auto i = keep_->top().manifest().FindByName(name);
    EXPECT_TRUE(i.has_value()) << name;
    return keep_->top().manifest().entry(*i);
  }

  std::shared_ptr<const ResolvedBackup> keep_;
};

TEST_F(MemWriterTest, AFullBackupReadsBack) {
  SetSource({{"a.txt", "alpha"}, {"dir/b.bin", RandomBytes(70000, 1)}, {"empty", ""}});
  auto s = Backup(mem_, "b0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->files, 3u);
  EXPECT_EQ(s->bytes_stored, 70005u);
  EXPECT_EQ(Check(mem_, At("b0"), src_), "");
  EXPECT_FALSE(mem_->Get(At("b0/.lock")).has_value());
  EXPECT_FALSE(mem_->Get(At("b0/.stitch-tmp")).has_value());
}

TEST_F(MemWriterTest, AnIncrementalStoresOnlyTheTailOfAnAppendedFile) {
  const std::string head = RandomBytes(50000, 2), tail = "appended\n";
  SetSource({{"log", head}});
  Written("b0");
  SetSource({{"log", head + tail}});
  auto s = Backup(mem_, "b1", "b0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->bytes_stored, tail.size());
  EXPECT_EQ(s->bytes_from_base_prefix, head.size());
  const FileEntry e = Entry("b1", "log");
  EXPECT_EQ(e.base_size, head.size());
  EXPECT_EQ(mem_->Get(At("b1/" + std::string(e.data_file))), tail);
  size_t depth = 0;
  EXPECT_EQ(Check(mem_, At("b1"), src_, &depth), "");
  EXPECT_EQ(depth, 2u);
}

TEST_F(MemWriterTest, RenamedAndDuplicatedFilesStoreNothingMore) {
  SetSource({{"old-name", "renamed content"}, {"same", "unchanged"}});
  Written("b0");
  SetSource({{"new-name", "renamed content"},
             {"same", "unchanged"},
             {"copy1", "twice stored once"},
             {"copy2", "twice stored once"}});
  auto s = Backup(mem_, "b1", "b0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->bytes_from_base_whole, std::string("renamed contentunchanged").size());
  EXPECT_EQ(s->bytes_deduplicated, std::string("twice stored once").size());
  EXPECT_EQ(s->data_files, 1u);
  EXPECT_EQ(Entry("b1", "new-name").base_size, 15u);
  EXPECT_EQ(Check(mem_, At("b1"), src_), "");
}

TEST_F(MemWriterTest, AChainReadsBackThroughItsIndexAndWithout) {
  const std::string a = RandomBytes(30000, 3);
  SetSource({{"a", a}, {"b", "bee"}});
  Written("b0");
  SetSource({{"a", a + "1"}, {"c", "sea"}});
  Written("b1", "b0");
  SetSource({{"a", a + "12"}, {"c", "sea"}, {"d", RandomBytes(5000, 4)}});
  Written("b2", "b1");
  auto folder = mem_->OpenFolder(At("b2"));
  ASSERT_TRUE(folder.ok());
  EXPECT_TRUE(mem_->ReadIndex(**folder).ok());  // Written with the backup.
  size_t depth = 0;
  EXPECT_EQ(Check(mem_->NewProcess(), At("b2"), written_["b2"], &depth), "");
  EXPECT_EQ(depth, 3u);
  mem_->RemoveAll(At("b2/") + std::string(kStitchDir));
  EXPECT_EQ(Check(mem_->NewProcess(), At("b2"), written_["b2"]), "");
}

TEST_F(MemWriterTest, ADamagedDataFileIsAnErrorNeverWrongBytes) {
  SetSource({{"a", RandomBytes(10000, 5)}});
  Written("b0");
  ASSERT_TRUE(mem_->Truncate(At("b0/a"), 100).ok());
  EXPECT_EQ(Check(mem_, At("b0"), src_).rfind("error: ", 0), 0u);
  mem_->RemoveAll(At("b0/a"));
  EXPECT_EQ(Check(mem_, At("b0"), src_).rfind("error: ", 0), 0u);
}

TEST_F(MemWriterTest, ABackupInsideAnotherIsRefused) {
  SetSource({{"a", "x"}});
  Written("b0");
  EXPECT_EQ(Backup(mem_, "b0/inner").status().code(), ErrorCode::kBackupAlreadyExists);
  EXPECT_EQ(Backup(mem_, "b0").status().code(), ErrorCode::kBackupAlreadyExists);
}

}  // namespace
}  // namespace stitchfs::engine
