// The archive layer on archives built here byte by byte: deflate and gzip restart points,
// tar headers (ustar, pax, GNU), zip directories (ZIP64 too), the index's encoding.
#include <bzlib.h>
#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <tuple>
#include <vector>

#include "engine/backends/archive/archive_cache.h"
#include "engine/backends/archive/archive_index.h"
#include "engine/backends/archive/archive_reader.h"
#include "engine/backends/archive/index_builder.h"
#include "engine/backends/archive/inflate_points.h"
#include "engine/backends/archive/stream_decoder.h"
#include "engine/backends/archive/tar_scanner.h"
#include "engine/backends/archive/zip_directory.h"
#include "engine/base/string_file.h"
#include "engine/location/archive_kind.h"
#include "tests/testutil/archives.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using MemFile = StringFile;
using testutil::Deflate;
using testutil::MakeZip;
using testutil::Mixed;
using testutil::PaxRecord;
using testutil::TarHeader;

// Reads `expected` back through an ArchiveReader over stream 0 of `index` at random offsets.
void ExpectRandomReads(std::shared_ptr<const RandomAccessFile> file, ArchiveIndex index,
                       const std::string& expected) {
  auto reader = std::make_shared<const ArchiveReader>(file, std::move(index), UniqueFd(), "mem",
                                                      nullptr, ArchiveStamp{});
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    const uint64_t off = rng() % expected.size();
    const size_t len = std::min<size_t>(1 + rng() % 300000, expected.size() - off);
    std::string got(len, '\0');
    ASSERT_TRUE(reader->ReadStream(reader->index().streams[0], off, got).ok());
    ASSERT_EQ(got, expected.substr(off, len)) << "offset " << off;
  }
}

TEST(ArchiveKindTest, Extensions) {
  EXPECT_EQ(ArchiveKindOf("/b/1.zip").container, ArchiveContainer::kZip);
  EXPECT_EQ(ArchiveKindOf("1.zipx").container, ArchiveContainer::kZip);
  EXPECT_EQ(ArchiveKindOf("1.tgz").codec, StreamCodec::kGzip);
  EXPECT_EQ(ArchiveKindOf("a.b/1.tar.zst").codec, StreamCodec::kZstd);
  EXPECT_EQ(ArchiveKindOf("1.tzst").codec, StreamCodec::kZstd);
  EXPECT_EQ(ArchiveKindOf("1.tar.lzma").codec, StreamCodec::kLzma);
  EXPECT_EQ(std::string(ArchiveKindName(ArchiveKindOf("x.tar.bz2"))), "tar.bz2");
  EXPECT_FALSE(ArchiveKindOf("/b/backup1").is_archive());
  EXPECT_FALSE(ArchiveKindOf("/b/.zip").is_archive());
  EXPECT_FALSE(ArchiveKindOf("/b/1.ZIP").is_archive());  // ClickHouse's check is exact.
  EXPECT_FALSE(ArchiveKindOf("/b/x.tar/sub").is_archive());
}

TEST(InflatePointsTest, RawDeflateRandomReads) {
  const std::string data = Mixed(5 << 20, 1);
  auto file = std::make_shared<const MemFile>("prefix" + Deflate(data, -15));
  ArchiveIndex index;
  DecodePass pass;
  pass.file = file.get();
  pass.display = "mem";
  std::string out;
  pass.sink = [&](std::span<const char> d) {
    out.append(d.data(), d.size());
    return Status::OK();
  };
  uint32_t crc = 0;
  auto s = IndexDeflate(pass, 6, file->size() - 6, false, &index, &crc);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(out, data);
  EXPECT_EQ(crc, crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
  EXPECT_EQ(s->out_size, data.size());
  EXPECT_GE(s->point_count, 4u);
  index.streams.push_back(*s);
  ExpectRandomReads(file, std::move(index), data);
}

TEST(InflatePointsTest, GzipMembersEmptyOneAndPadding) {
  const std::string a = Mixed(3 << 20, 2), b = Mixed(2 << 20, 3);
  const std::string gz = Deflate(a, 31) + Deflate("", 31) + Deflate(b, 31) + std::string(512, '\0');
  auto file = std::make_shared<const MemFile>(gz);
  ArchiveIndex index;
  DecodePass pass;
  pass.file = file.get();
  pass.display = "mem";
  pass.sink = [](std::span<const char>) { return Status::OK(); };
  uint32_t crc;
  auto s = IndexDeflate(pass, 0, gz.size(), true, &index, &crc);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->out_size, a.size() + b.size());
  index.streams.push_back(*s);
  ExpectRandomReads(file, std::move(index), a + b);
}

TEST(InflatePointsTest, DamageIsAnErrorNeverOtherBytes) {
  const std::string a = Mixed(1 << 20, 4);
  std::string gz = Deflate(a, 31);
  ArchiveIndex index;
  DecodePass pass;
  pass.display = "mem";
  pass.sink = [](std::span<const char>) { return Status::OK(); };
  uint32_t crc;
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 1;  // The member's CRC-32.
  MemFile f1(bad_crc);
  pass.file = &f1;
  EXPECT_EQ(IndexDeflate(pass, 0, f1.size(), true, &index, &crc).status().code(),
            ErrorCode::kBackupDamaged);
  MemFile f2(gz.substr(0, gz.size() / 2));
  pass.file = &f2;
  EXPECT_EQ(IndexDeflate(pass, 0, f2.size(), true, &index, &crc).status().code(),
            ErrorCode::kBackupDamaged);
}

// A hostile stream costs what its useful part does: a member that decodes past the size its
// directory gives stops there (kBackupDamaged), and a stream that goes on past a tar's end is
// decoded only kTrailing further.
TEST(InflatePointsTest, BombsStopEarly) {
  const std::string zeros(64 << 20, '\0');
  uint64_t handed = 0;
  DecodePass pass;
  pass.display = "mem";
  pass.sink = [&](std::span<const char> d) {
    handed += d.size();
    return Status::OK();
  };
  StringFile raw(Deflate(zeros, -15));
  pass.file = &raw;
  pass.max_output = 1 << 20;
  ArchiveIndex index;
  uint32_t crc;
  EXPECT_EQ(IndexDeflate(pass, 0, raw.size(), false, &index, &crc).status().code(),
            ErrorCode::kBackupDamaged);
  EXPECT_LE(handed, (1u << 20) + 32768);
  // Past the sink's end (a tar's end-of-archive block): stops after kTrailing more.
  StringFile gz(Deflate(zeros, 31));
  pass.file = &gz;
  pass.max_output = UINT64_MAX;
  bool done = true;
  pass.sink_done = &done;
  auto s = IndexDeflate(pass, 0, gz.size(), true, &index, &crc);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_LE(s->out_size, DecodePass::kTrailing + 32768);
  std::string zst(ZSTD_compressBound(zeros.size()), '\0');
  zst.resize(ZSTD_compress(zst.data(), zst.size(), zeros.data(), zeros.size(), 1));
  StringFile zf(zst);
  pass.file = &zf;
  auto n = DecodeWhole(StreamCodec::kZstd, pass);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_LE(*n, DecodePass::kTrailing + (256 << 10));
}

TEST(TarScannerTest, UstarPaxGnuAndDirectories) {
  const std::string long_name = "data/" + std::string(150, 'x') + "/columns.txt";
  const std::string pax = PaxRecord("path", long_name) + PaxRecord("size", "3");
  std::string tar;
  tar += TarHeader("./", 0, '5');
  tar += TarHeader("./.backup", 5, '0') + testutil::TarPadded("<cfg>");
  tar += TarHeader("PaxHeader/x", pax.size(), 'x') + testutil::TarPadded(pax);
  tar += TarHeader("short", 999, '0') + testutil::TarPadded("abc");
  tar += TarHeader("././@LongLink", long_name.size() + 5, 'L') +
         testutil::TarPadded("gnu/" + long_name);
  tar += TarHeader("gnu/trunc", 2, '0') + testutil::TarPadded("de");
  tar += TarHeader("b.bin", 1, '0', "data/db") + testutil::TarPadded("f");
  tar += TarHeader("link", 0, '2');
  tar += std::string(1024, '\0') + "trailing junk";
  TarScanner scanner("mem");
  std::mt19937 rng(5);
  for (size_t at = 0; at < tar.size();) {  // Fed in pieces of any size.
    const size_t n = std::min<size_t>(1 + rng() % 700, tar.size() - at);
    ASSERT_TRUE(scanner.Feed({tar.data() + at, n}).ok());
    at += n;
  }
  EXPECT_TRUE(scanner.ended());
  EXPECT_TRUE(scanner.Finish().ok());
  const auto& m = scanner.members();
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].name, ".backup");
  EXPECT_EQ(tar.substr(m[0].offset, m[0].size), "<cfg>");
  EXPECT_EQ(m[1].name, long_name);
  EXPECT_EQ(tar.substr(m[1].offset, m[1].size), "abc");
  EXPECT_EQ(m[2].name, "gnu/" + long_name);
  EXPECT_EQ(tar.substr(m[2].offset, m[2].size), "de");
  EXPECT_EQ(m[3].name, "data/db/b.bin");
}

TEST(TarScannerTest, BadChecksumAndCutStream) {
  std::string tar = TarHeader("a", 600, '0') + testutil::TarPadded(std::string(600, 'a'));
  std::string bad = tar;
  bad[10] ^= 1;
  TarScanner s1("mem");
  EXPECT_EQ(s1.Feed(bad).code(), ErrorCode::kBackupDamaged);
  TarScanner s2("mem");
  ASSERT_TRUE(s2.Feed(std::string_view(tar).substr(0, 700)).ok());
  EXPECT_EQ(s2.Finish().code(), ErrorCode::kBackupDamaged);
}

void Put(std::string& s, uint64_t v, int bytes) { testutil::PutLe(s, v, bytes); }

// One stored member whose sizes and offset are in a ZIP64 extra field, found through the ZIP64
// end record, as writers that stream their output make them.
TEST(ZipDirectoryTest, Zip64StoredMember) {
  const std::string name = ".backup", data = "<config/>";
  std::string zip;
  Put(zip, 0x04034b50, 4);
  Put(zip, 45, 2), Put(zip, 0, 2), Put(zip, 0, 2), Put(zip, 0, 4);
  Put(zip, crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size()), 4);
  Put(zip, 0xffffffff, 4), Put(zip, 0xffffffff, 4);
  Put(zip, name.size(), 2), Put(zip, 20, 2);
  zip += name;
  Put(zip, 1, 2), Put(zip, 16, 2), Put(zip, data.size(), 8), Put(zip, data.size(), 8);
  zip += data;
  const uint64_t cd_at = zip.size();
  Put(zip, 0x02014b50, 4);
  Put(zip, 45, 2), Put(zip, 45, 2), Put(zip, 0, 2), Put(zip, 0, 2), Put(zip, 0, 4);
  Put(zip, crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size()), 4);
  Put(zip, 0xffffffff, 4), Put(zip, 0xffffffff, 4);
  Put(zip, name.size(), 2), Put(zip, 28, 2), Put(zip, 0, 2), Put(zip, 0, 2), Put(zip, 0, 2);
  Put(zip, 0, 4), Put(zip, 0xffffffff, 4);
  zip += name;
  Put(zip, 1, 2), Put(zip, 24, 2), Put(zip, data.size(), 8), Put(zip, data.size(), 8),
      Put(zip, 0, 8);
  const uint64_t cd_size = zip.size() - cd_at, end64_at = zip.size();
  Put(zip, 0x06064b50, 4), Put(zip, 44, 8), Put(zip, 45, 2), Put(zip, 45, 2), Put(zip, 0, 4);
  Put(zip, 0, 4), Put(zip, 1, 8), Put(zip, 1, 8), Put(zip, cd_size, 8), Put(zip, cd_at, 8);
  Put(zip, 0x07064b50, 4), Put(zip, 0, 4), Put(zip, end64_at, 8), Put(zip, 1, 4);
  Put(zip, 0x06054b50, 4), Put(zip, 0, 2), Put(zip, 0, 2), Put(zip, 0xffff, 2);
  Put(zip, 0xffff, 2), Put(zip, 0xffffffff, 4), Put(zip, 0xffffffff, 4), Put(zip, 0, 2);
  MemFile f(zip);
  auto entries = ReadZipDirectory(f, "mem");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].name, name);
  EXPECT_EQ((*entries)[0].size, data.size());
  EXPECT_EQ(zip.substr((*entries)[0].data_offset, data.size()), data);
  for (size_t cut : {zip.size() - 30, cd_at + 10, size_t{10}}) {
    MemFile short_file(zip.substr(0, cut));
    EXPECT_EQ(ReadZipDirectory(short_file, "mem").status().code(), ErrorCode::kBackupDamaged);
  }
}

// Members compressed with zstd, xz and bzip2 (zip methods 93, 95, 12) beside a stored one and a
// deflate one: each decoded once into one cached stream, read back exactly.
TEST(ZipIndexTest, ZstdXzBzip2MembersAreDecodedIntoTheCache) {
  const std::string a = Mixed(300000, 21), b = Mixed(200000, 22), c = Mixed(100000, 23);
  std::string zst(ZSTD_compressBound(a.size()), '\0');
  zst.resize(ZSTD_compress(zst.data(), zst.size(), a.data(), a.size(), 3));
  std::string xz(lzma_stream_buffer_bound(b.size()), '\0');
  size_t xz_len = 0;
  ASSERT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr,
                                    reinterpret_cast<const uint8_t*>(b.data()), b.size(),
                                    reinterpret_cast<uint8_t*>(xz.data()), &xz_len, xz.size()),
            LZMA_OK);
  xz.resize(xz_len);
  std::string bz(c.size() + c.size() / 100 + 600, '\0');
  unsigned bz_len = static_cast<unsigned>(bz.size());
  ASSERT_EQ(BZ2_bzBuffToBuffCompress(bz.data(), &bz_len, const_cast<char*>(c.data()),
                                     static_cast<unsigned>(c.size()), 9, 0, 0),
            BZ_OK);
  bz.resize(bz_len);
  const std::string d = Mixed(50000, 24);
  MemFile file(MakeZip({{".backup", 0, "<cfg/>", "<cfg/>"},
                        {"a", 93, zst, a},
                        {"b", 95, xz, b},
                        {"c", 12, bz, c},
                        {"d", 8, Deflate(d, -15), d}}));
  auto built = BuildArchiveIndex(file, ArchiveKindOf("x.zip"), ArchiveStamp{}, "mem", nullptr, {});
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  auto reader = std::make_shared<const ArchiveReader>(
      std::shared_ptr<const RandomAccessFile>(&file, [](const RandomAccessFile*) {}),
      std::move(built->index), std::move(built->stream), "mem", nullptr, ArchiveStamp{});
  for (const auto& [name, want] : {std::pair{"a", a}, {"b", b}, {"c", c}, {"d", d}}) {
    const ArchiveMember* m = reader->index().Find(name);
    ASSERT_NE(m, nullptr) << name;
    auto f = reader->OpenMember(*m);
    std::string got(want.size(), '\0');
    auto n = f->ReadAt(0, got);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(got, want) << name;
  }
  // A member whose bytes do not decode to its CRC-32 is damaged, naming it.
  std::string bad = zst;
  bad[bad.size() / 2] ^= 0x10;
  MemFile damaged(MakeZip({{"a", 93, bad, a}}));
  auto refused =
      BuildArchiveIndex(damaged, ArchiveKindOf("x.zip"), ArchiveStamp{}, "mem", nullptr, {});
  EXPECT_EQ(refused.status().code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(refused.status().message().find("member a"), std::string::npos);
}

TEST(ArchiveIndexTest, EncodeDecodeAndRefuseDamageOrOtherArchive) {
  ArchiveIndex x;
  x.kind = {ArchiveContainer::kTar, StreamCodec::kGzip};
  x.streams.push_back({StreamMethod::kDeflate, 0, 900, 5000, 0, 2});
  x.points.push_back({0, 0, 0, 0});
  x.points.push_back({4001, 3000, 0, 3});
  x.windows = "abc";
  x.members.push_back({"b", 0, 10, 20});
  x.members.push_back({"a", 0, 0, 10});
  x.SortMembers();
  const ArchiveStamp stamp{1, 2, 1000, {3, 4}, {5, 6}};
  const std::string bytes = EncodeArchiveIndex(x, stamp);
  auto back = DecodeArchiveIndex(bytes, stamp);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_NE(back->Find("a"), nullptr);
  EXPECT_EQ(back->Find("b")->offset, 10u);
  EXPECT_EQ(back->Find("c"), nullptr);
  EXPECT_EQ(back->points[1].in_bit, 4001u);
  ArchiveStamp other = stamp;
  other.mtime.nsec = 5;
  EXPECT_FALSE(DecodeArchiveIndex(bytes, other).ok());
  for (size_t i = 0; i < bytes.size(); i += 7) {
    std::string damaged = bytes;
    damaged[i] ^= 0x20;
    EXPECT_FALSE(DecodeArchiveIndex(damaged, stamp).ok()) << i;
  }
  EXPECT_FALSE(DecodeArchiveIndex(bytes.substr(0, bytes.size() - 1), stamp).ok());
  // Through the cache the windows stay in the mapped file, the same bytes.
  testutil::TempDir dir;
  ArchiveCache cache(dir.path() + "/archives", 1 << 20);
  cache.StoreIndex(stamp, x);
  auto loaded = cache.LoadIndex(stamp);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_NE(loaded->windows_owner, nullptr);
  EXPECT_TRUE(loaded->windows.empty());
  EXPECT_EQ(loaded->Windows(), "abc");
  EXPECT_FALSE(cache.LoadIndex(other).has_value());
  // A cached index of the format before (magic STITCHA2) is a miss, and goes. (Replaced as the
  // cache replaces its files: `loaded` still maps the one it read.)
  for (const auto& f : std::filesystem::directory_iterator(dir.path() + "/archives")) {
    if (f.path().extension() != ".aindex") continue;
    testutil::WriteFile(f.path().string() + ".new", "STITCHA2" + bytes);
    std::filesystem::rename(f.path().string() + ".new", f.path());
  }
  EXPECT_FALSE(cache.LoadIndex(stamp).has_value());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() + "/archives"));
  EXPECT_EQ(loaded->Windows(), "abc");
}

}  // namespace
}  // namespace stitchfs::engine
