#include "engine/base/index_codec.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/index_stream.h"
#include "engine/base/unique_fd.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::TempDir;

constexpr uint32_t kRecs = IndexTag("RECS"), kText = IndexTag("TEXT"), kMisc = IndexTag("MISC");
constexpr uint32_t kTags[] = {kRecs, kText, kMisc};
constexpr IndexKind kKind{"test index", {'S', 'T', 'F', 'S', 'T', 'E', 'S', 'T'}, 7, kTags};
constexpr IndexKind kOtherKind{"other index", {'S', 'T', 'F', 'S', 'O', 'T', 'H', 'R'}, 7, kTags};

struct Rec {
  uint64_t a;
  uint32_t b, c;
  bool operator==(const Rec&) const = default;
};
const std::vector<Rec> kRecords = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};

// A u8, a u32, a u64, a string, and a count of the bytes after it, as IndexCursor reads them.
std::string MiscBytes() {
  std::string s;
  const auto put = [&s](const auto& v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(uint8_t{0xab});
  put(uint32_t{0x01020304});
  put(uint64_t{0x1122334455667788});
  put(uint32_t{5});
  s += "hello";
  put(uint64_t{2});
  s += "xy";
  return s;
}

std::string Sample() {
  IndexEncoder e(kKind);
  e.AddArray(kRecs, std::span<const Rec>(kRecords));
  e.Add(kText, "odd length");
  e.Add(kMisc, MiscBytes());
  return e.Finish();
}

template <typename T>
void Set(std::string& f, size_t at, T v) {
  std::memcpy(f.data() + at, &v, sizeof v);
}

// Makes the checksum right again, as someone forging a file would.
void Reseal(std::string& f) {
  const XXH128_hash_t h =
      XXH3_128bits(f.data() + IndexLayout::kHeaderBytes, f.size() - IndexLayout::kHeaderBytes);
  Set(f, IndexLayout::kHashOffset, h.low64);
  Set(f, IndexLayout::kHashOffset + 8, h.high64);
}

// Where the fields of the table entry of section `i` are.
size_t EntryAt(size_t i) { return IndexLayout::kHeaderBytes + i * IndexLayout::kEntryBytes; }
size_t TagAt(size_t i) { return EntryAt(i); }
size_t FlagsAt(size_t i) { return EntryAt(i) + 4; }
size_t OffsetAt(size_t i) { return EntryAt(i) + 8; }
size_t LengthAt(size_t i) { return EntryAt(i) + 16; }

template <typename T>
T Get(const std::string& f, size_t at) {
  T v;
  std::memcpy(&v, f.data() + at, sizeof v);
  return v;
}

// Opens a copy of `bytes` in a buffer of exactly their size (a read past its end is a heap
// overflow the sanitizers report), and through a file with the stream reader; both must give
// the same code. Returns the whole-buffer status.
Status OpenBoth(std::string_view bytes, const IndexKind& kind = kKind) {
  std::unique_ptr<char[]> exact(new char[bytes.size() + (bytes.empty() ? 1 : 0)]);
  if (!bytes.empty()) std::memcpy(exact.get(), bytes.data(), bytes.size());
  const Status whole = IndexView::Open({exact.get(), bytes.size()}, kind).status();
  TempDir dir;
  testutil::WriteFile(dir / "f", bytes);
  UniqueFd fd(::open((dir / "f").c_str(), O_RDONLY));
  auto r = IndexFileReader::Open(fd.get(), kind);
  Status streamed = r.status();
  if (r.ok()) streamed = r->Finish();
  EXPECT_EQ(whole.code(), streamed.code()) << whole.ToString() << " / " << streamed.ToString();
  return whole;
}

void ExpectRefused(std::string_view bytes, const std::string& why) {
  const Status s = OpenBoth(bytes);
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged) << why;
  EXPECT_NE(s.message().find(why), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("test index"), std::string::npos) << s.ToString();
}

TEST(IndexCodecTest, RoundTripViewsRecordsInPlace) {
  const std::string f = Sample();
  EXPECT_EQ(f.size() % 8, 0u);
  EXPECT_EQ(std::string_view(f).substr(0, 8), "STFSTEST");
  auto v = IndexView::Open(f, kKind);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  std::span<const Rec> recs;
  ASSERT_OK(v->ViewArray(kRecs, &recs));
  EXPECT_EQ(std::vector<Rec>(recs.begin(), recs.end()), kRecords);
  EXPECT_GE(reinterpret_cast<const char*>(recs.data()), f.data()) << "viewed, not copied";
  EXPECT_LT(reinterpret_cast<const char*>(recs.data()), f.data() + f.size());
  std::string_view text;
  ASSERT_OK(v->Bytes(kText, &text));
  EXPECT_EQ(text, "odd length");
  auto c = v->Section(kMisc);
  ASSERT_TRUE(c.ok());
  uint8_t u8;
  uint32_t u32;
  uint64_t u64, count;
  std::string s;
  ASSERT_OK(c->U8(&u8));
  ASSERT_OK(c->U32(&u32));
  ASSERT_OK(c->U64(&u64));
  ASSERT_OK(c->String(&s));
  ASSERT_OK(c->Count(&count, 1));
  std::string_view items;
  ASSERT_OK(c->Bytes(count, &items));
  EXPECT_EQ(items, "xy");
  EXPECT_EQ(u8, 0xab);
  EXPECT_EQ(u32, 0x01020304u);
  EXPECT_EQ(u64, 0x1122334455667788u);
  EXPECT_EQ(s, "hello");
  EXPECT_EQ(count, 2u);
  EXPECT_OK(c->End());
  EXPECT_OK(OpenBoth(f));
}

TEST(IndexCodecTest, NoSectionsAndEmptySections) {
  const std::string none = IndexEncoder(kKind).Finish();
  EXPECT_EQ(none.size(), IndexLayout::kHeaderBytes);
  EXPECT_OK(OpenBoth(none));
  auto v = IndexView::Open(none, kKind);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Section(kRecs).status().code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(v->Section(kRecs).status().message().find("no section RECS"), std::string::npos);

  IndexEncoder e(kKind);
  e.AddArray(kRecs, std::span<const Rec>());
  e.Add(kText, "");
  const std::string empty = e.Finish();
  auto w = IndexView::Open(empty, kKind);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  std::span<const Rec> recs;
  ASSERT_OK(w->ViewArray(kRecs, &recs));
  EXPECT_TRUE(recs.empty());
}

TEST(IndexCodecTest, CursorReadsNothingPastItsSection) {
  const std::string bytes = "abc";
  IndexCursor c(bytes, "test index", kMisc);
  uint32_t u32;
  const Status s = c.U32(&u32);
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(s.message().find("test index: section MISC: 4 bytes wanted at 0, 3 left"),
            std::string::npos)
      << s.ToString();
  std::string str;
  EXPECT_EQ(c.String(&str).code(), ErrorCode::kBackupDamaged) << "a length of 0x636261";
  uint8_t u8;
  for (int i = 0; i < 3; ++i) ASSERT_OK(c.U8(&u8));
  EXPECT_EQ(c.U8(&u8).code(), ErrorCode::kBackupDamaged);
  EXPECT_OK(c.End());

  IndexCursor left(bytes, "test index", kMisc);
  EXPECT_NE(left.End().message().find("3 bytes left over"), std::string::npos);
  std::vector<Rec> recs;
  EXPECT_EQ(left.CopyRest(&recs).code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(left.CopyRest(&recs).message().find("not a whole number of records of 16"),
            std::string::npos);
}

TEST(IndexCodecTest, HugeCountsAreRefusedBeforeAnyAllocation) {
  std::string bytes(16, '\0');
  Set(bytes, 0, uint64_t{1} << 60);
  IndexCursor c(bytes, "test index", kMisc);
  uint64_t n = 0;
  const Status s = c.Count(&n, 8);
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(s.message().find("records of 8 bytes wanted"), std::string::npos) << s.ToString();
  IndexCursor view(bytes, "test index", kMisc);
  std::span<const Rec> recs;
  EXPECT_EQ(view.View(uint64_t{1} << 62, &recs).code(), ErrorCode::kBackupDamaged);

  std::string f = Sample();
  Set(f, 20, uint32_t{0xffffffff});  // The section count.
  ExpectRefused(f, "sections do not fit the file");
  Set(f, 20, IndexLayout::kMaxSections + 1);
  ExpectRefused(f, "sections do not fit the file");
  f = Sample();
  Set(f, LengthAt(0), uint64_t{1} << 62);
  Reseal(f);
  ExpectRefused(f, "lies outside the file");
}

TEST(IndexCodecTest, RecordsViewedInPlaceMustBeAligned) {
  alignas(8) char buffer[40] = {};
  IndexCursor c({buffer + 4, 32}, "test index", kRecs);
  std::span<const Rec> recs;
  const Status s = c.ViewRest(&recs);
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(s.message().find("not aligned"), std::string::npos) << s.ToString();
  IndexCursor copied({buffer + 4, 32}, "test index", kRecs);
  std::vector<Rec> v;
  EXPECT_OK(copied.CopyRest(&v));  // Copies need no alignment.
  EXPECT_EQ(v.size(), 2u);
}

TEST(IndexCodecTest, TruncationAtEveryLengthIsRefused) {
  const std::string f = Sample();
  for (size_t n = 0; n < f.size(); ++n) {
    EXPECT_EQ(OpenBoth(std::string_view(f).substr(0, n)).code(), ErrorCode::kBackupDamaged) << n;
  }
  EXPECT_EQ(OpenBoth(f + std::string(8, '\0')).code(), ErrorCode::kBackupDamaged);
}

TEST(IndexCodecTest, AFlippedBitInEveryHeaderByteIsRefused) {
  const std::string good = Sample();
  for (size_t at = 0; at < IndexLayout::kHeaderBytes; ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string f = good;
      f[at] = static_cast<char>(f[at] ^ (1 << bit));
      EXPECT_EQ(OpenBoth(f).code(), ErrorCode::kBackupDamaged) << at << " bit " << bit;
      if (at >= IndexLayout::kHashOffset) continue;
      Reseal(f);  // Only the checksum stops a change of the header? It must not.
      EXPECT_EQ(OpenBoth(f).code(), ErrorCode::kBackupDamaged) << at << " bit " << bit;
    }
  }
}

TEST(IndexCodecTest, AFlippedByteAfterTheHeaderIsRefused) {
  const std::string good = Sample();
  for (size_t at = IndexLayout::kHeaderBytes; at < good.size(); ++at) {
    std::string f = good;
    f[at] = static_cast<char>(f[at] ^ 0x40);
    EXPECT_EQ(OpenBoth(f).code(), ErrorCode::kBackupDamaged) << at;
  }
  std::string f = good;
  f.back() = static_cast<char>(f.back() ^ 1);  // Padding: covered by the checksum too.
  ExpectRefused(f, "checksum does not match");
}

TEST(IndexCodecTest, WrongMagicVersionsAndByteOrderAreNamed) {
  std::string f = Sample();
  EXPECT_NE(OpenBoth(f, kOtherKind).message().find("other index: not a file of this kind"),
            std::string::npos);
  f[0] = 'X';
  ExpectRefused(f, "magic");
  f = Sample();
  Set(f, 8, kIndexCodecVersion + 1);
  ExpectRefused(f, "codec version 2, this build reads 1");
  f = Sample();
  Set(f, 12, uint32_t{6});
  ExpectRefused(f, "format version 6, this build reads 7");
  f = Sample();
  Set(f, 16, uint32_t{0x04030201});
  ExpectRefused(f, "written by a machine of the other byte order");
  f = Sample();
  Set(f, 16, uint32_t{0});
  ExpectRefused(f, "no byte-order mark");
  f = Sample();
  Set(f, 24, Get<uint64_t>(f, 24) + 8);
  ExpectRefused(f, "the header says");
}

TEST(IndexCodecTest, SectionTablesPointingElsewhereAreRefused) {
  const std::string good = Sample();
  const auto forged = [&good](size_t at, auto v) {
    std::string f = good;
    Set(f, at, v);
    Reseal(f);
    return f;
  };
  ExpectRefused(forged(LengthAt(2), Get<uint64_t>(good, LengthAt(2)) + 8), "lies outside");
  ExpectRefused(forged(OffsetAt(2), good.size() + 64), "leaves a gap after section TEXT");
  ExpectRefused(forged(OffsetAt(1), Get<uint64_t>(good, OffsetAt(1)) - 8),
                "section TEXT overlaps section RECS");
  ExpectRefused(forged(OffsetAt(0), IndexLayout::kHeaderBytes), "overlaps the section table");
  ExpectRefused(forged(OffsetAt(1), Get<uint64_t>(good, OffsetAt(1)) + 1), "not 8-byte aligned");
  ExpectRefused(forged(OffsetAt(1), Get<uint64_t>(good, OffsetAt(1)) + 8), "leaves a gap");
  ExpectRefused(forged(LengthAt(2), Get<uint64_t>(good, LengthAt(2)) - 8), "the sections end at");
  std::string twice = good;
  Set(twice, TagAt(1), kRecs);
  Reseal(twice);
  ExpectRefused(twice, "section RECS appears twice");
  ExpectRefused(forged(FlagsAt(0), uint32_t{2}), "section RECS has unknown flags");
}

TEST(IndexCodecTest, UnknownSectionsAreRefusedOnlyIfRequired) {
  IndexEncoder e(kKind);
  e.Add(kText, "known");
  e.Add(IndexTag("NEW1"), "optional", /*required=*/false);
  const std::string optional = e.Finish();
  EXPECT_OK(OpenBoth(optional));
  std::string required = optional;
  Set(required, FlagsAt(1), IndexLayout::kRequired);
  Reseal(required);
  ExpectRefused(required, "section NEW1 is required but unknown to this build");
  std::string unprintable = required;
  Set(unprintable, TagAt(1), uint32_t{0xbeef});
  Reseal(unprintable);
  ExpectRefused(unprintable, "section 0x0000beef is required");
}

// The stream writer makes the very bytes the encoder does, with sections larger than its
// buffers; the stream reader reads them back, and a file of either through the other.
TEST(IndexStreamTest, WriterAndReaderAgreeWithTheEncoder) {
  const std::string big = testutil::RandomBytes(3 << 20 | 5, 7);
  std::vector<Rec> many(100000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = {i, uint32_t(i * 3), uint32_t(i * 7)};
  IndexEncoder e(kKind);
  e.AddArray(kRecs, std::span<const Rec>(many));
  e.Add(kText, big);
  e.Add(kMisc, "");
  const std::string encoded = e.Finish();

  TempDir dir;
  UniqueFd out(::open((dir / "f").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600));
  IndexFileWriter w(out.get(), kKind,
                    {{kRecs, many.size() * sizeof(Rec)}, {kText, big.size()}, {kMisc, 0}});
  for (const Rec& r : many) w.PutRecord(kRecs, r);
  w.Put(kText, std::string_view(big).substr(0, 10));
  w.Put(kText, std::string_view(big).substr(10));
  ASSERT_OK(w.Finish());
  EXPECT_TRUE(testutil::ReadFile(dir / "f") == encoded) << "the same bytes";

  auto r = IndexFileReader::Open(out.get(), kKind);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<Rec> back;
  ASSERT_OK(r->ReadArray(kRecs, &back));
  EXPECT_TRUE(back == many);
  std::string text(big.size(), '\0');
  ASSERT_OK(r->Read(kText, {text.data(), 3}));
  ASSERT_OK(r->Read(kText, {text.data() + 3, text.size() - 3}));
  EXPECT_TRUE(text == big);
  EXPECT_EQ(r->Count(kMisc, 1).value(), 0u);
  EXPECT_OK(r->Finish());
}

TEST(IndexStreamTest, ReadsStayInTheirSectionAndInOrder) {
  TempDir dir;
  testutil::WriteFile(dir / "f", Sample());
  UniqueFd fd(::open((dir / "f").c_str(), O_RDONLY));
  auto r = IndexFileReader::Open(fd.get(), kKind);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Count(kText, 4).status().code(), ErrorCode::kBackupDamaged) << "10 bytes";
  EXPECT_EQ(r->Length(IndexTag("NONE")).status().code(), ErrorCode::kBackupDamaged);
  char buf[16];
  const Status past = r->Read(kText, {buf, 11});
  EXPECT_EQ(past.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(past.message().find("11 bytes wanted at 0, 10 left"), std::string::npos);
  ASSERT_OK(r->Read(kText, {buf, 10}));  // RECS is skipped, and hashed on the way.
  EXPECT_EQ(r->Read(kRecs, {buf, 1}).code(), ErrorCode::kInternal) << "a section before";
  EXPECT_OK(r->Finish());

  std::string damaged = Sample();
  damaged[Get<uint64_t>(damaged, OffsetAt(2))] ^= 1;  // In MISC, never read.
  testutil::WriteFile(dir / "f", damaged);
  UniqueFd fd2(::open((dir / "f").c_str(), O_RDONLY));
  auto r2 = IndexFileReader::Open(fd2.get(), kKind);
  ASSERT_TRUE(r2.ok());
  ASSERT_OK(r2->Read(kText, {buf, 10}));
  EXPECT_EQ(r2->Finish().code(), ErrorCode::kBackupDamaged);
}

TEST(IndexStreamTest, TheWriterHoldsSectionsToTheirDeclaredLengths) {
  TempDir dir;
  const auto status = [&dir](auto&& write) {
    UniqueFd fd(::open((dir / "f").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600));
    IndexFileWriter w(fd.get(), kKind, {{kRecs, 16}, {kText, 3}});
    write(w);
    return w.Finish().code();
  };
  EXPECT_EQ(status([](IndexFileWriter& w) {
              w.PutRecord(kRecs, kRecords[0]);
              w.Put(kText, "abc");
            }),
            ErrorCode::kOk);
  EXPECT_EQ(status([](IndexFileWriter& w) { w.Put(kText, "abc"); }), ErrorCode::kInternal);
  EXPECT_EQ(status([](IndexFileWriter& w) {
              w.PutRecord(kRecs, kRecords[0]);
              w.Put(kText, "abcd");
            }),
            ErrorCode::kInternal);
  EXPECT_EQ(status([](IndexFileWriter& w) {
              w.PutRecord(kRecs, kRecords[0]);
              w.Put(kText, "ab");
            }),
            ErrorCode::kInternal);
  EXPECT_EQ(status([](IndexFileWriter& w) {
              w.PutRecord(kRecs, kRecords[0]);
              w.Put(kText, "abc");
              w.Put(kRecs, "x");
            }),
            ErrorCode::kInternal);
  UniqueFd read_only(::open((dir / "f").c_str(), O_RDONLY));
  IndexFileWriter w(read_only.get(), kKind, {{kText, 3}});
  w.Put(kText, "abc");
  EXPECT_EQ(w.Finish().code(), ErrorCode::kIOError);
}

}  // namespace
}  // namespace stitchfs::engine
