#include "engine/read/resolved_backup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "engine/backends/local/local_storage.h"
#include "engine/read/open_resolved.h"
#include "tests/engine/chain_fixture.h"
#include "tests/testutil/context.h"

namespace stitchfs::engine {
namespace {

using testutil::FixtureBackup;

std::string ReadAll(const RandomAccessFile& f) {
  std::string out(f.size(), '\0');
  auto n = f.ReadAt(0, out);
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  return out;
}

std::shared_ptr<const ResolvedBackup> MustOpen(const std::string& dir,
                                               const ChainOptions& o = testutil::LocalChain(),
                                               const ResolveOptions& r = {}) {
  auto b = OpenResolved(dir, o, r);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return b.ok() ? *b : nullptr;
}

size_t Entry(const ResolvedBackup& b, std::string_view name) {
  return *b.top().manifest().FindByName(name);
}

using ResolvedTest = ChainTest;

TEST_F(ResolvedTest, StoredTailsFiguresAndLevels) {
  auto r = MustOpen(dir_ / "b2");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->depth(), 3u);
  EXPECT_EQ(r->level(2).uuid, b0_uuid_);
  EXPECT_EQ(ReadAll(**r->OpenEntry(Entry(*r, "log/app.log"))), a_ + b_ + c_);
  EXPECT_EQ(ReadAll(**r->OpenStoredTail(Entry(*r, "log/app.log"))), c_);
  EXPECT_EQ(ReadAll(**r->OpenStoredTail(Entry(*r, "metadata/db.sql"))), "");
  EXPECT_EQ(ReadAll(**r->OpenStoredTail(Entry(*r, "copy/b.bin"))), "same bytes twice");
  auto segments = r->OpenSegments(Entry(*r, "log/app.log"));
  ASSERT_TRUE(segments.ok());
  ASSERT_EQ(segments->size(), 3u);
  EXPECT_EQ((*segments)[0].length, a_.size());
  const BackupStats st = r->Stats();
  EXPECT_EQ(st.bytes_by_level,
            (std::vector<uint64_t>{c_.size() + 16 + 16, b_.size(), a_.size() + 20 + 15}));
}

TEST_F(ResolvedTest, PrefixesListEveryKnownPrefix) {
  ResolveOptions with;
  with.prefixes = true;
  auto r = MustOpen(dir_ / "b2", testutil::LocalChain(), with);
  ASSERT_TRUE(r);
  const auto app = r->Prefixes(Entry(*r, "log/app.log"));
  ASSERT_EQ(app.size(), 3u);
  EXPECT_EQ(app[0].first, a_.size() + b_.size() + c_.size());
  EXPECT_EQ(app[1].first, a_.size() + b_.size());
  EXPECT_EQ(app[2].first, a_.size());
  EXPECT_EQ(r->Prefixes(Entry(*r, "copy/b.bin")).size(), 1u);
  EXPECT_TRUE(r->Prefixes(Entry(*r, "empty.txt")).empty());
}

TEST_F(ResolvedTest, OriginsFollowUnchangedFilesDownTheChain) {
  ResolveOptions r;
  r.origins = true;
  auto b2 = MustOpen(dir_ / "b2", testutil::LocalChain(), r);
  auto b0 = MustOpen(dir_ / "b0");
  auto b1 = MustOpen(dir_ / "b1");
  ASSERT_TRUE(b2 && b0 && b1);
  auto origin = [&](std::string_view name) { return b2->origin(Entry(*b2, name)); };
  EXPECT_EQ(origin("metadata/db.sql").level, 2u);
  EXPECT_EQ(origin("metadata/db.sql").entry, Entry(*b0, "metadata/db.sql"));
  EXPECT_EQ(origin("empty.txt").level, 2u);
  EXPECT_EQ(origin("new/name.bin").level, 1u) << "renamed in b1: b0 has another name";
  EXPECT_EQ(origin("new/name.bin").entry, Entry(*b1, "new/name.bin"));
  EXPECT_EQ(origin("log/app.log").level, 0u) << "appended to in b2";
  EXPECT_EQ(origin("copy/b.bin").level, 0u);
  EXPECT_EQ(origin("copy/b.bin").entry, Entry(*b2, "copy/b.bin"));

  r.origin_ok = [&](const ManifestHeader& h) { return h.uuid != b0_uuid_; };
  auto stop = MustOpen(dir_ / "b2", testutil::LocalChain(), r);
  EXPECT_EQ(stop->origin(Entry(*stop, "metadata/db.sql")).level, 1u);
  EXPECT_EQ(MustOpen(dir_ / "b2")->origin(Entry(*b2, "metadata/db.sql")).level, 0u)
      << "without the option every file is its own origin";
}

TEST_F(ResolvedTest, KeepsNoManifestOfItsBases) {
  ChainOptions o = testutil::LocalChain();
  o.backups = std::make_shared<BackupCache>();  // Keeps nothing beyond what is held.
  std::weak_ptr<const Backup> b1 = *o.backups->Open(*LocalStorage::Create(), dir_ / "b1", nullptr);
  std::weak_ptr<const Backup> b0 = *o.backups->Open(*LocalStorage::Create(), dir_ / "b0", nullptr);
  EXPECT_TRUE(b1.expired());
  auto r = MustOpen(dir_ / "b2", o);
  ASSERT_TRUE(r);
  EXPECT_TRUE(b1.expired() && b0.expired()) << "the bases were dropped after resolving";
  EXPECT_EQ(ReadAll(**r->OpenEntry(Entry(*r, "metadata/db.sql"))), "CREATE DATABASE db;\n");
}

TEST_F(ResolvedTest, DamageIsNamedAndNeverShortBytes) {
  auto r = MustOpen(dir_ / "b2");
  ASSERT_TRUE(r);
  ::truncate((dir_ / "b1/log/app.log").c_str(), 10);
  auto s = r->OpenEntry(Entry(*r, "log/app.log")).status();
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(s.message().find("b1/log/app.log"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("entry \"log/app.log\""), std::string::npos) << s.message();
}

TEST_F(ResolvedTest, CacheKeepsRecentBackupsAndNoticesReplacedManifests) {
  BackupCache cache(1 << 20);
  const Backup* first = (*cache.Open(*LocalStorage::Create(), dir_ / "b0", nullptr)).get();
  EXPECT_GT(cache.kept_bytes(), 0u);
  EXPECT_EQ((*cache.Open(*LocalStorage::Create(), dir_ / "b0", nullptr)).get(), first)
      << "kept while nobody holds it";
  FixtureBackup again(dir_ / "b0-new");
  again.AddStored("other.txt", "other");
  ASSERT_OK(again.Write());
  std::filesystem::rename(dir_ / "b0-new/.backup", dir_ / "b0/.backup");
  auto reopened = cache.Open(*LocalStorage::Create(), dir_ / "b0", nullptr);
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE((*reopened)->manifest().FindByName("other.txt").has_value())
      << "a replaced .backup is parsed again";
  BackupCache tiny(1);
  ASSERT_TRUE(tiny.Open(*LocalStorage::Create(), dir_ / "b1", nullptr).ok());
  ASSERT_TRUE(tiny.Open(*LocalStorage::Create(), dir_ / "b2", nullptr).ok());
  EXPECT_EQ(tiny.kept_bytes(),
            (*tiny.Open(*LocalStorage::Create(), dir_ / "b2", nullptr))->manifest().MemoryUsage())
      << "over the budget only the most recent one is kept";
}

}  // namespace
}  // namespace stitchfs::engine
