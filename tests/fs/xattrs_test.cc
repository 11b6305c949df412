#include "fs/xattrs.h"

#include "engine/format/manifest_writer.h"
#include "engine/read/open_resolved.h"
#include "tests/fs/view_fixture.h"
#include "tests/testutil/context.h"
#include "tests/testutil/json.h"

namespace stitchfs::fs::fstest {
namespace {

using engine::ErrorCode;
using testutil::Json;
constexpr uint64_t kRoot = InodeTable::kRoot;

std::vector<std::string> Prefixed(std::vector<std::string> keys) {
  for (auto& k : keys) k = "user.stitchfs." + k;
  return keys;
}

// The value of `name` of `ino` in `view`, parsed as JSON (a failure of the test if it is not).
Json JsonValue(const BackupView& view, uint64_t ino, const std::string& name) {
  auto v = view.Xattr(ino, name);
  EXPECT_TRUE(v.ok()) << name << ": " << v.status().ToString();
  std::string error;
  auto json = testutil::ParseJson(v.ok() ? *v : "", &error);
  EXPECT_TRUE(json.has_value()) << name << " is not JSON (" << error << "): " << *v;
  return json.value_or(Json{});
}

TEST_F(ViewTest, AttributeNamesOfTheRootFilesAndFolders) {
  EXPECT_EQ(view_->XattrNames(kRoot).value(),
            Prefixed({"uuid", "timestamp", "algorithm", "chain", "stats"}))
      << "incomplete only for an incomplete backup";
  const auto file_keys =
      Prefixed({"source", "checksum", "algorithm", "base_size", "stored_size", "backup"});
  EXPECT_EQ(view_->XattrNames(Ino("log/app.log")).value(), file_keys);
  EXPECT_EQ(view_->XattrNames(Ino("empty.txt")).value(), file_keys);
  EXPECT_TRUE(view_->XattrNames(Ino("log"))->empty());
  EXPECT_EQ(view_->XattrNames(0).status().code(), ErrorCode::kEntryNotFound);
}

TEST_F(ViewTest, FileValues) {
  const uint64_t log = Ino("log/app.log");
  const Json source = JsonValue(*view_, log, "user.stitchfs.source");
  ASSERT_EQ(source.kind, Json::Kind::kArray);
  ASSERT_EQ(source.items.size(), 3u);
  const std::vector<std::pair<double, double>> ranges = {
      {0, a_.size()}, {a_.size(), a_.size() + b_.size()}, {a_.size() + b_.size(), 8100}};
  for (size_t i = 0; i < 3; ++i) {
    const Json& x = source.items[i];
    EXPECT_EQ(x.Get("level")->number, 2.0 - i) << "oldest bytes first";
    EXPECT_EQ(x.Get("backup")->text, backup_->level(2 - i).path()) << "escaped and back";
    EXPECT_EQ(x.Get("from")->number, ranges[i].first);
    EXPECT_EQ(x.Get("to")->number, ranges[i].second);
  }
  EXPECT_NE(backup_->level(0).path().find("we\"ird \\ dir"), std::string::npos);
  const auto value = [&](const std::string& path, const std::string& key) {
    return view_->Xattr(Ino(path), "user.stitchfs." + key).value();
  };
  const std::string all = a_ + b_ + c_;
  EXPECT_EQ(value("log/app.log", "checksum"),
            engine::Hasher::Of(engine::ChecksumAlgorithm::kClickHouse, all).ToHex());
  EXPECT_EQ(value("log/app.log", "algorithm"), "cityhash102");
  EXPECT_EQ(value("log/app.log", "base_size"), std::to_string(a_.size() + b_.size()));
  EXPECT_EQ(value("log/app.log", "stored_size"), std::to_string(c_.size()));
  EXPECT_EQ(value("log/app.log", "backup"), backup_->top().path());
  EXPECT_EQ(value("metadata/db.sql", "base_size"), std::to_string(std::string(kSql).size()));
  EXPECT_EQ(value("metadata/db.sql", "stored_size"), "0");
  EXPECT_EQ(JsonValue(*view_, Ino("metadata/db.sql"), "user.stitchfs.source").items.size(), 1u);
  EXPECT_EQ(value("empty.txt", "checksum"), "");
  EXPECT_TRUE(JsonValue(*view_, Ino("empty.txt"), "user.stitchfs.source").items.empty());
}

TEST_F(ViewTest, RootValues) {
  const auto value = [&](const std::string& key) {
    return view_->Xattr(kRoot, "user.stitchfs." + key).value();
  };
  EXPECT_EQ(value("uuid"), uuids_[0]);
  EXPECT_EQ(value("timestamp"), "2026-10-03 00:00:00");
  EXPECT_EQ(value("algorithm"), "cityhash102");
  const Json chain = JsonValue(*view_, kRoot, "user.stitchfs.chain");
  ASSERT_EQ(chain.items.size(), 3u);
  const char* times[] = {"2026-10-03 00:00:00", "2026-10-02 00:00:00", "2026-10-01 00:00:00"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(chain.items[i].Get("level")->number, static_cast<double>(i));
    EXPECT_EQ(chain.items[i].Get("uuid")->text, uuids_[i]);
    EXPECT_EQ(chain.items[i].Get("timestamp")->text, times[i]);
    EXPECT_EQ(chain.items[i].Get("backup")->text, backup_->level(i).path());
  }
  const Json stats = JsonValue(*view_, kRoot, "user.stitchfs.stats");
  EXPECT_EQ(stats.Get("num_files")->number, 6);
  EXPECT_EQ(stats.Get("total_size")->number, view_->TotalBytes());
  EXPECT_EQ(stats.Get("num_entries")->number, 2) << "app.log's tail and copy/a.bin";
  EXPECT_EQ(stats.Get("size_of_entries")->number, c_.size() + 16);
  EXPECT_GT(stats.Get("uncompressed_size")->number, stats.Get("size_of_entries")->number);
}

TEST_F(ViewTest, AbsentAttributes) {
  const uint64_t file = Ino("log/app.log");
  for (const auto& [ino, name] : std::vector<std::pair<uint64_t, std::string>>{
           {file, "user.stitchfs.nothing"},
           {file, "user.stitchfs.uuid"},  // A root attribute.
           {file, "security.selinux"},
           {file, "user.stitchfs."},
           {kRoot, "user.stitchfs.source"},  // A file attribute.
           {kRoot, "user.stitchfs.incomplete"},
           {Ino("log"), "user.stitchfs.source"},
           {0, "user.stitchfs.uuid"},
       }) {
    EXPECT_EQ(view_->Xattr(ino, name).status().code(), ErrorCode::kEntryNotFound) << name;
  }
  EXPECT_TRUE(IsStitchfsXattr("user.stitchfs.x"));
  EXPECT_FALSE(IsStitchfsXattr("user.stitchfs"));
  EXPECT_FALSE(IsStitchfsXattr("trusted.stitchfs.x"));
}

TEST_F(ViewTest, EveryValueOfEveryInodeIsWhatItsNameSays) {
  for (uint64_t ino = 1; ino <= view_->table().size(); ++ino) {
    const auto names = view_->XattrNames(ino);
    ASSERT_OK(names.status());
    for (const std::string& name : *names) {
      auto v = view_->Xattr(ino, name);
      ASSERT_OK(v.status());
      const std::string key = name.substr(std::string("user.stitchfs.").size());
      if (key == "source" || key == "chain" || key == "stats") {
        std::string error;
        EXPECT_TRUE(testutil::ParseJson(*v, &error)) << name << ": " << error << ": " << *v;
      }
    }
  }
}

// Opens the backup written to `folder`: one file `kept` ("kept") and the `missing` it lacks.
engine::StatusOr<std::shared_ptr<const engine::ResolvedBackup>> OpenIncomplete(
    const std::string& folder, const std::string& kept,
    const std::vector<engine::MissingFile>& missing) {
  engine::ManifestHeader h;
  h.timestamp = "2026-10-01 12:00:00";
  h.uuid = testutil::NewUuid();
  engine::FileEntry e;
  e.name = kept;
  e.size = 4;
  e.checksum = engine::Hasher::Of(h.algorithm, "kept");
  std::string xml;
  RETURN_IF_ERROR(engine::RenderManifest(h, {&e, 1}, &xml, {}, missing));
  testutil::WriteFile(folder + "/" + kept, "kept");
  testutil::WriteFile(folder + "/.backup", xml);
  return engine::OpenResolved(folder, testutil::LocalChain());
}

TEST(IncompleteXattrTest, ListsWhatTheBackupLacks) {
  testutil::TempDir dir;
  const std::vector<engine::MissingFile> missing = {
      {"gone \"quoted\" \\ back\tslash", "vanished\nwhile read"},
      {"d\xc3\xa9j\xc3\xa0/vu", "permission denied"},
  };
  auto backup = OpenIncomplete(dir / "b", "kept.txt", missing);
  ASSERT_OK(backup.status());
  BackupView view(*backup, {});
  const auto names = view.XattrNames(kRoot).value();
  EXPECT_EQ(names.back(), "user.stitchfs.incomplete");
  const Json lacks = JsonValue(view, kRoot, "user.stitchfs.incomplete");
  ASSERT_EQ(lacks.items.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(lacks.items[i].Get("name")->text, missing[i].name);
    EXPECT_EQ(lacks.items[i].Get("reason")->text, missing[i].reason);
  }
}

// A backup in a folder whose name has control characters and a byte that is not UTF-8, lacking
// files whose names have control characters: every JSON value is still strict JSON with no raw
// control byte, and reads back as the names were, the stray byte as U+FFFD.
TEST(IncompleteXattrTest, ControlCharactersInNamesGiveValidJson) {
  testutil::TempDir dir;
  const std::string folder = dir / "ctl\x01\x1b[2J\x7f\xff/b";
  const std::vector<engine::MissingFile> missing = {{"tab\tnew\nline\x7f", "reason \xc2\x9b: C1"}};
  auto backup = OpenIncomplete(folder, "kept\ttab.txt", missing);
  ASSERT_OK(backup.status());
  ASSERT_EQ((*backup)->top().path(), folder);
  BackupView view(*backup, {});
  const std::string as_read = dir / "ctl\x01\x1b[2J\x7f\xef\xbf\xbd/b";
  const std::string as_json = "\"" + dir.path() + R"(/ctl\u0001\u001b[2J\u007f\ufffd/b")";
  EXPECT_EQ(*view.Xattr(kRoot, "user.stitchfs.incomplete"),
            R"([{"name":"tab\u0009new\u000aline\u007f","reason":"reason \u009b: C1"}])");
  const uint64_t file = Walk(view, "kept\ttab.txt").value();
  EXPECT_EQ(*view.Xattr(file, "user.stitchfs.source"),
            R"([{"backup":)" + as_json + R"(,"level":0,"from":0,"to":4}])");
  for (const auto& [ino, name] : std::vector<std::pair<uint64_t, std::string>>{
           {kRoot, "incomplete"}, {kRoot, "chain"}, {kRoot, "stats"}, {file, "source"}}) {
    const std::string value = *view.Xattr(ino, "user.stitchfs." + name);
    for (unsigned char c : value) ASSERT_TRUE(c >= 0x20 && c != 0x7f) << name << ": " << value;
    const Json json = JsonValue(view, ino, "user.stitchfs." + name);
    if (name == "incomplete") {
      ASSERT_EQ(json.items.size(), 1u);
      EXPECT_EQ(json.items[0].Get("name")->text, missing[0].name);
      EXPECT_EQ(json.items[0].Get("reason")->text, missing[0].reason);
    } else if (name != "stats") {
      ASSERT_EQ(json.items.size(), 1u) << name;
      EXPECT_EQ(json.items[0].Get("backup")->text, as_read) << name;
    }
  }
}

TEST(JsonCheckTest, RefusesWhatIsNotJson) {
  for (const char* bad : {"", "[", "[1,]", "{\"a\":1,}", "{a:1}", "\"tab\there\"", "\"\\x\"", "01",
                          "1.", "[1] 2", "'x'", "\"\\ud800\"", "nul"}) {
    EXPECT_FALSE(testutil::ParseJson(bad).has_value()) << bad;
  }
  auto ok = testutil::ParseJson(" {\"a\":[true,false,null,-1.5e3,\"\\u00e9\\n\"]} ");
  ASSERT_TRUE(ok.has_value());
  const Json& a = *ok->Get("a");
  ASSERT_EQ(a.items.size(), 5u);
  EXPECT_TRUE(a.items[0].boolean);
  EXPECT_EQ(a.items[2].kind, Json::Kind::kNull);
  EXPECT_EQ(a.items[3].number, -1500);
  EXPECT_EQ(a.items[4].text, "\xc3\xa9\n");
}

}  // namespace
}  // namespace stitchfs::fs::fstest
