#include "engine/format/manifest_writer.h"

#include <gtest/gtest.h>

#include "engine/format/manifest_reader.h"

namespace stitchfs::engine {
namespace {

ManifestHeader Header() {
  ManifestHeader h;
  h.timestamp = "2026-10-01 12:00:00";
  h.uuid = "11111111-2222-4333-8444-555555555555";
  h.deduplicate_files = true;
  return h;
}

TEST(ManifestWriterTest, WritesClickHouseG2ExactlyForTheFormatExample) {
  ManifestHeader h = Header();
  h.uuid = "U";
  h.base_backup = "Disk('backups', 'base')";
  h.base_backup_uuid = "B";
  FileEntry a;
  a.name = "log/data.bin";
  a.size = 17;
  a.checksum = Hasher::Of(ChecksumAlgorithm::kClickHouse, "Some textAppended");
  a.base_size = 9;
  a.base_checksum = Hasher::Of(ChecksumAlgorithm::kClickHouse, "Some text");
  FileEntry e;
  e.name = "log/empty.bin";
  FileEntry list[] = {a, e};
  std::string xml;
  ASSERT_TRUE(RenderManifest(h, list, &xml).ok());
  EXPECT_EQ(xml,
            "<config><version>1</version><deduplicate_files>1</deduplicate_files><timestamp>"
            "2026-10-01 12:00:00</timestamp><uuid>U</uuid><base_backup>Disk(&apos;backups&apos;, "
            "&apos;base&apos;)</base_backup><base_backup_uuid>B</base_backup_uuid><contents><file>"
            "<name>log/data.bin</name><size>17</size><checksum>5a1f10f638dc7a226231f3fd927d1726"
            "</checksum><use_base>true</use_base><base_size>9</base_size><base_checksum>"
            "28b5529750ac210952ffd366774363ed</base_checksum></file><file><name>log/empty.bin"
            "</name><size>0</size></file></contents></config>");
}

TEST(ManifestWriterTest, HostileNamesRoundTrip) {
  const std::string names[] = {"a&b",          "<x>",       "q\"uo'te", "tab\there", "new\nline",
                               "ünï€ode/日本", "%2F%2E%2E", "]]>",      "a b/c d"};
  std::vector<FileEntry> entries;
  for (const auto& n : names) {
    FileEntry e;
    e.name = n;
    e.size = n.size();
    e.checksum = Hasher::Of(ChecksumAlgorithm::kXxh3, n);
    entries.push_back(e);
  }
  ManifestHeader h = Header();
  h.algorithm = ChecksumAlgorithm::kXxh3;
  h.backup_id = "id with <&>";
  std::string xml;
  ASSERT_TRUE(RenderManifest(h, entries, &xml).ok());
  auto m = ParseManifest(xml, "rt");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ((*m)->num_entries(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ((*m)->entry(i).name, entries[i].name);
    EXPECT_EQ((*m)->entry(i).checksum, entries[i].checksum);
  }
  EXPECT_EQ((*m)->header().backup_id, "id with <&>");
  EXPECT_EQ((*m)->header().algorithm, ChecksumAlgorithm::kXxh3);
}

TEST(ManifestWriterTest, RefusesWhatXmlCannotCarry) {
  const std::string bad[] = {std::string("nul\0x", 5),
                             "cr\rx",
                             "bell\x07",
                             "\xff\xfe",
                             "\xc3",
                             "\xed\xa0\x80" /* surrogate */,
                             "\xef\xbf\xbf" /* U+FFFF */,
                             "\xc0\xaf" /* overlong */};
  for (const auto& n : bad) {
    FileEntry e;
    e.name = n;
    std::string xml;
    Status s = RenderManifest(Header(), std::span<const FileEntry>(&e, 1), &xml);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.ToString();
  }
  FileEntry e;
  e.name = "../x";
  std::string xml;
  EXPECT_EQ(RenderManifest(Header(), std::span<const FileEntry>(&e, 1), &xml).code(),
            ErrorCode::kInsecurePath);
}

}  // namespace
}  // namespace stitchfs::engine

namespace stitchfs::engine {
namespace {

TEST(ManifestWriterTest, MissingFilesRoundTripAndAreCounted) {
  const std::vector<MissingFile> missing = {
      {MakePrintable("logs/app.log"), "No such file or directory"},
      {MakePrintable("bad\xff\x01"
                     "name\n"),
       "it is now a FIFO"}};
  EXPECT_EQ(missing[1].name, "bad\\xff\\x01name\\n");
  std::string xml;
  ASSERT_TRUE(RenderManifest(Header(), {}, &xml, {}, missing).ok());
  EXPECT_NE(xml.find("<stitchfs_incomplete>2</stitchfs_incomplete><contents>"), std::string::npos);
  auto m = ParseManifest(xml, "inc");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->header().incomplete, 2u);
  EXPECT_EQ((*m)->missing(), missing);
  // A count that disagrees with the list is damage.
  std::string lying = xml;
  lying.replace(lying.find("incomplete>2<"), 13, "incomplete>3<");
  EXPECT_EQ(ParseManifest(lying, "inc").status().code(), ErrorCode::kBackupDamaged);
  // A complete backup says nothing of it.
  xml.clear();
  ASSERT_TRUE(RenderManifest(Header(), {}, &xml).ok());
  EXPECT_EQ(xml.find("stitchfs_incomplete"), std::string::npos);
}

}  // namespace
}  // namespace stitchfs::engine
