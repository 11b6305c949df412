#include "engine/read/resolved_index.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/backends/local/local_storage.h"
#include "engine/base/index_codec.h"
#include "engine/format/manifest_cache.h"
#include "engine/read/open_resolved.h"
#include "engine/storage/backup.h"
#include "tests/engine/chain_fixture.h"
#include "tests/testutil/context.h"

namespace stitchfs::engine {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> IndexFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".index") out.push_back(e.path());
  }
  return out;
}

// What a reader gets from `r`: each entry's bytes, and its extents and origin.
std::string Describe(const ResolvedBackup& r) {
  std::string out;
  const Manifest& m = r.top().manifest();
  for (size_t i = 0; i < m.num_entries(); ++i) {
    out += std::string(m.entry(i).name) + ":";
    for (const auto& x : r.Extents(i)) {
      out += " " + std::to_string(x.level) + "/" + std::to_string(x.length);
    }
    out += " origin " + std::to_string(r.origin(i).level) + "/" + std::to_string(r.origin(i).entry);
    auto f = r.OpenEntry(i);
    if (!f.ok()) return out + " " + f.status().ToString();
    std::string bytes((*f)->size(), '\0');
    auto n = (*f)->ReadAt(0, bytes);
    out += " " + std::to_string(n.ok() ? *n : 0) + " " +
           std::to_string(XXH3_64bits(bytes.data(), bytes.size())) + "\n";
  }
  return out;
}

class ResolvedIndexTest : public ChainTest {
 protected:
  ChainOptions Options(size_t keep_bytes = size_t{64} << 20) {
    ChainOptions o = testutil::LocalChain();
    o.cache = &cache_;
    o.backups = std::make_shared<BackupCache>(keep_bytes);
    return o;
  }
  // Opened as every reader opens it (from an index or composed), with origins.
  std::shared_ptr<const ResolvedBackup> Open(const std::string& name, const ChainOptions& o) {
    ResolveOptions r;
    r.origins = true;
    auto b = OpenResolved(dir_ / name, o, r);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : nullptr;
  }
  // The same, walking the chain level by level (what `stitch diff` does).
  std::string Walked(const std::string& name) {
    ResolveOptions r;
    r.origins = true;
    r.prefixes = true;
    auto b = OpenResolved(dir_ / name, testutil::LocalChain(), r);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? Describe(**b) : "";
  }

  testutil::TempDir cache_dir_;
  ManifestCache cache_{cache_dir_.path(), uint64_t{1} << 30};
};

TEST_F(ResolvedIndexTest, ComposedAndIndexedReadAsTheWalkDoes) {
  auto composed = Open("b2", Options());
  ASSERT_TRUE(composed);
  EXPECT_EQ(Describe(*composed), Walked("b2"));
  // The top's; of the levels below, only every 8th is kept (b1 is the first).
  EXPECT_EQ(IndexFiles(cache_dir_.path()).size(), 1u);
  auto indexed = Open("b2", Options());
  ASSERT_TRUE(indexed);
  EXPECT_EQ(Describe(*indexed), Walked("b2"));
  EXPECT_EQ(indexed->depth(), 3u);
  EXPECT_EQ(indexed->level(2).uuid, b0_uuid_);
  EXPECT_EQ(Describe(*Open("b1", Options())), Walked("b1"));
}

TEST_F(ResolvedIndexTest, AnIndexedOpenReadsNoManifestOfTheBases) {
  ChainOptions first = Options();
  ASSERT_TRUE(Open("b2", first));
  const size_t all = first.backups->kept_bytes();
  ChainOptions second = Options();
  auto b = Open("b2", second);
  ASSERT_TRUE(b);
  EXPECT_EQ(second.backups->kept_bytes(), b->top().manifest().MemoryUsage());
  EXPECT_LT(second.backups->kept_bytes(), all);
}

TEST_F(ResolvedIndexTest, AnIndexKeepsLocatorsWithoutCredentialsAndIsStillTrusted) {
  // b0 names a base of its own with credentials (ClickHouse before mid-2026), which none of
  // its entries reads: the indexes of b1 and b2 record that level's locator.
  const std::string manifest = testutil::ReadFile(dir_ / "b0/.backup");
  const size_t at = manifest.find("<contents");
  ASSERT_NE(at, std::string::npos);
  std::string with_secret = manifest;
  with_secret.insert(at,
                     "<base_backup>S3(&apos;http://h:1/bk/base&apos;, &apos;AKID&apos;, "
                     "&apos;TOPSECRET&apos;)</base_backup>");
  testutil::WriteFile(dir_ / "b0/.backup", with_secret);
  ASSERT_TRUE(Open("b2", Options()));
  const std::vector<std::string> indexes = IndexFiles(cache_dir_.path());
  ASSERT_FALSE(indexes.empty());
  for (const std::string& f : indexes) {
    const std::string bytes = testutil::ReadFile(f);
    EXPECT_EQ(bytes.find("TOPSECRET"), std::string::npos) << f;
    EXPECT_EQ(bytes.find("AKID"), std::string::npos) << f;
  }
  // Opened again from its index: no manifest of a base is read.
  ChainOptions again = Options();
  auto b = Open("b2", again);
  ASSERT_TRUE(b);
  EXPECT_EQ(again.backups->kept_bytes(), b->top().manifest().MemoryUsage());
  EXPECT_EQ(b->level(2).base_backup, "S3('http://h:1/bk/base')");
  EXPECT_TRUE(b->level(2).base_stripped);
  EXPECT_EQ(Describe(*b), Walked("b2"));
}

// An index of the format before the index codec (version 3, magic STFSIDX), its own or in
// the cache, is a miss: the chain is composed again and the cached copy replaced.
TEST_F(ResolvedIndexTest, IndexesOfTheFormatBeforeAreMisses) {
  ASSERT_TRUE(Open("b2", Options()));
  std::string before(1024, '\0');
  before.replace(0, 8, std::string("STFSIDX\0", 8));
  const uint32_t fields[] = {3, 0x01020304};
  std::memcpy(before.data() + 8, fields, sizeof fields);
  testutil::WriteFile(dir_ / "b2/.stitchfs/index", before);
  const std::vector<std::string> cached = IndexFiles(cache_dir_.path());
  ASSERT_EQ(cached.size(), 1u);
  testutil::WriteFile(cached[0], before);
  auto again = Open("b2", Options());
  ASSERT_TRUE(again);
  EXPECT_EQ(Describe(*again), Walked("b2"));
  ASSERT_EQ(IndexFiles(cache_dir_.path()).size(), 1u);
  EXPECT_EQ(testutil::ReadFile(IndexFiles(cache_dir_.path())[0]).substr(0, 8), "STFSRIDX");
}

TEST_F(ResolvedIndexTest, ABaseRewrittenOrReplacedMakesTheIndexStale) {
  ASSERT_TRUE(Open("b2", Options()));
  // b1 rewritten as itself (another folder and .backup): the index is not trusted, the chain
  // is composed again and reads the same.
  fs::copy(dir_ / "b1", dir_ / "copy", fs::copy_options::recursive);
  fs::remove_all(dir_ / "b1");
  fs::rename(dir_ / "copy", dir_ / "b1");
  auto again = Open("b2", Options());
  ASSERT_TRUE(again);
  EXPECT_EQ(Describe(*again), Walked("b2"));
  // b0 replaced by a backup with its uuid but other bytes: the chain check fails, as without
  // any index, rather than reading what the index recorded.
  fs::remove_all(dir_ / "b0");
  testutil::FixtureBackup other(dir_ / "b0");
  other.header.uuid = b0_uuid_;
  other.AddStored("log/app.log", "other");
  ASSERT_OK(other.Write());
  auto broken = OpenResolved(dir_ / "b2", Options());
  EXPECT_EQ(broken.status().code(), ErrorCode::kWrongBaseBackup) << broken.status().ToString();
}

TEST_F(ResolvedIndexTest, AnIndexIsUsedOnlyWhereItsBasesAre) {
  ASSERT_TRUE(Open("b2", Options()));
  fs::rename(dir_ / "b1", dir_ / "moved");
  ChainOptions o = Options();
  EXPECT_EQ(OpenResolved(dir_ / "b2", o).status().code(), ErrorCode::kNoBaseBackup);
  o.base_override = dir_ / "moved";
  auto b = Open("b2", o);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->level(1).path(), dir_ / "moved");
}

TEST_F(ResolvedIndexTest, NamesOfEntriesAreKeptAsReferences) {
  auto r = Open("b2", Options());
  ASSERT_TRUE(r);
  const std::string index = ResolvedIndex::Encode(*r);
  // log/app.log's bytes in b0 and b1 are in data files named as the entry: not copied.
  EXPECT_EQ(index.find("log/app.log"), std::string::npos);
  // new/name.bin reads b0's old/name.bin: that name is kept.
  EXPECT_NE(index.find("old/name.bin"), std::string::npos);
}

TEST_F(ResolvedIndexTest, AMappedIndexOutlivesItsCacheFileBeingReplaced) {
  ASSERT_TRUE(Open("b2", Options()));
  auto mapped = Open("b2", Options());  // From the cache, mapped.
  ASSERT_TRUE(mapped);
  const std::string before = Describe(*mapped);
  for (const std::string& f : IndexFiles(cache_dir_.path())) {
    std::ofstream(f + ".new", std::ios::binary) << std::string(4096, 'x');
    fs::rename(f + ".new", f);  // As the cache replaces its files: never in place.
  }
  EXPECT_EQ(Describe(*mapped), before);
  EXPECT_EQ(before, Walked("b2"));
}

TEST_F(ResolvedIndexTest, AnOwnIndexIsCopiedToTheCacheAndReadFromThereAfter) {
  auto composed = Open("b2", Options());
  ASSERT_TRUE(composed);
  const std::string want = Describe(*composed);
  const std::string own = ResolvedIndex::Encode(*composed);
  fs::create_directories(dir_ / "b2/.stitchfs");
  testutil::WriteFile(dir_ / "b2/.stitchfs/index", own);  // As the writer keeps one.
  for (const std::string& f : IndexFiles(cache_dir_.path())) fs::remove(f);
  // The own index is read (the cache has none) and copied there for the next open.
  auto first = Open("b2", Options());
  ASSERT_TRUE(first);
  EXPECT_EQ(Describe(*first), want);
  std::vector<std::string> cached = IndexFiles(cache_dir_.path());
  ASSERT_EQ(cached.size(), 1u);
  EXPECT_EQ(testutil::ReadFile(cached[0]), own);
  // Next time the cache's copy is used (mapped): the own one is not even read.
  testutil::WriteFile(dir_ / "b2/.stitchfs/index", "damaged");
  ChainOptions o = Options();
  auto second = Open("b2", o);
  ASSERT_TRUE(second);
  EXPECT_EQ(o.backups->kept_bytes(), second->top().manifest().MemoryUsage())
      << "from an index: no manifest of a base read";
  EXPECT_EQ(Describe(*second), want);
  // A damaged copy is dropped and the own index, valid again, copied anew.
  testutil::WriteFile(dir_ / "b2/.stitchfs/index", own);
  testutil::WriteFile(cached[0], own.substr(0, own.size() / 2));
  auto third = Open("b2", Options());
  ASSERT_TRUE(third);
  EXPECT_EQ(Describe(*third), want);
  cached = IndexFiles(cache_dir_.path());
  ASSERT_EQ(cached.size(), 1u);
  EXPECT_EQ(testutil::ReadFile(cached[0]), own);
  // Both damaged: composed again from the manifests, as without any index.
  testutil::WriteFile(dir_ / "b2/.stitchfs/index", "damaged");
  testutil::WriteFile(cached[0], "damaged too");
  auto fourth = Open("b2", Options());
  ASSERT_TRUE(fourth);
  EXPECT_EQ(Describe(*fourth), want);
}

TEST_F(ResolvedIndexTest, ACacheThatCannotBeWrittenLeavesTheOwnIndexInUse) {
  // A full disk, or a cache folder that cannot be made: the copy is not kept, nothing else
  // changes (the own index is read, every time).
  auto composed = Open("b2", Options());
  ASSERT_TRUE(composed);
  fs::create_directories(dir_ / "b2/.stitchfs");
  testutil::WriteFile(dir_ / "b2/.stitchfs/index", ResolvedIndex::Encode(*composed));
  testutil::WriteFile(cache_dir_.path() + "/not-a-folder", "x");
  ManifestCache unwritable(cache_dir_.path() + "/not-a-folder/cache", uint64_t{1} << 30);
  for (int i = 0; i < 2; ++i) {
    ChainOptions o = Options();
    o.cache = &unwritable;
    auto b = Open("b2", o);
    ASSERT_TRUE(b);
    EXPECT_EQ(o.backups->kept_bytes(), b->top().manifest().MemoryUsage()) << "from the index";
    EXPECT_EQ(Describe(*b), Describe(*composed));
  }
  EXPECT_FALSE(fs::exists(cache_dir_.path() + "/not-a-folder/cache"));
}

TEST_F(ResolvedIndexTest, AStorageRefusesAFolderAnotherStorageMade) {
  auto r = Open("b2", Options());
  ASSERT_TRUE(r);
  auto storage = LocalStorage::Create();
  const std::string path = r->level(1).path();
  EXPECT_TRUE(storage->OpenDataFile(r->level(1).folder, "log/app.log", 0).ok());
  static constexpr BackendKind kForeign{"a foreign folder"};
  auto foreign =
      std::make_shared<const BackupFolder>(path, r->level(1).folder->identity(), kForeign);
  EXPECT_EQ(storage->OpenDataFile(foreign, "log/app.log", 0).status().code(),
            ErrorCode::kInvalidArgument);
}

// A chain of `n` backups l0000 <- l0001 <- ..., a log appended to at each level, as ClickHouse
// writes them (no indexes); log[i] is the log at level i.
std::vector<std::string> WriteAppendChain(const std::string& dir, size_t n) {
  std::vector<std::string> log(n);
  std::unique_ptr<testutil::FixtureBackup> prev;
  for (size_t i = 0; i < n; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "l%04zu", i);
    auto b = std::make_unique<testutil::FixtureBackup>(dir + "/" + name);
    log[i] = (i ? log[i - 1] : "") + testutil::RandomBytes(10 + i % 50, 100 + i);
    if (i == 0) {
      b->AddStored("log", log[i]);
    } else {
      b->SetBase(*prev);
      b->AddStitched("log", log[i], log[i - 1].size());
    }
    EXPECT_OK(b->Write());
    prev = std::move(b);
  }
  return log;
}

TEST_F(ResolvedIndexTest, ADeepChainWithoutIndexesOpensFromItsBottomAndKeepsCheckpoints) {
  const std::vector<std::string> log = WriteAppendChain(dir_.path(), 20);
  auto top = Open("l0019", Options());
  ASSERT_TRUE(top);
  EXPECT_EQ(Describe(*top), Walked("l0019"));
  EXPECT_EQ(top->depth(), 20u);
  // The top's index and those of the levels of depth 8 and 16 (l0007, l0015).
  EXPECT_EQ(IndexFiles(cache_dir_.path()).size(), 3u);
  // Another day composes from the nearest kept level below it, and is kept in turn.
  auto mid = Open("l0011", Options());
  ASSERT_TRUE(mid);
  EXPECT_EQ(Describe(*mid), Walked("l0011"));
  EXPECT_EQ(IndexFiles(cache_dir_.path()).size(), 4u);
  // A kept level made stale (l0015 rewritten as itself): passed by on the way down.
  fs::copy(dir_ / "l0015", dir_ / "copy", fs::copy_options::recursive);
  fs::remove_all(dir_ / "l0015");
  fs::rename(dir_ / "copy", dir_ / "l0015");
  ChainOptions o = Options();
  o.cache = nullptr;  // Nothing cached: the whole way down.
  auto walked_again = OpenResolved(dir_ / "l0019", o);
  ASSERT_TRUE(walked_again.ok()) << walked_again.status().ToString();
  auto again = Open("l0019", Options());
  ASSERT_TRUE(again);
  EXPECT_EQ(Describe(*again), Walked("l0019"));
  std::string bytes(log[19].size(), '\0');
  auto f = again->OpenEntry(0);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->ReadAt(0, bytes).ok());
  EXPECT_EQ(bytes, log[19]);
}

// Deeper down the kept levels are farther apart (an eighth of their depth): the indexes a deep
// chain leaves in the cache add up to some times the top's, not depth / 16 times (each holds
// every level below it).
TEST_F(ResolvedIndexTest, TheIndexesKeptForADeepChainAddUpToSomeTimesTheTops) {
  WriteAppendChain(dir_.path(), 600);
  auto top = Open("l0599", Options());
  ASSERT_TRUE(top);
  std::string bytes(top->top().manifest().size(0), '\0');
  auto f = top->OpenEntry(0);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->ReadAt(0, bytes).ok());
  // Depths 8..120 by 8, 128..240 by 16, 256..480 by 32, 512 and 576, and the top.
  const std::vector<std::string> kept = IndexFiles(cache_dir_.path());
  EXPECT_EQ(kept.size(), 15u + 8u + 8u + 2u + 1u);
  uintmax_t all = 0, largest = 0;
  for (const std::string& k : kept) {
    all += fs::file_size(k);
    largest = std::max(largest, fs::file_size(k));
  }
  EXPECT_LT(all, 16 * largest);
  auto mid = Open("l0300", Options());  // Composed from depth 288: 13 levels.
  ASSERT_TRUE(mid);
  EXPECT_EQ(mid->depth(), 301u);
}

TEST_F(ResolvedIndexTest, DamagedOrForgedIndexesAreMissesOrAddUp) {
  auto r = Open("b2", Options());
  ASSERT_TRUE(r);
  const std::string good = ResolvedIndex::Encode(*r);
  ChainOptions with_storage = Options();
  with_storage.storage = LocalStorage::Create();
  auto opened = Backup::Open(*with_storage.storage, dir_ / "b2", nullptr);
  ASSERT_TRUE(opened.ok());
  const std::shared_ptr<const Backup> top = *opened;
  ASSERT_TRUE(ResolvedIndex::Decode(SharedBytes::Copy(good), top, with_storage, true).ok());
  EXPECT_FALSE(ResolvedIndex::Decode(SharedBytes::Copy(good.substr(0, good.size() - 1)), top,
                                     with_storage, true)
                   .ok());
  constexpr size_t kHeader = IndexLayout::kHeaderBytes, kHashAt = IndexLayout::kHashOffset;
  for (size_t at = kHeader; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] ^= 0x55;
    EXPECT_FALSE(ResolvedIndex::Decode(SharedBytes::Copy(bad), top, with_storage, true).ok())
        << "checksum, " << at;
    // The same change with a matching checksum: refused, or every file adds up to its size.
    const XXH128_hash_t h = XXH3_128bits(bad.data() + kHeader, bad.size() - kHeader);
    std::memcpy(&bad[kHashAt], &h.low64, 8);
    std::memcpy(&bad[kHashAt + 8], &h.high64, 8);
    auto forged = ResolvedIndex::Decode(SharedBytes::Copy(bad), top, with_storage, true);
    if (!forged.ok()) continue;
    const Manifest& m = (*forged)->top().manifest();
    for (size_t i = 0; i < m.num_entries(); ++i) {
      uint64_t total = 0;
      for (const auto& x : (*forged)->Extents(i)) {
        total += x.length;
        EXPECT_LT(x.level, (*forged)->depth());
      }
      EXPECT_EQ(total, m.entry(i).size) << "byte " << at << ", entry " << i;
    }
  }
}

}  // namespace
}  // namespace stitchfs::engine
