#include "engine/base/checksum.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <random>
#include <string>

namespace stitchfs::engine {
namespace {

std::string Seq(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i % 256);
  return s;
}

std::string ClickHouseHex(std::string_view data) {
  return Hasher::Of(ChecksumAlgorithm::kClickHouse, data).ToHex();
}

TEST(ChecksumTest, ClickHouseGtestVectors) {
  EXPECT_EQ(ClickHouseHex("S"), "c27395c39afb5557bfe47661cc9eb86c");
  EXPECT_EQ(ClickHouseHex("Some tex"), "d00d9be8d87919a165f14edd31088a0e");
  EXPECT_EQ(ClickHouseHex("Some text"), "28b5529750ac210952ffd366774363ed");
  EXPECT_EQ(ClickHouseHex("Some textAppended"), "5a1f10f638dc7a226231f3fd927d1726");
  EXPECT_EQ(ClickHouseHex("CODEC(LZ4)"), "557036eda0fb0a277a7caf9b9c8d4dd6");
  EXPECT_EQ(Hasher::Of(ChecksumAlgorithm::kClickHouse, "").ToHex(), std::string(32, '0'));
}

TEST(ChecksumTest, ClickHouseServerVectors) {
  EXPECT_EQ(ClickHouseHex(std::string(16, '\0')), "b3feb4a78862fe1911bd785d79dbae32");
  EXPECT_EQ(ClickHouseHex("100000"), "bda065868a0070a55df96de196364c06");
  EXPECT_EQ(ClickHouseHex("3"), "db7b13ffcb46ab2bbdf9b8450495b777");
}

TEST(ChecksumTest, BlockBoundaryVectors) {
  const std::pair<size_t, const char*> vectors[] = {
      {1, "62ae5d20d4e5cb6fe3af0e61fced7ab2"},      {127, "97d51981b9694127b948bb9779ba5159"},
      {128, "4b7bbfa6c358bbd931b27f5fed7921ba"},    {2047, "c3af4090ca369a722f213bbde337e69b"},
      {2048, "ad1f4d9d00c39701daf55417c6ff86f2"},   {2049, "52914b2c8ffdd66e200b2392787cd7f7"},
      {4096, "0d122a5d8bd18a4fab454a9b8020d07e"},   {5000, "b56a87a0130902bc734b826082734b52"},
      {100000, "688ac5916424f3205a3113ef16df1199"},
  };
  for (const auto& [n, hex] : vectors) EXPECT_EQ(ClickHouseHex(Seq(n)), hex) << "seq(" << n << ")";
  EXPECT_EQ(ClickHouseHex(std::string(2048, 'a')), "f410f7013cb9b56590728a161a824610");
  EXPECT_EQ(ClickHouseHex(std::string(3000, 'a')), "0afe7d25db5f2c38458fd3e208be5a81");
}

TEST(ChecksumTest, PlainCityHash128IsNotTheBackupChecksum) {
  City128 h = CityHash128V102("Some text", 9);
  EXPECT_EQ((Checksum{h.low, h.high}.ToHex()), "5a352d29db3b43b10863640b8dc85e47");
  EXPECT_NE(ClickHouseHex("Some text"), "5a352d29db3b43b10863640b8dc85e47");
}

TEST(ChecksumTest, PrefixDigestMidStreamEqualsHashOfPrefix) {
  for (auto alg : {ChecksumAlgorithm::kClickHouse, ChecksumAlgorithm::kXxh3}) {
    const std::string data = Seq(10000);
    for (size_t cut : {0, 1, 9, 2047, 2048, 2049, 4096, 5001, 9999}) {
      Hasher h(alg);
      h.Update(std::string_view(data).substr(0, cut));
      Checksum prefix = h.Digest();
      h.Update(std::string_view(data).substr(cut));
      EXPECT_EQ(prefix, Hasher::Of(alg, std::string_view(data).substr(0, cut))) << cut;
      EXPECT_EQ(h.Digest(), Hasher::Of(alg, data)) << cut;
    }
  }
  Hasher h(ChecksumAlgorithm::kClickHouse);
  h.Update("Some text");
  EXPECT_EQ(h.Digest().ToHex(), "28b5529750ac210952ffd366774363ed");
  h.Update("Appended");
  EXPECT_EQ(h.Digest().ToHex(), "5a1f10f638dc7a226231f3fd927d1726");
}

TEST(ChecksumTest, ChunkingDoesNotMatter) {
  std::mt19937 rng(7);
  std::string data(50000, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  for (auto alg : {ChecksumAlgorithm::kClickHouse, ChecksumAlgorithm::kXxh3}) {
    Hasher h(alg);
    for (size_t pos = 0; pos < data.size();) {
      size_t n = std::min<size_t>(rng() % 5000, data.size() - pos);
      h.Update(std::string_view(data).substr(pos, n));
      pos += n;
    }
    EXPECT_EQ(h.Digest(), Hasher::Of(alg, data));
  }
}

TEST(ChecksumTest, Xxh3MatchesLibraryAndCanonicalOrder) {
  const std::string data = Seq(3333);
  XXH128_hash_t ref = XXH3_128bits(data.data(), data.size());
  XXH128_canonical_t canon;
  XXH128_canonicalFromHash(&canon, ref);
  std::string hex;
  for (unsigned char b : canon.digest) {
    char buf[3];
    std::snprintf(buf, sizeof(buf), "%02x", b);
    hex += buf;
  }
  EXPECT_EQ(Hasher::Of(ChecksumAlgorithm::kXxh3, data).ToHex(), hex);
}

TEST(ChecksumTest, HexRoundTripAndStrictParse) {
  auto c = Checksum::FromHex("28b5529750ac210952ffd366774363ed");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->high, 0x28b5529750ac2109ULL);
  EXPECT_EQ(c->low, 0x52ffd366774363edULL);
  EXPECT_EQ(c->ToHex(), "28b5529750ac210952ffd366774363ed");
  EXPECT_TRUE(Checksum::FromHex("28B5529750AC210952FFD366774363ED").has_value());
  EXPECT_FALSE(Checksum::FromHex("28b5529750ac210952ffd366774363e").has_value());
  EXPECT_FALSE(Checksum::FromHex("28b5529750ac210952ffd366774363edd").has_value());
  EXPECT_FALSE(Checksum::FromHex("28b5529750ac210952ffd366774363eg").has_value());
  EXPECT_FALSE(Checksum::FromHex(" 8b5529750ac210952ffd366774363ed").has_value());
}

TEST(ChecksumTest, AlgorithmNames) {
  EXPECT_EQ(ParseChecksumAlgorithm("xxh3_128"), ChecksumAlgorithm::kXxh3);
  EXPECT_EQ(ParseChecksumAlgorithm("cityhash102"), ChecksumAlgorithm::kClickHouse);
  EXPECT_FALSE(ParseChecksumAlgorithm("md5").has_value());
}

}  // namespace
}  // namespace stitchfs::engine
