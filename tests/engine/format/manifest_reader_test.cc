#include "engine/format/manifest_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "engine/format/data_file_name.h"

namespace stitchfs::engine {
namespace {

constexpr const char* kHead =
    "<config><version>1</version><deduplicate_files>1</deduplicate_files>"
    "<timestamp>2026-10-01 12:00:00</timestamp><uuid>11111111-2222-4333-8444-555555555555</uuid>";

std::string Doc(const std::string& files, const std::string& extra_header = "") {
  return std::string(kHead) + extra_header + "<contents>" + files + "</contents></config>";
}

Status ParseError(const std::string& xml) {
  auto m = ParseManifest(xml, "/b/x");
  return m.ok() ? Status::OK() : m.status();
}

TEST(ManifestReaderTest, CompactG2WithEveryEntryKind) {
  const std::string xml =
      Doc("<file><name>log/data.bin</name><size>17</size><checksum>5a1f10f638dc7a226231f3fd927d1726"
          "</checksum><use_base>true</use_base><base_size>9</base_size><base_checksum>"
          "28b5529750ac210952ffd366774363ed</base_checksum></file>"
          "<file><name>log/empty.bin</name><size>0</size></file>"
          "<file><name>same.bin</name><size>9</size><checksum>28b5529750ac210952ffd366774363ed"
          "</checksum><use_base>true</use_base></file>"
          "<file><name>dup.bin</name><size>17</size><checksum>5a1f10f638dc7a226231f3fd927d1726"
          "</checksum><data_file>log/data.bin</data_file></file>",
          "<base_backup>File('base')</"
          "base_backup><base_backup_uuid>aaaaaaaa-2222-4333-8444-555555555555</base_backup_uuid>");
  auto m = ParseManifest(xml, "/b/x");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Manifest& man = **m;
  EXPECT_EQ(man.header().version, 1);
  EXPECT_EQ(man.header().uuid, "11111111-2222-4333-8444-555555555555");
  EXPECT_EQ(man.header().base_backup, "File('base')");
  EXPECT_EQ(man.header().base_backup_uuid, "aaaaaaaa-2222-4333-8444-555555555555");
  EXPECT_EQ(man.header().algorithm, ChecksumAlgorithm::kClickHouse);
  ASSERT_EQ(man.num_entries(), 4u);

  FileEntry a = man.entry(*man.FindByName("log/data.bin"));
  EXPECT_EQ(a.size, 17u);
  EXPECT_EQ(a.base_size, 9u);
  EXPECT_EQ(a.base_checksum.ToHex(), "28b5529750ac210952ffd366774363ed");
  EXPECT_EQ(a.data_file, "log/data.bin");
  EXPECT_EQ(a.stored_size(), 8u);

  FileEntry s = man.entry(*man.FindByName("same.bin"));
  EXPECT_EQ(s.base_size, 9u) << "use_base without base_size means the whole file";
  EXPECT_EQ(s.base_checksum, s.checksum);
  EXPECT_FALSE(s.has_data_file());

  FileEntry e = man.entry(*man.FindByName("log/empty.bin"));
  EXPECT_EQ(e.size, 0u);
  EXPECT_FALSE(e.has_data_file());

  FileEntry d = man.entry(*man.FindByName("dup.bin"));
  EXPECT_EQ(d.data_file, "log/data.bin");
  EXPECT_EQ(man.FindByContent(17, a.checksum), man.FindByName("log/data.bin"))
      << "the first manifest entry of a content key wins";
  EXPECT_FALSE(man.FindByName("nope").has_value());
}

TEST(ManifestReaderTest, PrettyPrintedG1WithoutDedupTagAndWithLegacyTags) {
  const std::string xml =
      "<config>\n\t<version>1</version>\n\t<timestamp>2022-05-01 10:00:00</timestamp>\n"
      "\t<uuid>11111111-2222-4333-8444-555555555555</"
      "uuid>\n\t<contents>\n\t\t<file>\n\t\t\t<name>a.txt</name>\n"
      "\t\t\t<size>9</size>\n\t\t\t<checksum>28b5529750ac210952ffd366774363ed</checksum>\n"
      "\t\t\t<archive_suffix>x</archive_suffix>\n\t\t\t<pos_in_archive>3</pos_in_archive>\n"
      "\t\t</file>\n\t</contents>\n</config>\n";
  auto m = ParseManifest(xml, "g1");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE((*m)->header().deduplicate_files.has_value());
  EXPECT_EQ((*m)->entry(0).name, "a.txt");
}

TEST(ManifestReaderTest, UnknownTagsIgnoredRepeatedLeafKeepsFirstHeaderAfterContentsIgnored) {
  const std::string xml =
      Doc("<file><name>a</name><name>b</name><size>0</size><future><x>1</x></future></file>"
          "<somethingelse/>",
          "<future_header><deep>1</deep></future_header><stitchfs_checksum>xxh3_128</"
          "stitchfs_checksum>");
  auto m = ParseManifest(xml + "", "x");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->entry(0).name, "a");
  EXPECT_EQ((*m)->header().algorithm, ChecksumAlgorithm::kXxh3);
  auto late = ParseManifest(
      std::string(kHead) + "<contents></contents><base_backup>File('z')</base_backup></config>",
      "x");
  ASSERT_TRUE(late.ok());
  EXPECT_EQ((*late)->header().base_backup, "") << "header tags after <contents> are ignored";
}

TEST(ManifestReaderTest, VersionRules) {
  auto v2 = ParseManifest(
      "<config><version>2</version><timestamp>2026-10-01 "
      "12:00:00</timestamp><uuid>11111111-2222-4333-8444-555555555555</uuid>"
      "<contents/></config>",
      "x");
  EXPECT_TRUE(v2.ok());
  for (const char* v : {"3", "0", "99"}) {
    Status s = ParseError(std::string("<config><version>") + v +
                          "</version><timestamp>2026-10-01 "
                          "12:00:00</timestamp><uuid>11111111-2222-4333-8444-555555555555</"
                          "uuid><contents/></config>");
    EXPECT_EQ(s.code(), ErrorCode::kVersionNotSupported) << v;
    EXPECT_NE(s.message().find(std::string("Version ") + v), std::string::npos);
    EXPECT_NE(s.message().find("not supported"), std::string::npos);
    if (std::string(v) == "3") {
      EXPECT_NE(s.message().find("packed"), std::string::npos);
    }
  }
  EXPECT_EQ(ParseError("<config><version> 1</version><timestamp>2026-10-01 "
                       "12:00:00</timestamp><uuid>11111111-2222-4333-8444-555555555555</uuid>"
                       "<contents/></config>")
                .code(),
            ErrorCode::kBackupDamaged);
  EXPECT_EQ(ParseError(Doc("", "<stitchfs_checksum>md5</stitchfs_checksum>")).code(),
            ErrorCode::kVersionNotSupported);
  // <object_key> needs the lightweight snapshot's <original_endpoint>.
  EXPECT_EQ(ParseError(Doc("<file><name>a</name><size>1</size><checksum>"
                           "28b5529750ac210952ffd366774363ed</checksum><object_key>k</object_key>"
                           "</file>"))
                .code(),
            ErrorCode::kBackupDamaged);
}

TEST(ManifestReaderTest, LightweightSnapshotNamesItsObjects) {
  auto m = ParseManifest(
      "<config><version>2</version><timestamp>2026-10-01 12:00:00</timestamp>"
      "<uuid>11111111-2222-4333-8444-555555555555</uuid>"
      "<original_endpoint>https://s3.example.com/</original_endpoint>"
      "<original_namespace>bkt</original_namespace><contents>"
      "<file><name>a</name><size>1</size><object_key>dsk/abc</object_key><checksum>"
      "28b5529750ac210952ffd366774363ed</checksum></file></contents></config>",
      "x");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->header().original_endpoint, "https://s3.example.com/");
  auto ref = ParseObjectDataFileName((*m)->entry(0).data_file);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->bucket_url, "https://s3.example.com/bkt");
  EXPECT_EQ(ref->key, "dsk/abc");
  EXPECT_EQ(ObjectBucketUrl("https://bkt.s3.amazonaws.com", "bkt"), "https://bkt.s3.amazonaws.com");
  // No manifest may name an object itself.
  EXPECT_EQ(ParseError(Doc("<file><name>a</name><size>1</size><checksum>"
                           "28b5529750ac210952ffd366774363ed</checksum><data_file>.stitchfs/"
                           "object/6162/k</data_file></file>"))
                .code(),
            ErrorCode::kInsecurePath);
  // Each object's data file name carries the bucket's URL: a 60 KB endpoint made 16,000 entries
  // of a 2 MB manifest take 2 GB. The endpoint and namespace are bounded.
  const std::string longer(kMaxObjectUrlPart + 1, 'e');
  for (const auto& [tag, endpoint, ns] :
       {std::tuple<std::string, std::string, std::string>{"original_endpoint", longer, "bkt"},
        {"original_namespace", "https://s3.example.com/", longer}}) {
    auto long_part = ParseManifest(
        "<config><version>2</version><timestamp>2026-10-01 12:00:00</timestamp>"
        "<uuid>11111111-2222-4333-8444-555555555555</uuid><original_endpoint>" +
            endpoint + "</original_endpoint><original_namespace>" + ns +
            "</original_namespace><contents/></config>",
        "x");
    ASSERT_FALSE(long_part.ok()) << tag;
    EXPECT_EQ(long_part.status().code(), ErrorCode::kBackupDamaged);
    EXPECT_NE(long_part.status().message().find("<" + tag + "> value"), std::string::npos)
        << long_part.status().ToString();
    EXPECT_NE(long_part.status().message().find("longer than 1024 bytes"), std::string::npos);
  }
}

struct BadCase {
  const char* what;
  std::string xml;
  ErrorCode code;
  const char* message_part;
};

TEST(ManifestReaderTest, EveryDamageIsReportedWithBackupEntryAndPosition) {
  const std::string ck = "<checksum>28b5529750ac210952ffd366774363ed</checksum>";
  const BadCase cases[] = {
      {"no contents", std::string(kHead) + "</config>", ErrorCode::kBackupDamaged, "no <contents>"},
      {"two contents", std::string(kHead) + "<contents/><contents/></config>",
       ErrorCode::kBackupDamaged, "second <contents>"},
      {"no version",
       "<config><timestamp>2026-10-01 "
       "12:00:00</timestamp><uuid>11111111-2222-4333-8444-555555555555</uuid><contents/></config>",
       ErrorCode::kBackupDamaged, "<version>"},
      {"no uuid",
       "<config><version>1</version><timestamp>2026-10-01 12:00:00</timestamp><contents/></config>",
       ErrorCode::kBackupDamaged, "<uuid>"},
      {"malformed xml", Doc("<file><name>a</name><size>1</size>"), ErrorCode::kBackupDamaged,
       "line 1, column"},
      {"not xml", "hello", ErrorCode::kBackupDamaged, "line 1"},
      {"empty document", "", ErrorCode::kBackupDamaged, "line 1"},
      {"no name", Doc("<file><size>0</size></file>"), ErrorCode::kBackupDamaged, "<name>"},
      {"no size", Doc("<file><name>a</name></file>"), ErrorCode::kBackupDamaged, "<size>"},
      {"bad size", Doc("<file><name>a</name><size>1x</size></file>"), ErrorCode::kBackupDamaged,
       "Cannot parse <size> value 1x"},
      {"negative size", Doc("<file><name>a</name><size>-1</size></file>"),
       ErrorCode::kBackupDamaged, "<size>"},
      {"overflowing size", Doc("<file><name>a</name><size>99999999999999999999</size></file>"),
       ErrorCode::kBackupDamaged, "<size>"},
      {"no checksum", Doc("<file><name>a</name><size>3</size></file>"), ErrorCode::kBackupDamaged,
       "<checksum>"},
      {"short checksum", Doc("<file><name>a</name><size>3</size><checksum>abc</checksum></file>"),
       ErrorCode::kBackupDamaged, "Unexpected size of checksum: 3, must be 32"},
      {"bad hex",
       Doc("<file><name>a</name><size>3</size><checksum>zz" + std::string(30, '0') +
           "</checksum></file>"),
       ErrorCode::kBackupDamaged, "<checksum>"},
      {"base_size > size",
       Doc("<file><name>big</name><size>3</size>" + ck + "<base_size>4</base_size><base_checksum>" +
           std::string(32, '1') + "</base_checksum></file>"),
       ErrorCode::kBackupDamaged, "Base size must not be greater than the size of entry \"big\""},
      {"partial base without base_checksum",
       Doc("<file><name>a</name><size>9</size>" + ck + "<base_size>4</base_size></file>"),
       ErrorCode::kBackupDamaged, "<base_checksum>"},
      {"bad bool",
       Doc("<file><name>a</name><size>9</size>" + ck + "<use_base>yes</use_base></file>"),
       ErrorCode::kBackupDamaged, "<use_base>"},
      {"child in leaf", Doc("<file><name>a<b/></name><size>0</size></file>"),
       ErrorCode::kBackupDamaged, "child element <b> inside scalar field <name>"},
      {"doctype", "<!DOCTYPE config [<!ENTITY x \"y\">]>" + Doc(""), ErrorCode::kBackupDamaged,
       "DOCTYPE"},
      {"absolute name", Doc("<file><name>/etc/passwd</name><size>0</size></file>"),
       ErrorCode::kInsecurePath, "absolute"},
      {"escaping name", Doc("<file><name>a/../../x</name><size>0</size></file>"),
       ErrorCode::kInsecurePath, "outside the backup"},
      {"non-normal name", Doc("<file><name>a//b</name><size>0</size></file>"),
       ErrorCode::kInsecurePath, "normalized"},
      {"dot name", Doc("<file><name>.</name><size>0</size></file>"), ErrorCode::kBackupDamaged,
       "empty file name"},
      {"escaping data_file",
       Doc("<file><name>a</name><size>9</size>" + ck +
           "<data_file>../../etc/shadow</data_file></file>"),
       ErrorCode::kInsecurePath, "<data_file>"},
  };
  for (const BadCase& c : cases) {
    Status s = ParseError(c.xml);
    EXPECT_EQ(s.code(), c.code) << c.what << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.message_part), std::string::npos)
        << c.what << ": " << s.ToString();
    EXPECT_NE(s.message().find("Backup /b/x"), std::string::npos) << c.what << ": " << s.ToString();
  }
}

TEST(ManifestReaderTest, ErrorsNameTheEntryAndLine) {
  Status s = ParseError(std::string(kHead) +
                        "<contents>\n<file><name>ok</name><size>0</size></file>\n"
                        "<file><name>bad.bin</name><size>3</size><checksum>12</checksum></file>"
                        "</contents></config>");
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(s.message().find("entry \"bad.bin\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("line 3"), std::string::npos) << s.message();
}

TEST(ManifestReaderTest, HugeLeafIsRefused) {
  Status s =
      ParseError(Doc("<file><name>" + std::string(100000, 'a') + "</name><size>0</size></file>"));
  EXPECT_EQ(s.code(), ErrorCode::kBackupDamaged);
}

TEST(ManifestReaderTest, EscapedTextIsDecoded) {
  auto m = ParseManifest(
      Doc("<file><name>a&amp;b&lt;c&gt;&quot;&apos;</name><size>0</size></file>"), "x");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->entry(0).name, "a&b<c>\"'");
}

}  // namespace
}  // namespace stitchfs::engine
