// Hostile archives (issue 25 §3): members that share bytes, sizes beyond what an archive can
// hold, bombs spread over many members, many members, long names, decoders that ask for
// gigabytes. Each is refused as BACKUP_DAMAGED naming the archive (and member), and the work the
// index build did (IndexBudget, counted, not timed) stays within a bound; legitimate archives of
// the same shapes still read.
#include <gtest/gtest.h>
#include <lzma.h>
#include <xxhash.h>
#include <zlib.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/backends/archive/archive_index.h"
#include "engine/backends/archive/archive_reader.h"
#include "engine/backends/archive/archive_storage.h"
#include "engine/backends/archive/index_builder.h"
#include "engine/base/index_codec.h"
#include "engine/base/string_file.h"
#include "engine/location/archive_kind.h"
#include "tests/testutil/archives.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::Deflate;
using testutil::MakeZip;
using testutil::TarHeader;
using testutil::ZipLocal;
using testutil::ZipMember;
using testutil::ZipWithDirectory;
using testutil::ZstdZeros;

constexpr uint64_t kMiB = 1 << 20;

// Builds the index of `bytes` as an archive named `name`, counting into `*budget`.
StatusOr<BuiltIndex> Build(const std::string& bytes, const std::string& name, IndexBudget* budget) {
  const StringFile file(bytes);
  return BuildArchiveIndex(file, ArchiveKindOf(name), ArchiveStamp{}, name, nullptr, {}, budget);
}

// The default budget of an archive of `bytes`.
IndexBudget DefaultBudget(const std::string& bytes) {
  return IndexBudget(IndexLimits::For(bytes.size()), bytes.size());
}

void ExpectDamaged(const StatusOr<BuiltIndex>& built, const std::vector<std::string>& says) {
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), ErrorCode::kBackupDamaged) << built.status().ToString();
  for (const std::string& s : says) {
    EXPECT_NE(built.status().message().find(s), std::string::npos)
        << "no \"" << s << "\" in " << built.status().ToString();
  }
}

TEST(IndexLimitsTest, AFixedMultipleOfTheArchivePlusAFloor) {
  EXPECT_EQ(IndexLimits::For(0).work, IndexLimits::kWorkFloor);
  EXPECT_EQ(IndexLimits::For(0).index, IndexLimits::kIndexFloor);
  EXPECT_EQ(IndexLimits::For(kMiB).work, IndexLimits::kWorkFloor + 1100 * kMiB);
  EXPECT_EQ(IndexLimits::For(kMiB).index, IndexLimits::kIndexFloor + 64 * kMiB);
  EXPECT_EQ(IndexLimits::For(UINT64_MAX).work, UINT64_MAX);
  EXPECT_EQ(IndexLimits::For(UINT64_MAX / 64).index, UINT64_MAX);
}

// The archive of the issue: 300 directory entries over one deflate bomb. Refused from the
// directory alone, before a byte is decoded (it took 104 s, 703 MB and a 226 MB index).
TEST(HostileZipTest, EntriesSharingOneMemberAreRefusedBeforeDecoding) {
  const std::string zip = testutil::SharedBombZip(300, 8 * kMiB);
  IndexBudget budget = DefaultBudget(zip);
  ExpectDamaged(Build(zip, "shared.zip", &budget), {"shared.zip", "members data/m", "overlap"});
  EXPECT_EQ(budget.work(), 0u);
  EXPECT_EQ(budget.index(), 0u);
}

// An index of an older format (1 had no budget and accepted members sharing bytes) is not
// trusted: the archive is indexed again, under today's checks.
TEST(HostileZipTest, IndexesCachedByAnOlderStitchAreNotTrusted) {
  ArchiveIndex x;
  x.kind = {ArchiveContainer::kZip, StreamCodec::kNone};
  x.streams.push_back({StreamMethod::kStored, 30, 5, 5, 0, 0});
  x.members.push_back({"a", 0, 0, 5});
  x.members.push_back({"b", 0, 0, 5});
  const ArchiveStamp stamp{1, 2, 100, {3, 4}, {5, 6}};
  std::string bytes = EncodeArchiveIndex(x, stamp);
  ASSERT_TRUE(DecodeArchiveIndex(bytes, stamp).ok());
  const uint32_t older = 2;  // The format of before, with its checksum made right.
  std::memcpy(bytes.data() + 12, &older, 4);
  const XXH128_hash_t h = XXH3_128bits(bytes.data() + IndexLayout::kHeaderBytes,
                                       bytes.size() - IndexLayout::kHeaderBytes);
  std::memcpy(bytes.data() + IndexLayout::kHashOffset, &h.low64, 8);
  std::memcpy(bytes.data() + IndexLayout::kHashOffset + 8, &h.high64, 8);
  EXPECT_EQ(DecodeArchiveIndex(bytes, stamp).status().code(), ErrorCode::kBackupDamaged);
}

// A member whose local header lies inside another's data, and one whose data reaches into the
// central directory.
TEST(HostileZipTest, PartialOverlapsAndTheDirectoryAreRefused) {
  const ZipMember inner{"b", 0, "hello", "hello"};
  const std::string nested = ZipLocal(inner);
  const ZipMember outer{"a", 0, nested, nested};
  const std::string inside = ZipWithDirectory(ZipLocal(outer), {{outer, 0}, {inner, 31}});
  IndexBudget b1 = DefaultBudget(inside);
  ExpectDamaged(Build(inside, "inside.zip", &b1), {"inside.zip", "members a and b overlap"});
  EXPECT_EQ(b1.work(), 0u);

  const ZipMember shown{"a", 0, "data", "data"};
  const ZipMember claimed{"a", 0, std::string(40, 'x'), std::string(40, 'x')};
  const std::string into = ZipWithDirectory(ZipLocal(shown), {{claimed, 0}});
  IndexBudget b2 = DefaultBudget(into);
  ExpectDamaged(Build(into, "into.zip", &b2),
                {"into.zip", "member a", "overlaps the central directory"});
}

// Legitimate layouts: members one after another (ClickHouse's writer has one member open at a
// time), with data descriptors between them (as streaming writers put them) and a folder entry,
// read back whole.
TEST(HostileZipTest, MembersOneAfterAnotherWithDescriptorsRead) {
  const std::string a = testutil::Mixed(3 * kMiB, 1), b = testutil::Mixed(1000, 2);
  const std::string zip = MakeZip({{".backup", 0, "<cfg/>", "<cfg/>", true},
                                   {"data/", 0, "", ""},
                                   {"data/a", 8, Deflate(a, -15), a, true},
                                   {"data/b", 0, b, b, true},
                                   {"data/c", 93, testutil::Zstd(b), b}});
  IndexBudget budget = DefaultBudget(zip);
  const StringFile file(zip);
  auto built = BuildArchiveIndex(file, ArchiveKindOf("ok.zip"), {}, "ok.zip", nullptr, {}, &budget);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  auto reader = std::make_shared<const ArchiveReader>(
      std::shared_ptr<const RandomAccessFile>(&file, [](const RandomAccessFile*) {}),
      std::move(built->index), std::move(built->stream), "ok.zip", nullptr, ArchiveStamp{});
  for (const auto& [name, want] : {std::pair{"data/a", a}, {"data/b", b}, {"data/c", b}}) {
    const ArchiveMember* m = reader->index().Find(name);
    ASSERT_NE(m, nullptr) << name;
    std::string got(want.size(), '\0');
    ASSERT_TRUE(reader->OpenMember(*m)->ReadAt(0, got).ok()) << name;
    EXPECT_EQ(got, want) << name;
  }
  // What it read and decoded, and the starts of its decoders; nothing else.
  EXPECT_GE(budget.work(), a.size() + b.size());
  EXPECT_LE(budget.work(), zip.size() + a.size() + b.size() + 2 * IndexLimits::kStartCost);
}

// Sizes declared beyond what the member's bytes can give (deflate: 1032 to 1), or beyond the
// budget in all: refused before anything is decoded.
TEST(HostileZipTest, DeclaredSizesBeyondTheArchiveAreRefusedBeforeDecoding) {
  const std::string small = Deflate("abc", -15), big(4 * kMiB, 'a');
  const std::string liar = MakeZip({{"data/liar", 8, small, big}});
  IndexBudget b1 = DefaultBudget(liar);
  ExpectDamaged(Build(liar, "liar.zip", &b1), {"liar.zip member data/liar", "declares"});
  EXPECT_EQ(b1.work(), 0u);

  // 40 honest zstd bombs of 1 MiB each (4 bytes per 128 KiB), against a 16 MiB budget.
  std::vector<ZipMember> bombs;
  const std::string mib(kMiB, '\0');
  for (int i = 0; i < 40; ++i) {
    std::string name = "m";  // (not "m" + ...: a false -Wrestrict in GCC 12)
    name += std::to_string(i);
    bombs.push_back({name, 93, ZstdZeros(kMiB), mib});
  }
  const std::string many = MakeZip(bombs);
  IndexBudget b2({16 * kMiB, kMiB}, many.size());
  ExpectDamaged(Build(many, "many.zip", &b2), {"many.zip member m15", "declares"});
  EXPECT_EQ(b2.work(), 0u);
}

// Tars compressed with each codec against a 4 MiB budget. Members of zeros that would take
// the stream past what the budget can decode are refused at their header; incompressible ones
// (input and output both work) when the work passes the budget. Both name the member.
class HostileTarTest : public testing::TestWithParam<const char*> {};

std::string Compress(const std::string& kind, const std::string& tar) {
  if (kind == "tar.gz") return Deflate(tar, 31);
  if (kind == "tar.zst") return testutil::Zstd(tar);
  if (kind == "tar.xz") return testutil::Xz(tar);
  if (kind == "tar.bz2") return testutil::Bzip2(tar);
  return tar;
}

// A tar of `files` members of `size` bytes each, of zeros or random bytes, with its end.
std::string TarOf(int files, uint64_t size, bool random) {
  std::string tar;
  for (int i = 0; i < files; ++i) {
    tar += TarHeader("data/f" + std::to_string(i), size, '0');
    tar += testutil::TarPadded(random ? testutil::RandomBytes(size, i) : std::string(size, '\0'));
  }
  return tar + std::string(1024, '\0');
}

TEST_P(HostileTarTest, DecodingStopsAtTheBudget) {
  const std::string kind = GetParam(), name = "bomb." + kind;
  for (const bool random : {false, true}) {
    const std::string bytes = Compress(kind, TarOf(random ? 3 : 10, kMiB, random));
    IndexBudget budget({4 * kMiB, kMiB}, bytes.size());
    ExpectDamaged(Build(bytes, name, &budget),
                  {name, random ? "reached member data/f" : "member data/f3 declares"});
    // One decoder chunk (256 KiB) and one read (128 KiB) past the limit at most.
    EXPECT_LE(budget.work(), 4 * kMiB + 384 * 1024 + IndexLimits::kStartCost) << random;
    // With the default budget the same archive is a legitimate one, and reads.
    IndexBudget ample = DefaultBudget(bytes);
    auto built = Build(bytes, name, &ample);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    EXPECT_EQ(built->index.members.size(), random ? 3u : 10u);
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, HostileTarTest,
                         testing::Values("tar.gz", "tar.zst", "tar.xz", "tar.bz2"),
                         [](const auto& info) { return std::string(info.param).substr(4); });

// A pax size of 2^62 (or any size beyond what the archive can hold): refused at its header,
// naming the member, whatever the compression.
TEST(HostileTarTest, PaxSizesBeyondTheArchiveAreRefusedAtTheHeader) {
  const std::string pax = testutil::PaxRecord("size", "4611686018427387904");
  std::string tar = TarHeader("PaxHeader/big", pax.size(), 'x') + testutil::TarPadded(pax);
  tar += TarHeader("data/big", 0, '0') + std::string(64 * 1024, '\0');
  for (const std::string kind : {"tar", "tar.gz", "tar.zst"}) {
    const std::string bytes = Compress(kind, tar), name = "big." + kind;
    IndexBudget budget = DefaultBudget(bytes);
    ExpectDamaged(Build(bytes, name, &budget), {name + " member data/big declares"});
    EXPECT_LE(budget.work(), 2 * tar.size() + IndexLimits::kStartCost) << kind;
  }
}

// Names of 512 KiB each (pax paths) compress to almost nothing: 200 of them would keep 100 MiB
// of index from a tar.zst of a few kilobytes. The index bytes stop at the budget.
TEST(HostileTarTest, LongNamesStopAtTheIndexBudget) {
  std::string tar;
  for (int i = 0; i < 200; ++i) {
    const std::string pax =
        testutil::PaxRecord("path", "d/" + std::string(512 * 1024, 'x') + std::to_string(i));
    tar += TarHeader("PaxHeader/n", pax.size(), 'x') + testutil::TarPadded(pax);
    tar += TarHeader("n", 0, '0');
  }
  const std::string bytes = testutil::Zstd(tar + std::string(1024, '\0'));
  IndexBudget budget = DefaultBudget(bytes);
  ExpectDamaged(Build(bytes, "names.tar.zst", &budget),
                {"names.tar.zst member d/xxx", "bytes of index"});
  EXPECT_LE(budget.index(), budget.limits().index + 600 * 1024);
  EXPECT_LT(budget.limits().index, 70 * kMiB);
}

// A member name opening with a megabyte of "/" and "./" (a pax path): normalized in one pass
// (it took seconds per name when each step moved the rest of the name).
TEST(HostileTarTest, LeadingSlashesAndDotsAreStrippedInOnePass) {
  std::string tar;
  const std::pair<std::string, std::string> names[] = {
      {std::string(1000000, '/') + "d/slashes", "d/slashes"},
      {[] {
         std::string n;
         while (n.size() < 900000) n += "./";
         return n + "/./d/dots";
       }(),
       "d/dots"},
      {"/./././/d/mixed", "d/mixed"},
  };
  for (const auto& [name, normal] : names) {
    const std::string pax = testutil::PaxRecord("path", name);
    tar += TarHeader("PaxHeader/n", pax.size(), 'x') + testutil::TarPadded(pax);
    tar += TarHeader("n", 0, '0');
  }
  const std::string bytes = tar + std::string(1024, '\0');
  IndexBudget budget = DefaultBudget(bytes);
  auto built = Build(bytes, "names.tar", &budget);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  std::vector<std::string> got;
  for (const auto& m : built->index.members) got.push_back(m.name);
  EXPECT_EQ(got, (std::vector<std::string>{"d/dots", "d/mixed", "d/slashes"}));
}

// Deflate written by hand: one final block with the fixed Huffman codes (RFC 1951, 3.2.6).
class FixedBlock {
 public:
  FixedBlock() {
    Bits(1, 1);  // BFINAL
    Bits(1, 2);  // BTYPE 01
  }
  void Literal(unsigned char c) {
    if (c < 144) {
      Huffman(0x30 + c, 8);
    } else {
      Huffman(0x190 + c - 144, 9);
    }
  }
  // A copy of 258 bytes from 1 byte back: length code 285 (8 bits), distance code 0 (5 bits).
  void Repeat258() {
    Huffman(0xC5, 8);
    Huffman(0, 5);
  }
  std::string Finish() {
    Huffman(0, 7);  // End of block.
    if (fill_ > 0) out_.push_back(static_cast<char>(acc_));
    return out_;
  }

 private:
  void Bits(uint32_t v, int n) {
    for (int i = 0; i < n; ++i) Bit((v >> i) & 1);
  }
  void Huffman(uint32_t code, int n) {  // Huffman codes go most significant bit first.
    for (int i = n - 1; i >= 0; --i) Bit((code >> i) & 1);
  }
  void Bit(uint32_t b) {
    acc_ |= b << fill_;
    if (++fill_ < 8) return;
    out_.push_back(static_cast<char>(acc_));
    acc_ = 0;
    fill_ = 0;
  }
  std::string out_;
  uint32_t acc_ = 0;
  int fill_ = 0;
};

// A .tar.gz whose 20 MiB member is one deflate block (a hostile writer's: zlib writes blocks of
// at most about 8.4 MB). Any read in it would decode the whole block into memory: refused while
// indexing. The same tar as zlib writes it reads.
TEST(HostileTarTest, ADeflateBlockOfTensOfMegabytesIsRefused) {
  const uint64_t size = 1 + 258 * uint64_t{81300};  // 20.0 MiB of 'a'.
  const std::string header = TarHeader("data/big", size, '0');
  const std::string tail(511 - (size + 511) % 512 + 1024, '\0');  // Padding, end of archive.
  FixedBlock block;
  for (unsigned char c : header) block.Literal(c);
  block.Literal('a');
  for (uint64_t i = 0; i < (size - 1) / 258; ++i) block.Repeat258();
  for (unsigned char c : tail) block.Literal(c);
  const std::string tar = header + std::string(size, 'a') + tail;
  std::string gz("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  gz += block.Finish();
  const uint32_t trailer[2] = {
      static_cast<uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(tar.data()), tar.size())),
      static_cast<uint32_t>(tar.size())};
  gz.append(reinterpret_cast<const char*>(trailer), sizeof trailer);
  ASSERT_LT(gz.size(), 200 * 1024u);
  IndexBudget budget = DefaultBudget(gz);
  ExpectDamaged(Build(gz, "one-block.tar.gz", &budget),
                {"one-block.tar.gz", "a deflate block decodes to more than 16 MiB"});
  const std::string zlib_made = Deflate(tar, 31);
  IndexBudget ample = DefaultBudget(zlib_made);
  auto built = Build(zlib_made, "ok.tar.gz", &ample);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_EQ(built->index.members.size(), 1u);
  EXPECT_EQ(built->index.members[0].name, "data/big");
}

// Many empty gzip members (20 bytes each) or bzip2 streams: each start of a decoder is work.
TEST(HostileTarTest, EveryStreamStartIsWork) {
  std::string gz, bz;
  for (int i = 0; i < 20000; ++i) gz += Deflate("", 31);
  for (int i = 0; i < 2000; ++i) bz += testutil::Bzip2("");
  for (const auto& [name, bytes] : {std::pair{"empty.tar.gz", gz}, {"empty.tar.bz2", bz}}) {
    IndexBudget budget({4 * kMiB, kMiB}, bytes.size());
    ExpectDamaged(Build(bytes, name, &budget), {name, "refused"});
    EXPECT_LE(budget.work(), 4 * kMiB + IndexLimits::kStartCost + 256 * 1024) << name;
  }
}

// An lzma header may ask for a 1.5 GiB dictionary, which liblzma would allocate: refused.
TEST(HostileTarTest, DecodersThatAskForGigabytesAreRefused) {
  lzma_options_lzma opt;
  ASSERT_FALSE(lzma_lzma_preset(&opt, 1));
  lzma_stream z = LZMA_STREAM_INIT;
  ASSERT_EQ(lzma_alone_encoder(&z, &opt), LZMA_OK);
  const std::string tar = TarOf(1, 1000, false);
  std::string out(1 << 16, '\0');
  z.next_in = reinterpret_cast<const uint8_t*>(tar.data());
  z.avail_in = tar.size();
  z.next_out = reinterpret_cast<uint8_t*>(out.data());
  z.avail_out = out.size();
  ASSERT_EQ(lzma_code(&z, LZMA_FINISH), LZMA_STREAM_END);
  out.resize(out.size() - z.avail_out);
  lzma_end(&z);
  IndexBudget ok = DefaultBudget(out);
  ASSERT_TRUE(Build(out, "a.tar.lzma", &ok).ok());
  const uint32_t gib = 1u << 30;  // The dictionary size, bytes 1-4 of the header.
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<char>(gib >> (8 * i));
  IndexBudget budget = DefaultBudget(out);
  ExpectDamaged(Build(out, "a.tar.lzma", &budget), {"a.tar.lzma", "MiB of memory"});
}

// A version of an archive refused once is refused again at once: a mount opens a backup for
// each request (and a store mount tries a failed open again), and must not pay for a hostile
// archive's index each time.
TEST(HostileStorageTest, ARefusedArchiveIsNotIndexedAgain) {
  testutil::TempDir dir;
  const std::string path = dir / "bad.tar.gz";
  std::string gz = Deflate(TarOf(3, 100000, false), 31);
  gz[gz.size() - 6] ^= 1;  // The gzip member's CRC-32.
  testutil::WriteFile(path, gz);
  int builds = 0;
  ArchiveStorage storage(
      nullptr, LocalArchiveFiles(),
      [&](const std::string&, uint64_t done, uint64_t) { builds += done == gz.size(); });
  for (int open = 0; open < 3; ++open) {
    auto folder = storage.OpenFolder(path);
    ASSERT_TRUE(folder.ok()) << folder.status().ToString();
    const Status s = storage.OpenManifest(**folder).status();
    EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged) << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(builds, 1);
}

}  // namespace
}  // namespace stitchfs::engine
