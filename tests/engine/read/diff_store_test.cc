#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/backends/local/local_storage.h"
#include "engine/read/backup_diff.h"
#include "engine/read/open_resolved.h"
#include "engine/storage/store.h"
#include "engine/write/snapshot_writer.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {
namespace {

using testutil::TempDir;
using testutil::WriteFile;

class DiffTest : public ::testing::Test {
 protected:
  void Backup(const std::string& name, const std::string& base = "") {
    BackupOptions o;
    o.chain = testutil::LocalChain();
    o.source = dir_ / "src";
    o.dest = dir_ / ("store/" + name);
    if (!base.empty()) o.base = dir_ / ("store/" + base);
    auto s = WriteBackup(o, nullptr);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }
  std::shared_ptr<const ResolvedBackup> Open(const std::string& name) {
    ResolveOptions with_prefixes;
    with_prefixes.prefixes = true;
    auto c = OpenResolved(dir_ / ("store/" + name), testutil::LocalChain(), with_prefixes);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }
  std::string Summary(const std::vector<Change>& changes) {
    std::string out;
    for (const auto& c : changes) {
      out += std::string(ChangeKindName(c.kind)) + " " +
             (c.old_name.empty() ? "" : c.old_name + "->") + c.name +
             (c.appended ? " +" + std::to_string(c.appended) : "") + "\n";
    }
    return out;
  }
  TempDir dir_;
};

TEST_F(DiffTest, ReportsEveryKindOfChangeWithoutReadingData) {
  WriteFile(dir_ / "src/log", "line 1\n");
  WriteFile(dir_ / "src/ddl.sql", "CREATE;\n");
  WriteFile(dir_ / "src/rewritten", "aaaa");
  WriteFile(dir_ / "src/old-name", "moved content");
  WriteFile(dir_ / "src/gone", "bye");
  WriteFile(dir_ / "src/chmod-me", "same");
  Backup("d1");
  std::ofstream(dir_ / "src/log", std::ios::app) << "line 2\n";
  std::ofstream(dir_ / "src/ddl.sql", std::ios::app) << "ALTER;\n";
  WriteFile(dir_ / "src/rewritten", "bbbb");
  fs::rename(dir_ / "src/old-name", dir_ / "src/new-name");
  fs::remove(dir_ / "src/gone");
  fs::permissions(dir_ / "src/chmod-me", fs::perms::owner_read);
  WriteFile(dir_ / "src/fresh", "new");
  Backup("d2", "d1");
  std::ofstream(dir_ / "src/log", std::ios::app) << "line 3\n";
  Backup("d3", "d2");
  auto changes = DiffBackups(*Open("d1"), *Open("d2"), "");
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(Summary(*changes),
            "metadata chmod-me\n"
            "appended ddl.sql +7\n"
            "added fresh\n"
            "removed gone\n"
            "appended log +7\n"
            "renamed old-name->new-name\n"
            "rewritten rewritten\n");
  // Across two increments the first version is still a known prefix.
  auto two = DiffBackups(*Open("d1"), *Open("d3"), "log");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(Summary(*two), "appended log +14\n");
  auto none = DiffBackups(*Open("d3"), *Open("d3"), "");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(DiffTest, StoreListsBackupsOldestFirstWithDepthAndSkipsUnfinished) {
  WriteFile(dir_ / "src/a", "1234567890");
  Backup("b");
  std::ofstream(dir_ / "src/a", std::ios::app) << "more";
  Backup("a", "b");  // Named so that name order differs from time order.
  fs::create_directories(dir_ / "store/unfinished");
  WriteFile(dir_ / "store/unfinished/.lock", "x");
  auto list = ListStore(testutil::LocalChain(), dir_ / "store");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  // Same-second timestamps fall back to name order; depth comes from the base locators.
  const auto& full = (*list)[0].name == "b" ? (*list)[0] : (*list)[1];
  const auto& inc = (*list)[0].name == "b" ? (*list)[1] : (*list)[0];
  EXPECT_EQ(full.depth, 1);
  EXPECT_EQ(inc.depth, 2);
  EXPECT_EQ(inc.total_size, 14u);
  EXPECT_EQ(inc.stored_bytes, 4u + inc.backup->manifest_bytes());
}

}  // namespace
}  // namespace stitchfs::engine
