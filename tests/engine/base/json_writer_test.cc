#include "engine/base/json_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/testutil/json.h"

namespace stitchfs::engine {
namespace {

std::string Quoted(std::string_view v) { return JsonWriter().String(v).Take(); }

// `v` as a JSON string read back by the strict test reader (a failure of the test if the
// writer's output is not JSON).
std::string RoundTrip(std::string_view v) {
  const std::string out = Quoted(v);
  std::string error;
  auto json = testutil::ParseJson(out, &error);
  EXPECT_TRUE(json.has_value()) << error << ": " << out;
  return json ? json->text : std::string();
}

// A second, independent reading of RFC 3629 for the checks below: decodes the code point and
// refuses overlong forms, surrogates and values past U+10FFFF by value. Returns the length of
// the well-formed sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  const size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (n == 0 || c >= 0xf8 || s.size() - i < n) return 0;
  uint32_t cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (b(k) & 0x3f);
  }
  const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return n;
}

// What a reader of the writer's output gets for `v`: every byte outside a well-formed
// sequence replaced by U+FFFD.
std::string Sanitized(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    const size_t n = Utf8Length(v, i);
    out += n ? v.substr(i, n) : "\xef\xbf\xbd";
    i += n ? n : 1;
  }
  return out;
}

TEST(JsonWriterTest, DocumentsAndCommas) {
  JsonWriter j;
  j.BeginObject().Key("a").Number(1).Key("b").BeginArray().Bool(true).Bool(false).Null();
  j.String("x").BeginObject().EndObject().BeginArray().EndArray().EndArray();
  j.Key("c").BeginObject().Key("d").String("").EndObject().Key("e").BeginArray().EndArray();
  j.EndObject();
  EXPECT_EQ(j.str(), R"({"a":1,"b":[true,false,null,"x",{},[]],"c":{"d":""},"e":[]})");
  EXPECT_EQ(JsonWriter().BeginArray().EndArray().str(), "[]");
}

TEST(JsonWriterTest, Integers) {
  JsonWriter j;
  j.BeginArray().Number(0).Number(7).Number(std::numeric_limits<uint64_t>::max()).EndArray();
  EXPECT_EQ(j.str(), "[0,7,18446744073709551615]");
}

TEST(JsonWriterTest, TakeLeavesAnEmptyWriter) {
  JsonWriter j;
  EXPECT_EQ(j.BeginArray().Number(1).EndArray().Take(), "[1]");
  EXPECT_EQ(j.str(), "");
  EXPECT_EQ(j.BeginArray().EndArray().Take(), "[]") << "no comma left over";
}

TEST(JsonWriterTest, OrdinaryStringsAreCopied) {
  for (const char* s : {"", "plain/path.bin", "2026-10-01 12:00:00", "d\xc3\xa9j\xc3\xa0 vu",
                        "\xe4\xb8\xad", "\xf0\x9f\x92\xbe disk", "'single' <xml> & / ~"}) {
    EXPECT_EQ(Quoted(s), "\"" + std::string(s) + "\"");
    EXPECT_EQ(RoundTrip(s), s);
  }
}

TEST(JsonWriterTest, QuotesAndBackslashes) {
  EXPECT_EQ(Quoted("we\"ird \\ dir"), R"("we\"ird \\ dir")");
  EXPECT_EQ(Quoted("\\\""), R"("\\\"")");
  EXPECT_EQ(RoundTrip("a\"b\\c"), "a\"b\\c");
}

TEST(JsonWriterTest, EveryControlCharacterIsEscaped) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::vector<uint32_t> controls;
  for (uint32_t c = 0; c < 0x20; ++c) controls.push_back(c);
  controls.push_back(0x7f);
  for (uint32_t c = 0x80; c < 0xa0; ++c) controls.push_back(c);  // C1, as UTF-8 C2 xx.
  for (uint32_t c : controls) {
    std::string raw =
        c < 0x80 ? std::string(1, static_cast<char>(c)) : std::string{'\xc2', static_cast<char>(c)};
    const std::string escaped = std::string("\\u00") + kHex[c >> 4] + kHex[c & 15];
    EXPECT_EQ(Quoted("a" + raw + "b"), "\"a" + escaped + "b\"") << c;
    EXPECT_EQ(RoundTrip(raw), raw) << c;
  }
  EXPECT_EQ(Quoted(std::string_view("\0", 1)), R"("\u0000")") << "NUL is not the end";
  EXPECT_EQ(Quoted("\t\n\r\x1b[31m"), R"("\u0009\u000a\u000d\u001b[31m")");
  EXPECT_EQ(Quoted("\xc2\xa0"), "\"\xc2\xa0\"") << "U+00A0 is not a control character";
}

TEST(JsonWriterTest, ControlCharactersInKeysAndNames) {
  JsonWriter j;
  j.BeginObject().Key("na\tme\n").String("log/\x01\x7f.bin").EndObject();
  EXPECT_EQ(j.str(), R"({"na\u0009me\u000a":"log/\u0001\u007f.bin"})");
  auto json = testutil::ParseJson(j.str());
  ASSERT_TRUE(json.has_value());
  ASSERT_EQ(json->keys.size(), 1u);
  EXPECT_EQ(json->keys[0], "na\tme\n");
  EXPECT_EQ(json->values[0].text, "log/\x01\x7f.bin");
}

TEST(JsonWriterTest, InvalidUtf8BecomesOneReplacementPerByte) {
  const std::pair<std::string, std::string> cases[] = {
      {"\x80", R"("\ufffd")"},  // Lone continuation byte.
      {"a\xff"
       "b",
       R"("a\ufffdb")"},                                      // Never in UTF-8.
      {"\xc0\xaf", R"("\ufffd\ufffd")"},                      // Overlong '/'.
      {"\xc1\xbf", R"("\ufffd\ufffd")"},                      // Overlong.
      {"\xe0\x80\xaf", R"("\ufffd\ufffd\ufffd")"},            // Overlong '/'.
      {"\xf0\x8f\xbf\xbf", R"("\ufffd\ufffd\ufffd\ufffd")"},  // Overlong U+FFFF.
      {"\xed\xa0\x80", R"("\ufffd\ufffd\ufffd")"},            // Surrogate U+D800.
      {"\xf4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},  // U+110000.
      {"\xf5\x80\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},
      {"x\xe2\x82", R"("x\ufffd\ufffd")"},  // Truncated at the end.
      {"\xe2\x82"
       "A",
       R"("\ufffd\ufffdA")"},                                      // Truncated before ASCII.
      {"\xe2\x82\xe2\x82\xac", "\"\\ufffd\\ufffd\xe2\x82\xac\""},  // Then a whole euro sign.
      {"\xc2\"", R"("\ufffd\"")"},                                 // A quote is never swallowed.
  };
  for (const auto& [in, out] : cases) {
    EXPECT_EQ(Quoted(in), out) << testing::PrintToString(in);
    EXPECT_EQ(RoundTrip(in), Sanitized(in));
  }
}

TEST(JsonWriterTest, BoundariesOfWellFormedUtf8AreCopied) {
  for (const char* s : {"\xc2\xa0", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
                        "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_EQ(Quoted(s), "\"" + std::string(s) + "\"") << testing::PrintToString(s);
  }
}

TEST(JsonWriterTest, AnyBytesGiveValidJsonInValidUtf8) {
  std::mt19937 rng(20261001);
  std::vector<std::string> inputs;
  for (int b = 0; b < 256; ++b) inputs.emplace_back(1, static_cast<char>(b));
  for (int n = 0; n < 2000; ++n) {
    std::string s(rng() % 12, '\0');
    // Mostly bytes from 0x80 on, so that sequences of every length are tried.
    for (char& c : s) c = static_cast<char>(rng() % 3 ? 0x80 + rng() % 0x80 : rng() % 0x80);
    inputs.push_back(s);
  }
  for (const std::string& in : inputs) {
    const std::string out = Quoted(in);
    EXPECT_EQ(Sanitized(out), out) << "not UTF-8: " << testing::PrintToString(in);
    for (unsigned char c : out) ASSERT_TRUE(c >= 0x20 && c != 0x7f) << testing::PrintToString(in);
    EXPECT_EQ(RoundTrip(in), Sanitized(in)) << testing::PrintToString(in);
    EXPECT_EQ(Quoted(in), out) << "deterministic";
  }
}

}  // namespace
}  // namespace stitchfs::engine
