#include "engine/resolved_backup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/engine/chain_fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::FixtureBackup;

std::string ReadAll(const RandomAccessFile& f) {
  std::string out(f.size(), '\0');
  auto n = f.ReadAt(0, out);
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  return out;
}

std::shared_ptr<const ResolvedBackup> MustOpen(const std::string& dir, const ChainOptions& o = {},
                                               const ResolveOptions& r = {}) {
  auto b = ResolvedBackup::Open(dir, o, r);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return b.ok() ? *b : nullptr;
}

size_t Entry(const ResolvedBackup& b, std::string_view name) {
  return *b.top().manifest().FindByName(name);
}

using ResolvedTest = ChainTest;

TEST_F(ResolvedTest, SameBytesExtentsAndFiguresAsTheChain) {
  for (const char* name : {"b0", "b1", "b2"}) {
    auto chain = BackupChain::Open(dir_ / name);
    ASSERT_TRUE(chain.ok());
    auto r = MustOpen(dir_ / name);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->depth(), (*chain)->depth());
    for (size_t i = 0; i < r->top().manifest().num_entries(); ++i) {
      auto want = (*chain)->Resolve(0, i);
      ASSERT_TRUE(want.ok());
      auto got = r->Extents(i);
      ASSERT_EQ(got.size(), want->size()) << name << " entry " << i;
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_EQ(got[k].level, (*want)[k].level);
        EXPECT_EQ(got[k].length, (*want)[k].length);
      }
      auto a = (*chain)->OpenEntry(i);
      auto b = r->OpenEntry(i);
      ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
      EXPECT_EQ(ReadAll(**b), ReadAll(**a)) << name << " entry " << i;
      auto ta = (*chain)->OpenStoredTail(i);
      auto tb = r->OpenStoredTail(i);
      ASSERT_TRUE(ta.ok() && tb.ok());
      EXPECT_EQ(ReadAll(**tb), ReadAll(**ta));
    }
    auto want = ComputeStats(**chain);
    ASSERT_TRUE(want.ok());
    const BackupStats got = r->Stats();
    EXPECT_EQ(got.total_size, want->total_size);
    EXPECT_EQ(got.size_of_entries, want->size_of_entries);
    EXPECT_EQ(got.bytes_by_level, want->bytes_by_level);
    EXPECT_EQ(r->level(r->depth() - 1).uuid, b0_uuid_);
  }
  EXPECT_EQ(
      ReadAll(**MustOpen(dir_ / "b2")->OpenEntry(Entry(*MustOpen(dir_ / "b2"), "log/app.log"))),
      a_ + b_ + c_);
}

TEST_F(ResolvedTest, SameErrorsAsTheChain) {
  FixtureBackup uuid(dir_ / "uuid"), ghost(dir_ / "ghost"), none(dir_ / "none");
  uuid.header.base_backup = ghost.header.base_backup = "File('b0')";
  uuid.header.base_backup_uuid = "00000000-0000-4000-8000-000000000000";
  ghost.header.base_backup_uuid = b0_uuid_;
  uuid.AddFromBase("a", "renamed content");
  ghost.AddFromBase("ghost.bin", "content the base never had");
  none.AddFromBase("a.bin", "Some text");
  FixtureBackup p(dir_ / "p"), q(dir_ / "q");
  p.SetBase(q);
  q.SetBase(p);
  p.AddFromBase("f", "loop");
  q.AddFromBase("f", "loop");
  for (auto* f : {&uuid, &ghost, &none, &p, &q}) ASSERT_OK(f->Write());
  std::filesystem::create_directory(dir_ / "nothing");
  ChainOptions shallow;
  shallow.max_depth = 2;
  const std::pair<std::string, ChainOptions> cases[] = {
      {"uuid", {}}, {"ghost", {}}, {"none", {}}, {"p", {}}, {"b2", shallow}, {"nothing", {}}};
  for (const auto& [name, options] : cases) {
    auto want = BackupChain::Open(dir_ / name, options).status();
    auto got = ResolvedBackup::Open(dir_ / name, options).status();
    EXPECT_FALSE(got.ok()) << name;
    EXPECT_EQ(got.code(), want.code()) << name;
    EXPECT_EQ(got.message(), want.message()) << name;
  }
}

TEST_F(ResolvedTest, OriginsFollowUnchangedFilesDownTheChain) {
  ResolveOptions r;
  r.origins = true;
  auto b2 = MustOpen(dir_ / "b2", {}, r);
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
  auto stop = MustOpen(dir_ / "b2", {}, r);
  EXPECT_EQ(stop->origin(Entry(*stop, "metadata/db.sql")).level, 1u);
  EXPECT_EQ(MustOpen(dir_ / "b2")->origin(Entry(*b2, "metadata/db.sql")).level, 0u)
      << "without the option every file is its own origin";
}

TEST_F(ResolvedTest, KeepsNoManifestOfItsBases) {
  ChainOptions o;
  o.backups = std::make_shared<BackupCache>();  // Keeps nothing beyond what is held.
  std::weak_ptr<const Backup> b1 = *o.backups->Open(dir_ / "b1");
  std::weak_ptr<const Backup> b0 = *o.backups->Open(dir_ / "b0");
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
  const Backup* first = (*cache.Open(dir_ / "b0")).get();
  EXPECT_GT(cache.kept_bytes(), 0u);
  EXPECT_EQ((*cache.Open(dir_ / "b0")).get(), first) << "kept while nobody holds it";
  FixtureBackup again(dir_ / "b0-new");
  again.AddStored("other.txt", "other");
  ASSERT_OK(again.Write());
  std::filesystem::rename(dir_ / "b0-new/.backup", dir_ / "b0/.backup");
  auto reopened = cache.Open(dir_ / "b0");
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE((*reopened)->manifest().FindByName("other.txt").has_value())
      << "a replaced .backup is parsed again";
  BackupCache tiny(1);
  ASSERT_TRUE(tiny.Open(dir_ / "b1").ok());
  ASSERT_TRUE(tiny.Open(dir_ / "b2").ok());
  EXPECT_EQ(tiny.kept_bytes(), (*tiny.Open(dir_ / "b2"))->manifest().MemoryUsage())
      << "over the budget only the most recent one is kept";
}

}  // namespace
}  // namespace stitchfs::engine
