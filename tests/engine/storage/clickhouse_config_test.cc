#include "engine/storage/clickhouse_config.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::TempDir;
using testutil::WriteFile;

TEST(ClickHouseConfigTest, ReadsTheBackupsRootAndLocalDisks) {
  TempDir d;
  WriteFile(d / "config.xml", R"(<clickhouse>
  <path>/var/lib/ch/</path>
  <storage_configuration><disks>
    <backups><type>local</type><path>/srv/backups/</path></backups>
    <rel><path>disks/rel/</path></rel>
    <s3d><type>s3</type><endpoint>http://x/b/</endpoint></s3d>
  </disks></storage_configuration>
  <backups><allowed_disk>backups</allowed_disk>
    <allowed_path>bk/</allowed_path><allowed_path>/other/</allowed_path></backups>
</clickhouse>)");
  std::vector<std::string> warnings;
  auto c = ReadClickHouseConfig(d / "config.xml", &warnings);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backups_root, "/var/lib/ch/bk") << "the first, under the server's path";
  EXPECT_EQ(c->disks.at("backups"), "/srv/backups");
  EXPECT_EQ(c->disks.at("rel"), "/var/lib/ch/disks/rel");
  EXPECT_EQ(c->disks.at("default"), "/var/lib/ch");
  EXPECT_EQ(c->disks.count("s3d"), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("s3d"), std::string::npos);
  EXPECT_NE(c->origin.find(d / "config.xml"), std::string::npos);
}

TEST(ClickHouseConfigTest, MergesConfigDAsTheServerDoes) {
  TempDir d;
  WriteFile(d / "config.xml", R"(<clickhouse>
  <backups><allowed_path>/first/</allowed_path></backups>
  <storage_configuration><disks>
    <a><path>/a/</path></a><b><path>/b/</path></b>
  </disks></storage_configuration>
</clickhouse>)");
  // Merged in path order: 10 replaces the root's text, 20 removes b and replaces a whole.
  WriteFile(d / "config.d/10-root.xml",
            "<clickhouse><backups><allowed_path>/second/</allowed_path></backups></clickhouse>");
  WriteFile(d / "config.d/20-disks.xml", R"(<yandex><storage_configuration><disks>
    <b remove="1"/><a replace="replace"><path>/a2/</path></a><c><path>/c/</path></c>
  </disks></storage_configuration></yandex>)");
  WriteFile(d / "conf.d/30.conf",
            "<clickhouse><path from_env=\"STITCH_TEST_CH_PATH\"/></clickhouse>");
  WriteFile(d / "config.d/40.yaml", "backups:\n  allowed_path: /yaml/\n");
  WriteFile(d / "config.d/.hidden.xml", "not xml at all");
  ::setenv("STITCH_TEST_CH_PATH", "/env/path/", 1);
  std::vector<std::string> warnings;
  auto c = ReadClickHouseConfig(d / "config.xml", &warnings);
  ::unsetenv("STITCH_TEST_CH_PATH");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backups_root, "/second");
  EXPECT_EQ(c->disks.at("a"), "/a2");
  EXPECT_EQ(c->disks.count("b"), 0u);
  EXPECT_EQ(c->disks.at("c"), "/c");
  EXPECT_EQ(c->disks.at("default"), "/env/path");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("40.yaml"), std::string::npos);
}

TEST(ClickHouseConfigTest, SameNamedElementsAddedByAMergeStayApart) {
  TempDir d;
  WriteFile(d / "config.xml", "<clickhouse/>");
  // As the official image's docker_related_config.xml: two listen_host, new to config.xml.
  WriteFile(d / "config.d/a.xml",
            "<clickhouse><listen_host>::</listen_host><listen_host>0.0.0.0</listen_host>"
            "<backups><allowed_path>/a/</allowed_path><allowed_path>/b/</allowed_path></backups>"
            "</clickhouse>");
  WriteFile(d / "config.d/b.xml",
            "<clickhouse><backups><allowed_path>/c/</allowed_path></backups></clickhouse>");
  std::vector<std::string> warnings;
  auto c = ReadClickHouseConfig(d / "config.xml", &warnings);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backups_root, "/c") << "b.xml's replaces the first of a.xml's two";
}

TEST(ClickHouseConfigTest, RefusesWhatItCannotRead) {
  TempDir d;
  std::vector<std::string> warnings;
  EXPECT_EQ(ReadClickHouseConfig(d / "none.xml", &warnings).status().code(),
            ErrorCode::kInvalidArgument);
  WriteFile(d / "bad.xml", "<clickhouse><path>/x</clickhouse>");
  auto bad = ReadClickHouseConfig(d / "bad.xml", &warnings);
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("line 1"), std::string::npos) << bad.status().ToString();
  WriteFile(d / "both.xml", "<clickhouse/>");
  WriteFile(d / "both.d/x.xml", "<clickhouse><path replace='1' remove='1'/></clickhouse>");
  EXPECT_EQ(ReadClickHouseConfig(d / "both.xml", &warnings).status().code(),
            ErrorCode::kInvalidArgument);
  std::string deep = "<a>";
  for (int i = 0; i < 100; ++i) deep += "<a>";
  WriteFile(d / "deep.xml", deep);
  EXPECT_EQ(ReadClickHouseConfig(d / "deep.xml", &warnings).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(ClickHouseConfigTest, OptionsOverTheConfig) {
  TempDir d;
  WriteFile(d / "config.xml",
            "<clickhouse><backups><allowed_path>/cfg/</allowed_path></backups></clickhouse>");
  std::vector<std::string> warnings;
  auto c = MakeLocatorContext(d / "config.xml", "/root/./x/", {{"d", "/disk/"}}, &warnings);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->backups_root, "/root/x");
  EXPECT_EQ(c->origin, "--backups-root");
  EXPECT_EQ(c->disks.at("d"), "/disk");
  EXPECT_EQ(c->disks.at("default"), "/var/lib/clickhouse");
  auto none = MakeLocatorContext("", "", {}, &warnings);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->backups_root.empty() && none->disks.empty());
}

}  // namespace
}  // namespace stitchfs::engine
