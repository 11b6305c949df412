#include "engine/format/manifest_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "engine/base/index_codec.h"
#include "engine/base/unique_fd.h"
#include "engine/format/manifest_file.h"
#include "engine/storage/backup.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::TempDir;

// Every kind of entry: plain, stitched, deduplicated, encrypted, empty, with and without
// metadata; a folder node and a symlink node.
std::unique_ptr<const Manifest> Sample(size_t extra = 0) {
  ManifestBuilder b;
  ManifestHeader h;
  h.version = 2;
  h.timestamp = "2026-12-02 10:00:00";
  h.uuid = "11111111-2222-4333-8444-555555555555";
  h.base_backup = "File('../base')";
  h.base_backup_uuid = "66666666-2222-4333-8444-555555555555";
  h.deduplicate_files = true;
  h.algorithm = ChecksumAlgorithm::kXxh3;
  h.incomplete = 2;
  h.read_start_ns = 1'733'000'000'123'456'789;
  b.set_header(h);
  b.AddMissing({"gone/file", "No such file or directory"});
  b.AddMissing({"fifo\\x01", "it is now a FIFO"});
  PosixMeta meta{0644, 1000, 1001, 1, {1234567890, 123456789}, {0, 42}, 7, 8};
  auto add = [&b](std::string name, uint64_t size, uint64_t base, uint64_t sum, std::string df,
                  std::optional<PosixMeta> m, bool enc = false) {
    FileEntry e;
    e.name = name;
    e.size = size;
    e.base_size = base;
    e.checksum = {sum, sum * 3};
    e.base_checksum = base ? Checksum{sum + 1, sum} : e.checksum;
    e.data_file = df.empty() ? e.name : df;
    e.meta = m;
    e.encrypted_by_disk = enc;
    ASSERT_TRUE(b.Add(e).ok());
  };
  add("data/a.bin", 100, 0, 1, "", meta);
  add("data/b.bin", 100, 0, 1, "data/a.bin", std::nullopt);
  add("logs/app.log", 5000, 4000, 2, "", meta);
  add("empty", 0, 0, 0, "", std::nullopt);
  add("secret", 10, 0, 3, "", std::nullopt, true);
  for (size_t i = 0; i < extra; ++i) {
    add("many/entry_with_a_long_enough_name_" + std::to_string(i), i + 1, 0, i + 10, "", meta);
  }
  PosixMeta node_meta = meta;
  node_meta.nlink = 0;  // Only files record a link count.
  b.AddNode({NodeType::kDir, "empty_dir", "", node_meta});
  b.AddNode({NodeType::kSymlink, "link", "../data/a.bin", node_meta});
  return b.Finish();
}

void ExpectSame(const Manifest& a, const Manifest& b) {
  EXPECT_EQ(a.header().uuid, b.header().uuid);
  EXPECT_EQ(a.header().timestamp, b.header().timestamp);
  EXPECT_EQ(a.header().base_backup, b.header().base_backup);
  EXPECT_EQ(a.header().base_backup_uuid, b.header().base_backup_uuid);
  EXPECT_EQ(a.header().deduplicate_files, b.header().deduplicate_files);
  EXPECT_EQ(a.header().algorithm, b.header().algorithm);
  EXPECT_EQ(a.header().version, b.header().version);
  ASSERT_EQ(a.num_entries(), b.num_entries());
  for (size_t i = 0; i < a.num_entries(); ++i) {
    const FileEntry x = a.entry(i), y = b.entry(i);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.data_file, y.data_file);
    EXPECT_EQ(x.size, y.size);
    EXPECT_EQ(x.base_size, y.base_size);
    EXPECT_EQ(x.checksum, y.checksum);
    EXPECT_EQ(x.base_checksum, y.base_checksum);
    EXPECT_EQ(x.encrypted_by_disk, y.encrypted_by_disk);
    EXPECT_EQ(x.meta, y.meta);
    EXPECT_EQ(b.FindByName(x.name), a.FindByName(x.name));
    if (x.size) {
      EXPECT_EQ(b.FindByContent(x.size, x.checksum), a.FindByContent(x.size, x.checksum));
      EXPECT_EQ(b.IsContentRep(i), a.IsContentRep(i));
    }
  }
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  for (size_t i = 0; i < a.num_nodes(); ++i) {
    EXPECT_EQ(a.node(i).name, b.node(i).name);
    EXPECT_EQ(a.node(i).target, b.node(i).target);
    EXPECT_EQ(a.node(i).type, b.node(i).type);
    EXPECT_EQ(a.node(i).meta, b.node(i).meta);
  }
  EXPECT_TRUE(std::ranges::equal(a.by_name(), b.by_name()));
  EXPECT_EQ(a.header().incomplete, b.header().incomplete);
  EXPECT_EQ(a.header().read_start_ns, b.header().read_start_ns);
  EXPECT_EQ(a.missing(), b.missing());
}

const ManifestIdentity kId{1, 2, 3, {0, 4}, {0, 5}};

std::string WriteToFile(const TempDir& dir, const Manifest& m) {
  const std::string path = dir / "m.bin";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600));
  EXPECT_TRUE(ManifestFile::Write(fd.get(), m, kId).ok());
  return path;
}

StatusOr<std::unique_ptr<const Manifest>> ReadFromFile(const std::string& path,
                                                       const ManifestIdentity& id = kId) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY));
  return ManifestFile::Read(fd.get(), id);
}

TEST(ManifestFileTest, RoundTripKeepsEverything) {
  TempDir dir;
  auto m = Sample(100);
  auto back = ReadFromFile(WriteToFile(dir, *m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(*m, **back);
}

TEST(ManifestFileTest, AnotherIdentityIsAMiss) {
  TempDir dir;
  const std::string path = WriteToFile(dir, *Sample());
  ManifestIdentity other = kId;
  other.ctime.nsec += 1;
  EXPECT_EQ(ReadFromFile(path, other).status().code(), ErrorCode::kBackupDamaged);
}

TEST(ManifestFileTest, EveryFlippedByteOrTruncationIsRefused) {
  TempDir dir;
  const std::string path = WriteToFile(dir, *Sample(3));
  const std::string good = testutil::ReadFile(path);
  for (size_t pos = 0; pos < good.size(); pos += 7) {
    std::string bad = good;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x20);
    testutil::WriteFile(path, bad);
    auto r = ReadFromFile(path);
    if (r.ok()) {  // Only padding may change without notice, and then nothing else does.
      ExpectSame(*Sample(3), **r);
    }
  }
  testutil::WriteFile(path, good.substr(0, good.size() - 1));
  EXPECT_FALSE(ReadFromFile(path).ok());
}

// The file's XXH3-128 made right again after a change, as a forger would.
void FixChecksum(std::string* bytes) {
  constexpr size_t kHeader = IndexLayout::kHeaderBytes, kHashAt = IndexLayout::kHashOffset;
  const XXH128_hash_t h = XXH3_128bits(bytes->data() + kHeader, bytes->size() - kHeader);
  std::memcpy(bytes->data() + kHashAt, &h.low64, 8);
  std::memcpy(bytes->data() + kHashAt + 8, &h.high64, 8);
}

// Rewrites the name "logs/app.log" in a cached file as `replacement` (same length) and fixes
// the checksum, as someone able to write the cache folder could.
void ForgeName(const std::string& path, const std::string& replacement) {
  std::string bytes = testutil::ReadFile(path);
  const size_t at = bytes.rfind("logs/app.log");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 12, replacement);
  FixChecksum(&bytes);
  testutil::WriteFile(path, bytes);
}

// Where section `tag` of an index file starts (the table follows the header: per section a
// u32 tag, u32 flags, u64 offset, u64 length); npos if it has none.
size_t SectionOffset(const std::string& bytes, const char (&tag)[5]) {
  for (size_t at = IndexLayout::kHeaderBytes; at + IndexLayout::kEntryBytes <= bytes.size();
       at += IndexLayout::kEntryBytes) {
    if (bytes.compare(at, 4, tag, 4) == 0) {
      uint64_t offset;
      std::memcpy(&offset, bytes.data() + at + 8, 8);
      return offset;
    }
  }
  return std::string::npos;
}

// The flags saying which entry serves each content are checked against the index, not trusted:
// a lie about them behind a valid checksum (which would send readers of a deduplicated file to
// an entry that does not hold its bytes) is refused.
TEST(ManifestFileTest, AForgedRepresentativeFlagIsRefused) {
  TempDir dir;
  const std::string path = WriteToFile(dir, *Sample());
  const std::string good = testutil::ReadFile(path);
  const size_t records = SectionOffset(good, "ENTR");
  ASSERT_NE(records, std::string::npos);
  constexpr size_t kRecord = sizeof(ManifestTables::Record);
  constexpr size_t kFlags = offsetof(ManifestTables::Record, flags);
  // Entry 0 (data/a.bin) serves its content, entry 1 (data/b.bin, the same content) does not,
  // entry 3 (empty) has none.
  for (const size_t entry : {0, 1, 3}) {
    std::string bad = good;
    bad[records + entry * kRecord + kFlags] ^= static_cast<char>(ManifestTables::kRep);
    FixChecksum(&bad);
    testutil::WriteFile(path, bad);
    EXPECT_EQ(ReadFromFile(path).status().code(), ErrorCode::kBackupDamaged) << entry;
  }
  testutil::WriteFile(path, good);
  EXPECT_TRUE(ReadFromFile(path).ok());
}

// A cached manifest is used where it is mapped: it stays whole while the cache replaces or
// removes its file (as the cache does: never cutting one short).
TEST(ManifestFileTest, AMappedManifestOutlivesItsFileBeingReplaced) {
  TempDir dir;
  const std::string kept = dir / "kept";
  ASSERT_EQ(::rename(WriteToFile(dir, *Sample(50)).c_str(), kept.c_str()), 0);
  auto loaded = ReadFromFile(kept);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(::rename(WriteToFile(dir, *Sample(3)).c_str(), kept.c_str()), 0);  // Replaced,
  ASSERT_EQ(::unlink(kept.c_str()), 0);                                        // then removed.
  ExpectSame(*Sample(50), **loaded);
}

// Something else where a cache file should be (a FIFO, a folder) is refused at once, never
// waited on or mapped.
TEST(ManifestFileTest, NotARegularFileIsRefusedWithoutWaiting) {
  TempDir dir;
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  UniqueFd f(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK));
  ASSERT_TRUE(f);
  EXPECT_EQ(ManifestFile::Read(f.get(), kId).status().code(), ErrorCode::kBackupDamaged);
  UniqueFd d(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY));
  ASSERT_TRUE(d);
  EXPECT_EQ(ManifestFile::Read(d.get(), kId).status().code(), ErrorCode::kBackupDamaged);
}

TEST(ManifestFileTest, AHostileNameWithAValidChecksumIsStillRefused) {
  TempDir dir;
  const std::string path = WriteToFile(dir, *Sample());
  ForgeName(path, "logs/app.lo2");
  auto harmless = ReadFromFile(path);
  ASSERT_TRUE(harmless.ok()) << "the forgery itself is consistent";
  EXPECT_TRUE((*harmless)->FindByName("logs/app.lo2").has_value());
  ForgeName(WriteToFile(dir, *Sample()), "../escape.lo");
  EXPECT_EQ(ReadFromFile(path).status().code(), ErrorCode::kBackupDamaged);
}

// A big manifest is checked on two cores (the names and links on one, each entry on the other):
// a forgery each side catches is still refused, and one on neither side is loaded.
TEST(ManifestFileTest, ABigManifestIsCheckedWhole) {
  TempDir dir;
  ManifestBuilder b;
  ManifestHeader h;
  h.uuid = "11111111-2222-4333-8444-555555555555";
  h.timestamp = "2026-12-02 10:00:00";
  b.set_header(h);
  auto add = [&b](const std::string& name) {
    FileEntry e;
    e.name = e.data_file = name;
    e.size = 1;
    e.checksum = e.base_checksum = {name.size(), 1};
    ASSERT_TRUE(b.Add(e).ok());
  };
  for (int i = 0; i < 5000; ++i) add("many/entry_" + std::to_string(i));
  add("zz/a");
  add("zz/b/c");
  const std::unique_ptr<const Manifest> m = b.Finish();
  ASSERT_GE(m->num_entries(), 4096u);
  // Each forgery keeps the names sorted, so that only the check it aims at can refuse it.
  const std::vector<std::pair<std::string, bool>> forgeries = {
      {"zz/b/d", true},   // Harmless.
      {"zz/a/c", false},  // A file with a name under it: CheckNames.
      {"zz//cc", false},  // An empty folder name: each entry's own check.
      {"zz/b/.", false},  // A dot folder: the same.
  };
  for (const auto& [forged, loads] : forgeries) {
    std::string bytes = testutil::ReadFile(WriteToFile(dir, *m));
    const size_t at = bytes.rfind("zz/b/c");
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, 6, forged);
    FixChecksum(&bytes);
    const std::string path = dir / "m.bin";
    testutil::WriteFile(path, bytes);
    auto r = ReadFromFile(path);
    EXPECT_EQ(r.ok(), loads) << forged << " " << (r.ok() ? "" : r.status().ToString());
    if (!loads) {
      EXPECT_EQ(r.status().code(), ErrorCode::kBackupDamaged) << forged;
    }
  }
}

TEST(ManifestCacheTest, AnIndexFileTurnedIntoAFifoOrAFolderIsAMissWithoutWaiting) {
  // Indexes are mapped from the cache now (a backup's own one is copied there): whatever takes
  // an index file's place under it is a miss at once, and the next store replaces a FIFO.
  TempDir dir;
  ManifestCache cache(dir / "cache", 1 << 30);
  const std::string bytes(70000, 'i');
  cache.StoreIndex("key", bytes);
  std::string file;
  for (const auto& e : std::filesystem::directory_iterator(cache.dir())) {
    if (e.path().extension() == ".index") file = e.path();
  }
  ASSERT_FALSE(file.empty());
  ASSERT_TRUE(cache.LoadIndex("key").has_value());
  ASSERT_EQ(::unlink(file.c_str()), 0);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  EXPECT_FALSE(cache.LoadIndex("key").has_value()) << "a FIFO";
  cache.StoreIndex("key", bytes);
  auto again = cache.LoadIndex("key");
  ASSERT_TRUE(again.has_value()) << "replaced by the next store";
  EXPECT_EQ(again->view(), bytes);
  ASSERT_EQ(::unlink(file.c_str()), 0);
  ASSERT_EQ(::mkdir(file.c_str(), 0700), 0);
  EXPECT_FALSE(cache.LoadIndex("key").has_value()) << "a folder";
}

TEST(ManifestCacheTest, StoresLoadsTrimsAndDropsDamage) {
  TempDir dir;
  ManifestCache cache(dir / "cache", 1 << 30);
  EXPECT_EQ(cache.Load(kId), nullptr);
  auto m = Sample(10);
  cache.Store(kId, *m);
  auto back = cache.Load(kId);
  ASSERT_NE(back, nullptr);
  ExpectSame(*m, *back);
  ManifestIdentity other = kId;
  other.mtime = {0, 99};
  EXPECT_EQ(cache.Load(other), nullptr);
  for (const auto& f : std::filesystem::directory_iterator(dir / "cache")) {
    std::filesystem::resize_file(f.path(), 100);
  }
  EXPECT_EQ(cache.Load(kId), nullptr);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "cache")) << "a damaged file is removed";

  ManifestCache tiny(dir / "tiny", 1);  // Keeps only the newest file.
  tiny.Store(kId, *m);
  tiny.Store(other, *m);
  EXPECT_EQ(tiny.Load(kId), nullptr);
  EXPECT_NE(tiny.Load(other), nullptr);
}

// A file of the format before the index codec (magic STCHMF03) is a miss, removed, then
// replaced by the next store.
TEST(ManifestCacheTest, AFileOfTheFormatBeforeIsAMiss) {
  TempDir dir;
  ManifestCache cache(dir / "cache", 1 << 30);
  auto m = Sample(10);
  cache.Store(kId, *m);
  for (const auto& f : std::filesystem::directory_iterator(dir / "cache")) {
    testutil::WriteFile(f.path(), "STCHMF03" + std::string(400, '\0'));
  }
  EXPECT_EQ(cache.Load(kId), nullptr);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "cache"));
  cache.Store(kId, *m);
  auto back = cache.Load(kId);
  ASSERT_NE(back, nullptr);
  ExpectSame(*m, *back);
}

TEST(ManifestCacheTest, BackupOpenUsesTheCacheAndNeverAStaleCopy) {
  TempDir dir;
  ManifestCache cache(dir / "cache", 1 << 30);
  const std::string content = "x", pad(150, 'n');  // Long names: a manifest over 1 MiB.
  testutil::FixtureBackup f(dir / "b");
  f.AddStored("folder/first", content);
  for (int i = 0; i < 5000; ++i) {
    f.AddDuplicate("folder/" + pad + std::to_string(i), content, "folder/first");
  }
  ASSERT_OK(f.Write());
  ASSERT_GE(std::filesystem::file_size(dir / "b/.backup"), ManifestCache::kMinManifestBytes);
  const auto storage = testutil::LocalChain().storage;
  auto first = Backup::Open(*storage, dir / "b", &cache);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / "cache"),
                          std::filesystem::directory_iterator()),
            1);
  auto second = Backup::Open(*storage, dir / "b", &cache);
  ASSERT_TRUE(second.ok());
  ExpectSame((*first)->manifest(), (*second)->manifest());

  testutil::FixtureBackup g(dir / "g");
  g.AddStored("other/first", content);
  for (int i = 0; i < 5000; ++i) {
    g.AddDuplicate("other/" + pad + std::to_string(i), content, "other/first");
  }
  ASSERT_OK(g.Write());
  std::filesystem::rename(dir / "g/.backup", dir / "b/.backup");
  auto third = Backup::Open(*storage, dir / "b", &cache);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE((*third)->manifest().FindByName("other/" + pad + "7").has_value())
      << "a replaced .backup is parsed, not served from the cache";
}

}  // namespace
}  // namespace stitchfs::engine
