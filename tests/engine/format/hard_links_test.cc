// Hard links in a manifest: which entries are names of one file, and manifests that contradict
// themselves.
#include "engine/format/hard_links.h"

#include <gtest/gtest.h>

#include "engine/format/manifest_reader.h"

namespace stitchfs::engine {
namespace {

// A file entry of `size` bytes (checksum from `sum`) with metadata for (dev 1, `ino`) and the
// link count `nlink` (omitted when 0, as older manifests have it).
std::string File(const std::string& name, int size, char sum, int ino, int nlink) {
  std::string meta = "644 0 0 1000 1000 " + std::to_string(ino) + " 1";
  if (nlink) meta += " " + std::to_string(nlink);
  return "<file><name>" + name + "</name><size>" + std::to_string(size) + "</size><checksum>" +
         std::string(32, sum) + "</checksum><stitchfs_meta>" + meta + "</stitchfs_meta></file>";
}

StatusOr<std::unique_ptr<const Manifest>> Parse(const std::string& files) {
  return ParseManifest(
      "<config><version>1</version><timestamp>2026-10-01 12:00:00</timestamp><uuid>"
      "11111111-2222-4333-8444-555555555555</uuid><contents>" +
          files + "</contents></config>",
      "/b/links");
}

TEST(HardLinksTest, NamesOfOneFileShareALeader) {
  auto m = Parse(File("a", 5, 'a', 7, 2) + File("b", 5, 'a', 7, 2) + File("c", 5, 'a', 8, 1));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto leaders = LinkLeaders(**m);
  EXPECT_EQ(leaders[1], 0u);
  EXPECT_EQ(leaders[2], 2u);
}

TEST(HardLinksTest, OneInodeWithTwoContentsIsDamageWhenLinksAreClaimed) {
  auto m = Parse(File("app.log", 21, 'a', 7, 2) + File("app.log.1", 51, 'b', 7, 2));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kBackupDamaged);
  EXPECT_NE(m.status().message().find("\"app.log\" and \"app.log.1\""), std::string::npos)
      << m.status().ToString();
  EXPECT_EQ(m.status().message().find("Backup /b/links: "), 0u) << m.status().ToString();
}

TEST(HardLinksTest, LinkCountOneIsNeverALinkEvenWithOneInode) {
  // A rotation during a backup: the walk saw one inode under two names, one file each time.
  auto m = Parse(File("app.log", 21, 'a', 7, 1) + File("app.log.1", 51, 'b', 7, 1));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto leaders = LinkLeaders(**m);
  EXPECT_EQ(leaders[0], 0u);
  EXPECT_EQ(leaders[1], 1u);
}

TEST(HardLinksTest, OlderManifestsLinkOnlyNamesThatAgree) {
  auto same = Parse(File("x", 5, 'a', 7, 0) + File("y", 5, 'a', 7, 0));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(LinkLeaders(**same)[1], 0u);
  auto differ =
      Parse(File("x", 21, 'a', 7, 0) + File("y", 51, 'b', 7, 0) + File("z", 21, 'a', 7, 0));
  ASSERT_TRUE(differ.ok()) << differ.status().ToString();
  const auto leaders = LinkLeaders(**differ);
  EXPECT_EQ(leaders[0], 0u);
  EXPECT_EQ(leaders[1], 1u);
  EXPECT_EQ(leaders[2], 2u);
}

TEST(HardLinksTest, ManyDisagreeingOlderNamesOfOneInodeAreUnlinkedInOnePass) {
  // A hostile or odd manifest: every entry claims (dev 1, ino 7) without a link count, half of
  // them with other bytes. Each is then its own file; the regrouping is one pass, not a pass over
  // all names per disagreement (quadratic: about a second at this size, minutes at a million).
  std::string files;
  constexpr int kNames = 40000;
  for (int i = 0; i < kNames; ++i) {
    files += File("f" + std::to_string(100000 + i), i % 2 ? 21 : 51, i % 2 ? 'a' : 'b', 7, 0);
  }
  auto m = Parse(files);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto leaders = LinkLeaders(**m);
  ASSERT_EQ(leaders.size(), static_cast<size_t>(kNames));
  for (uint32_t i = 0; i < leaders.size(); ++i) ASSERT_EQ(leaders[i], i);
}

TEST(HardLinksTest, IdentitiesChosenToCollideInAFixedHashStayLinear) {
  // dev * 0x9e3779b97f4a7c15 ^ ino was the same for every entry here: with that hash each insert
  // walked one bucket of all the entries before it. Every identity is distinct: no links.
  std::string files;
  constexpr uint64_t kNames = 40000;
  for (uint64_t i = 1; i <= kNames; ++i) {
    const uint64_t ino = (i * 0x9e3779b97f4a7c15ULL) ^ 0x5555;
    files += "<file><name>f" + std::to_string(100000 + i) + "</name><size>5</size><checksum>" +
             std::string(32, 'a') + "</checksum><stitchfs_meta>644 0 0 1000 1000 " +
             std::to_string(ino) + " " + std::to_string(i) + " 2</stitchfs_meta></file>";
  }
  auto m = Parse(files);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto leaders = LinkLeaders(**m);
  for (uint32_t i = 0; i < leaders.size(); ++i) ASSERT_EQ(leaders[i], i);
}

}  // namespace
}  // namespace stitchfs::engine
