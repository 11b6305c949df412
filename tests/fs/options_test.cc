#include "fs/options.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

namespace stitchfs::fs {
namespace {

using engine::ErrorCode;

engine::StatusOr<Options> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "stitchfs");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return ParseOptions(static_cast<int>(args.size()), argv.data());
}

Options Ok(std::vector<std::string> args) {
  auto o = Parse(args);
  EXPECT_TRUE(o.ok()) << o.status().ToString();
  return o.ok() ? *o : Options{};
}

// An -o list split as libfuse splits it (a backslash takes the next character as it is, a
// comma ends an option), each option unescaped.
std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == '\\' && i + 1 < list.size()) {
      out.back() += list[++i];
    } else if (list[i] == ',') {
      out.emplace_back();
    } else {
      out.back() += list[i];
    }
  }
  return out;
}

// The options of the OPTIONS section of stitchfs(1): "-f", "noxattr", "spin_us=", ...
std::vector<std::string> DocumentedOptions() {
  std::ifstream in(std::string(STITCHFS_SOURCE_DIR) + "/man/stitchfs.1");
  std::stringstream man;
  man << in.rdbuf();
  const std::string text = man.str();
  const size_t from = text.find(".SH OPTIONS"), to = text.find(".SH", from + 1);
  EXPECT_NE(from, std::string::npos);
  std::istringstream section(text.substr(from, to - from));
  std::vector<std::string> out;
  bool item = false;
  for (std::string line; std::getline(section, line); item = line == ".TP") {
    if (!item) continue;
    line = std::regex_replace(line, std::regex(R"(\\-)"), "-");
    line = std::regex_replace(line, std::regex(R"(^\.BI? |\\ | [A-Z:]+ ?)"), " ");
    const std::regex word(R"(-[a-z]\b|[a-z_][a-z0-9_]*=?)");
    for (std::sregex_iterator it(line.begin(), line.end(), word), end; it != end; ++it) {
      if (it->str() != "-o") out.push_back(it->str());
    }
  }
  return out;
}

// A sample value for an option of the manual.
std::string Sample(const std::string& opt) {
  if (opt == "umask=") return "umask=027";
  if (opt == "base=") return "base=/b";
  if (opt == "disk=") return "disk=d:/disks/d";
  if (opt == "backups_root=") return "backups_root=/backups";
  if (opt == "clickhouse_config=") {  // A real file: it is read while the options are parsed.
    static const std::string config = [] {
      const std::string path = ::testing::TempDir() + "/options_test_config.xml";
      std::FILE* f = std::fopen(path.c_str(), "w");
      std::fputs("<clickhouse><backups><allowed_path>/bk/</allowed_path></backups></clickhouse>",
                 f);
      std::fclose(f);
      return path;
    }();
    return "clickhouse_config=" + config;
  }
  if (opt == "fsname=" || opt == "subtype=") return opt + "x";
  return opt.back() == '=' ? opt + "1" : opt;
}

TEST(OptionsTest, LocatorContextAndLocatorsAsBackups) {
  const std::string config = Sample("clickhouse_config=").substr(18);
  const Options o =
      Ok({"-o", "clickhouse_config=" + config + ",disk=d:/dd", "File('daily/b2')", "m"});
  EXPECT_EQ(o.chain.locators.backups_root, "/bk");
  EXPECT_EQ(o.chain.locators.disks.at("d"), "/dd");
  EXPECT_EQ(o.chain.locators.disks.at("default"), "/var/lib/clickhouse");
  EXPECT_EQ(o.backup, "/bk/daily/b2") << "a locator names the backup";
  EXPECT_EQ(Ok({"-o", "backups_root=/other,clickhouse_config=" + config, "b", "m"})
                .chain.locators.backups_root,
            "/other")
      << "backups_root wins over the configuration, in any order";
  EXPECT_EQ(Ok({"-o", "disk=d:/dd", "Disk('d', 'x/b')", "m"}).backup, "/dd/x/b");
  EXPECT_EQ(Parse({"-o", "clickhouse_config=/nonexistent.xml", "b", "m"}).status().code(),
            engine::ErrorCode::kInvalidArgument);
  EXPECT_EQ(Parse({"File('rel')", "m"}).status().code(), engine::ErrorCode::kInvalidArgument)
      << "a relative File() without a backups root";
  EXPECT_FALSE(Ok({"-o", "nomanifest", "b", "m"}).backup_manifest);
  EXPECT_TRUE(Ok({"b", "m"}).backup_manifest);
}

TEST(OptionsTest, Defaults) {
  const Options o = Ok({"b", "m"});
  EXPECT_EQ(o.backup, "b");
  EXPECT_EQ(o.mountpoint, "m");
  EXPECT_FALSE(o.foreground || o.debug || o.single_thread || o.noxattr || o.share_inodes);
  EXPECT_FALSE(o.allow_other || o.default_permissions);
  EXPECT_FALSE(o.uid || o.gid || o.umask);
  EXPECT_EQ(o.spin_us, 200u);
  EXPECT_EQ(o.readahead_kb, 1024u);
  EXPECT_EQ(o.max_backups, 32u);
  EXPECT_EQ(o.cache_mb, 256u);
  EXPECT_EQ(o.manifest_cache_mb, 64u);
  EXPECT_TRUE(o.fuse_mount_options.empty());
  EXPECT_EQ(FuseMountOptions(o), "ro,subtype=stitchfs,fsname=b");
}

TEST(OptionsTest, EveryDocumentedOption) {
  const std::vector<std::string> documented = DocumentedOptions();
  ASSERT_GE(documented.size(), 25u) << "the manual's OPTIONS section was read";
  for (const std::string& opt : documented) {
    std::vector<std::string> args = {"b", "m"};
    if (opt[0] == '-') {
      args.push_back(opt);
    } else {
      args.insert(args.end(), {"-o", Sample(opt)});
    }
    EXPECT_TRUE(Parse(args).ok()) << opt << ": " << Parse(args).status().ToString();
    const std::regex in_usage("(^|[^a-z0-9_])" + opt + "([^a-z0-9_]|$)");
    EXPECT_TRUE(std::regex_search(kUsage, in_usage)) << opt << " is missing from kUsage";
  }
}

TEST(OptionsTest, WhatEachOptionSets) {
  const Options o =
      Ok({"-f", "-s", "-o", "noxattr,spin_us=0,uid=5,gid=6,umask=027", "-oallow_other", "-o",
          "readahead_kb=0,share_inodes,max_backups=3,cache_mb=4", "-o",
          "manifest_cache_mb=5,base=rel/../b1,disk=d1:/x/,disk=d2:y", "B", "M"});
  EXPECT_TRUE(o.foreground && o.single_thread && o.noxattr && o.share_inodes);
  EXPECT_FALSE(o.debug);
  EXPECT_EQ(o.spin_us, 0u);
  EXPECT_EQ(o.uid, 5u);
  EXPECT_EQ(o.gid, 6u);
  EXPECT_EQ(o.umask, 027u);
  EXPECT_TRUE(o.allow_other && o.default_permissions) << "allow_other turns the checks on";
  EXPECT_EQ(o.readahead_kb, 0u);
  EXPECT_EQ(o.max_backups, 3u);
  EXPECT_EQ(o.cache_mb, 4u);
  EXPECT_EQ(o.manifest_cache_mb, 5u);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(o.chain.base_override, std::string(cwd) + "/b1") << "absolute and normal";
  EXPECT_EQ(o.chain.locators.disks.at("d1"), "/x");
  EXPECT_EQ(o.chain.locators.disks.at("d2"), std::string(cwd) + "/y");
  EXPECT_TRUE(Ok({"-d", "b", "m"}).debug && Ok({"--debug", "b", "m"}).foreground);
  EXPECT_TRUE(Ok({"-o", "default_permissions", "b", "m"}).default_permissions);
  EXPECT_FALSE(Ok({"-o", "default_permissions", "b", "m"}).allow_other);
  EXPECT_TRUE(Ok({"-h"}).help && Ok({"--help"}).help);
  EXPECT_TRUE(Ok({"-V"}).version && Ok({"--version"}).version);
}

TEST(OptionsTest, KernelOptionsArePassedOnAndRoIsImplied) {
  const Options o = Ok({"-o", "ro,nodev,nosuid,noexec,noatime,auto_unmount,subtype=x", "b", "m"});
  EXPECT_EQ(o.fuse_mount_options, (std::vector<std::string>{"nodev", "nosuid", "noexec", "noatime",
                                                            "auto_unmount", "subtype=x"}));
  EXPECT_EQ(FuseMountOptions(o),
            "ro,subtype=stitchfs,fsname=b,nodev,nosuid,noexec,noatime,auto_unmount,subtype=x");
  EXPECT_EQ(FuseMountOptions(Ok({"-o", "allow_other", "b", "m"})),
            "ro,subtype=stitchfs,fsname=b,allow_other,default_permissions");
}

TEST(OptionsTest, Errors) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"b"},
           {},
           {"b", "m", "x"},
           {"-x", "b", "m"},
           {"--frobnicate", "b", "m"},
           {"b", "m", "-o"},
           {"-o", "frobnicate", "b", "m"},
           {"-o", "rw", "b", "m"},
           {"-o", "ro,rw", "b", "m"},
           {"-o", "uid", "b", "m"},
           {"-o", "uid=", "b", "m"},
           {"-o", "uid=abc", "b", "m"},
           {"-o", "uid=-1", "b", "m"},
           {"-o", "uid=4294967296", "b", "m"},
           {"-o", "gid=1x", "b", "m"},
           {"-o", "umask=8", "b", "m"},
           {"-o", "spin_us=1.5", "b", "m"},
           {"-o", "max_backups=0", "b", "m"},
           {"-o", "cache_mb=lots", "b", "m"},
           {"-o", "base=", "b", "m"},
           {"-o", "disk=nocolon", "b", "m"},
           {"-o", "disk=:/x", "b", "m"},
           {"-o", "fsname=", "b", "m"},
           {"-o", "noxattr=1", "b", "m"},
       }) {
    auto o = Parse(args);
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    EXPECT_EQ(o.status().code(), ErrorCode::kInvalidArgument) << shown;
  }
  EXPECT_NE(Parse({"-o", "rw", "b", "m"}).status().message().find("read-only"), std::string::npos);
  EXPECT_NE(Parse({"-o", "frob", "b", "m"}).status().message().find("frob"), std::string::npos);
}

TEST(OptionsTest, CommasAndBackslashesInFsnameAreEscaped) {
  const Options o = Ok({"/b/a,b\\c d", "m"});
  const std::string list = FuseMountOptions(o);
  EXPECT_EQ(list, "ro,subtype=stitchfs,fsname=/b/a\\,b\\\\c d");
  EXPECT_EQ(Split(list),
            (std::vector<std::string>{"ro", "subtype=stitchfs", "fsname=/b/a,b\\c d"}));

  const Options named = Ok({"-o", "fsname=x\\y", "/b/a,b", "m"});
  EXPECT_EQ(Split(FuseMountOptions(named)),
            (std::vector<std::string>{"ro", "subtype=stitchfs", "fsname=x\\y"}))
      << "the user's fsname replaces the backup's, escaped too";
}

TEST(OptionsTest, UsageNamesEveryOptionAndTheManual) {
  const std::string usage = kUsage;
  EXPECT_EQ(usage.rfind("usage: stitchfs", 0), 0u);
  EXPECT_NE(usage.find("STORE"), std::string::npos);
  EXPECT_NE(usage.find("stitchfs(1)"), std::string::npos);
}

}  // namespace
}  // namespace stitchfs::fs
