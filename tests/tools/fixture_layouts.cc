// make_fixture layouts and lightweight: backups in the forms current ClickHouse (25-26) writes,
// built from the format rules with ClickHouse checksums (FORMAT.md §0, §2.2, §4.2-4.5, §5.1),
// each with the tree it must show under DIR/expected/NAME.
#include "tests/tools/fixture_layouts.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/base/atomic_file.h"
#include "engine/location/locator.h"
#include "tests/testutil/fixture.h"

namespace fs = std::filesystem;
using stitchfs::testutil::FixtureBackup;

namespace stitchfs::tools {
namespace {

void Expect(const std::string& dir, const std::string& name, const std::string& content) {
  testutil::WriteFile(dir + "/expected/" + name, content);
}

// `name` stored under its checksum (data_file_name_generator 'checksum', prefix length 3).
void AddByChecksum(FixtureBackup& b, const std::string& name, const std::string& content,
                   uint64_t base_size = 0, const std::string& prefix = "") {
  engine::FileEntry e;
  e.name = name;
  e.size = content.size();
  e.checksum = b.Sum(content);
  e.base_size = base_size;
  if (base_size > 0) e.base_checksum = b.Sum(std::string_view(content).substr(0, base_size));
  const std::string hex = e.checksum.ToHex();
  const std::string data_file = hex.substr(0, 3) + "/" + hex.substr(3);
  e.data_file = data_file;
  b.AddRaw(e, prefix.empty() ? std::string_view(content).substr(base_size) : prefix);
}

// A header tag ClickHouse writes and our writer does not, put in after `after`.
void InsertTag(const std::string& dir, const std::string& after, const std::string& xml) {
  const std::string path = dir + "/.backup";
  std::string text = testutil::ReadFile(path);
  const size_t at = text.find(after);
  if (at == std::string::npos) std::abort();
  text.insert(at + after.size(), xml);
  testutil::WriteFile(path, text);
}

}  // namespace

engine::Status Layouts(const std::string& dir) {
  const std::string sql = "CREATE TABLE db.t (x UInt64) ENGINE = MergeTree ORDER BY x;\n";
  const std::string cols = "columns format version: 1\n1 columns:\n`x` UInt64\n";
  const std::string bin = testutil::RandomBytes(90000, 11), log0 = std::string(5000, 'l');
  const std::string log1 = log0 + "appended later\n";
  // Files named by their checksums, a backup_id, a duplicate sharing its data file.
  FixtureBackup sum(dir + "/checksum");
  sum.header.timestamp = "2026-11-01 01:00:00";
  sum.header.backup_id = "nightly-2026-11-01";
  sum.header.data_file_name_generator = "checksum";
  AddByChecksum(sum, "data/db/t/all_1_1_0/x.bin", bin);
  AddByChecksum(sum, "data/db/t/all_1_1_0/columns.txt", cols);
  sum.AddDuplicate("data/db/t/all_2_2_0/columns.txt", cols,
                   sum.Sum(cols).ToHex().substr(0, 3) + "/" + sum.Sum(cols).ToHex().substr(3));
  AddByChecksum(sum, "data/db/log/data.bin", log0);
  AddByChecksum(sum, "metadata/db/t.sql", sql);
  sum.AddEmpty("data/db/t/all_1_1_0/empty.idx");
  RETURN_IF_ERROR(sum.Write());
  for (const auto& [n, c] : {std::pair{"x.bin", bin}, {"columns.txt", cols}}) {
    Expect(dir, std::string("checksum/data/db/t/all_1_1_0/") + n, c);
  }
  Expect(dir, "checksum/data/db/t/all_2_2_0/columns.txt", cols);
  Expect(dir, "checksum/data/db/log/data.bin", log0);
  Expect(dir, "checksum/metadata/db/t.sql", sql);
  Expect(dir, "checksum/data/db/t/all_1_1_0/empty.idx", "");
  // An incremental on it, also checksum-named: the tail of a grown file.
  FixtureBackup inc(dir + "/checksum-inc");
  inc.SetBase(sum);
  inc.header.timestamp = "2026-11-02 01:00:00";
  inc.header.data_file_name_generator = "checksum";
  AddByChecksum(inc, "data/db/log/data.bin", log1, log0.size());
  inc.AddFromBase("data/db/t/all_1_1_0/x.bin", bin);
  RETURN_IF_ERROR(inc.Write());
  Expect(dir, "checksum-inc/data/db/log/data.bin", log1);
  Expect(dir, "checksum-inc/data/db/t/all_1_1_0/x.bin", bin);
  // ON CLUSTER: two shards; shard 2's copy of the same table metadata is deduplicated into
  // shard 1's subtree.
  FixtureBackup cluster(dir + "/cluster");
  cluster.header.timestamp = "2026-11-01 02:00:00";
  const std::string s1 = "shards/1/replicas/1/", s2 = "shards/2/replicas/1/";
  cluster.AddStored(s1 + "metadata/db/t.sql", sql);
  cluster.AddStored(s1 + "data/db/t/all_1_1_0/x.bin", bin);
  cluster.AddDuplicate(s2 + "metadata/db/t.sql", sql, s1 + "metadata/db/t.sql");
  cluster.AddStored(s2 + "data/db/t/all_2_2_0/x.bin", log0);
  RETURN_IF_ERROR(cluster.Write());
  Expect(dir, "cluster/" + s1 + "metadata/db/t.sql", sql);
  Expect(dir, "cluster/" + s1 + "data/db/t/all_1_1_0/x.bin", bin);
  Expect(dir, "cluster/" + s2 + "metadata/db/t.sql", sql);
  Expect(dir, "cluster/" + s2 + "data/db/t/all_2_2_0/x.bin", log0);
  // A plain backup (deduplicate_files 0): every file under its own name, empty ones too.
  FixtureBackup plain(dir + "/plain");
  plain.header.timestamp = "2026-11-01 03:00:00";
  plain.header.deduplicate_files = false;
  plain.AddStored("data/db/t/all_1_1_0/columns.txt", cols);
  plain.AddStored("data/db/t/all_2_2_0/columns.txt", cols);
  plain.AddEmpty("data/db/t/all_1_1_0/empty.idx");
  RETURN_IF_ERROR(plain.Write());
  testutil::WriteFile(dir + "/plain/data/db/t/all_1_1_0/empty.idx", "");
  Expect(dir, "plain/data/db/t/all_1_1_0/columns.txt", cols);
  Expect(dir, "plain/data/db/t/all_2_2_0/columns.txt", cols);
  Expect(dir, "plain/data/db/t/all_1_1_0/empty.idx", "");
  // Bases named as the newest ClickHouse names them: S3 without credentials (and the marker
  // saying "use this backup's"), and Azure. Both open with --base.
  for (const std::string name : {"s3base", "azure"}) {
    FixtureBackup b(dir + "/" + name);
    b.SetBase(sum);
    b.header.timestamp = "2026-11-03 01:00:00";
    b.header.base_backup = name == "s3base"
                               ? "S3('https://backups.s3.eu-west-1.amazonaws.com/ch/nightly-1')"
                               : "AzureBlobStorage('DefaultEndpointsProtocol=https;AccountName="
                                 "acct;AccountKey=c2VjcmV0', 'backups', 'nightly-1')";
    b.AddStitched("data/db/log/data.bin", log1, log0.size());
    RETURN_IF_ERROR(b.Write());
    if (name == "s3base") {
      InsertTag(b.dir(), "</base_backup_uuid>",
                "<base_backup_copy_s3_credentials_from_backup>true"
                "</base_backup_copy_s3_credentials_from_backup>");
    }
    Expect(dir, name + "/data/db/log/data.bin", log1);
  }
  // Version 3 (packed): refused.
  FixtureBackup packed(dir + "/packed");
  packed.header.timestamp = "2026-11-04 01:00:00";
  packed.AddStored("metadata/db/t.sql", sql);
  RETURN_IF_ERROR(packed.Write());
  InsertTag(dir + "/packed", "</uuid>", "<num_packs>1</num_packs>");
  testutil::WriteFile(dir + "/packed/packs_0000", "PACK");
  std::string v3 = testutil::ReadFile(dir + "/packed/.backup");
  v3.replace(v3.find("<version>1</version>"), 20, "<version>3</version>");
  testutil::WriteFile(dir + "/packed/.backup", v3);
  return engine::Status::OK();
}

engine::Status Lightweight(const std::string& dir, const std::string& endpoint,
                           const std::string& bucket) {
  const std::string sql = "CREATE TABLE db.t (x UInt64) ENGINE = MergeTree ORDER BY x;\n";
  const std::string bin = testutil::RandomBytes(300000, 12), small = "count: 3\n";
  FixtureBackup b(dir + "/lw");
  b.header.timestamp = "2026-11-05 01:00:00";
  b.AddStored("metadata/db/t.sql", sql);  // Stored in the backup as usual.
  // Stand-ins for the object entries, rewritten below with <object_key> and no data file.
  b.AddStored("data/db/t/all_1_1_0/x.bin", "");
  b.AddStored("data/db/t/all_1_1_0/count.txt", "");
  RETURN_IF_ERROR(b.Write());
  const auto sum = [&](const std::string& c) { return b.Sum(c).ToHex(); };
  std::string xml = testutil::ReadFile(b.dir() + "/.backup");
  xml.replace(xml.find("<version>1</version>"), 20, "<version>2</version>");
  xml.insert(xml.find("<contents>"), "<original_endpoint>" + endpoint +
                                         "</original_endpoint><original_namespace>" + bucket +
                                         "</original_namespace>");
  for (const auto& [name, content, key] :
       {std::tuple{std::string("data/db/t/all_1_1_0/x.bin"), bin, std::string("lw-disk/abc/xqzv")},
        {std::string("data/db/t/all_1_1_0/count.txt"), small, std::string("lw-disk/def/count")}}) {
    const std::string empty_entry = "<file><name>" + name + "</name><size>0</size></file>";
    const size_t at = xml.find(empty_entry);
    if (at == std::string::npos) std::abort();
    xml.replace(at, empty_entry.size(),
                "<file><name>" + name + "</name><size>" + std::to_string(content.size()) +
                    "</size><object_key>" + key + "</object_key><checksum>" + sum(content) +
                    "</checksum></file>");
    testutil::WriteFile(dir + "/objects/" + key, content);
    Expect(dir, "lw/" + name, content);
  }
  testutil::WriteFile(b.dir() + "/.backup", xml);
  fs::remove_all(b.dir() + "/data");
  Expect(dir, "lw/metadata/db/t.sql", sql);
  return engine::Status::OK();
}

}  // namespace stitchfs::tools
