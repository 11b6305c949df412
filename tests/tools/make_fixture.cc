// make_fixture: builds backups for tests, the demo and the benchmarks, before (and independent
// of) the snapshot writer. Every backup is built entry by entry with explicit base coverage.
//   make_fixture chain DIR            3-deep ClickHouse-format chain + expected trees
//   make_fixture layouts DIR          the forms of current ClickHouse (fixture_layouts.h)
//   make_fixture lightweight DIR ENDPOINT BUCKET   a lightweight snapshot on that bucket
//   make_fixture grow DIR N BYTES [clickhouse]  one file grown over N backups (xxh3, or
//                                     ClickHouse's checksums), DIR/original
//   make_fixture manifest DIR N       a backup of N empty-data ClickHouse-like entries
//   make_fixture tree DIR FILES BYTES a full backup of a random tree, and the tree itself
//   make_fixture files DIR FILES BYTES only the random tree, in DIR/tree
//   make_fixture hostile-zip FILE     300 directory entries over one deflate bomb (issue 25)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "engine/base/atomic_file.h"
#include "engine/format/manifest_writer.h"
#include "engine/location/locator.h"
#include "tests/testutil/archives.h"
#include "tests/testutil/fixture.h"
#include "tests/tools/fixture_layouts.h"

namespace fs = std::filesystem;
using namespace stitchfs;
using testutil::FixtureBackup;

namespace {

int Check(const engine::Status& s) {
  if (s.ok()) return 0;
  std::fprintf(stderr, "make_fixture: %s\n", s.ToString().c_str());
  std::exit(1);
}

void Expect(const std::string& root, const std::string& name, const std::string& content) {
  testutil::WriteFile(root + "/" + name, content);
}

// b0 (full) <- b1 <- b2, ClickHouse checksums, with stored, stitched, whole-from-base (with and
// without <base_size>), renamed, deduplicated and empty entries. DIR/expected/bN holds each tree.
int Chain(const std::string& dir) {
  const std::string log0 = "2026-10-01 first line\n" + std::string(3000, 'a');
  const std::string log1 = log0 + "2026-10-02 second line\n" + std::string(5000, 'b');
  const std::string log2 = log1 + "2026-10-03 third line\n";
  const std::string sql0 = "CREATE TABLE db.t (x UInt64) ENGINE = Log;\n";
  const std::string sql1 = sql0 + "ALTER TABLE db.t ADD COLUMN y String;\n";
  const std::string cols = "columns format version: 1\n1 columns:\n`x` UInt64\n";
  const std::string bin = testutil::RandomBytes(70000, 5);
  FixtureBackup b0(dir + "/b0");
  b0.header.timestamp = "2026-10-01 03:00:00";
  b0.AddStored("data/db/t/all_1_1_0/columns.txt", cols);
  b0.AddDuplicate("data/db/t/all_2_2_0/columns.txt", cols, "data/db/t/all_1_1_0/columns.txt");
  b0.AddStored("data/db/t/all_1_1_0/x.bin", bin);
  b0.AddStored("data/db/log/data.bin", log0);
  b0.AddStored("metadata/db/t.sql", sql0);
  b0.AddEmpty("data/db/t/all_1_1_0/empty.idx");
  Check(b0.Write());
  FixtureBackup b1(dir + "/b1");
  b1.SetBase(b0);
  b1.header.timestamp = "2026-10-02 03:00:00";
  b1.AddFromBase("data/db/t/all_1_1_0/columns.txt", cols);
  b1.AddFromBase("data/db/t/all_1_3_1/x.bin", bin);  // renamed by a merge
  b1.AddStitched("data/db/log/data.bin", log1, log0.size());
  b1.AddStitched("metadata/db/t.sql", sql1, sql0.size());
  b1.AddEmpty("data/db/t/all_1_1_0/empty.idx");
  Check(b1.Write());
  FixtureBackup b2(dir + "/b2");
  b2.SetBase(b1);
  b2.header.timestamp = "2026-10-03 03:00:00";
  engine::FileEntry explicit_full;  // <use_base> with an explicit <base_size> equal to size
  explicit_full.name = "metadata/db/t.sql";
  explicit_full.size = sql1.size();
  explicit_full.checksum = b2.Sum(sql1);
  explicit_full.base_size = sql1.size();
  explicit_full.base_checksum = explicit_full.checksum;
  b2.AddRaw(explicit_full);
  b2.AddFromBase("data/db/t/all_1_3_1/x.bin", bin);
  b2.AddStitched("data/db/log/data.bin", log2, log1.size());
  b2.AddStored("store/new & <odd> name.txt", "hello\n");
  b2.AddDuplicate("store/copy.txt", "hello\n", "store/new & <odd> name.txt");
  Check(b2.Write());
  const std::string e = dir + "/expected/";
  Expect(e + "b0", "data/db/t/all_1_1_0/columns.txt", cols);
  Expect(e + "b0", "data/db/t/all_2_2_0/columns.txt", cols);
  Expect(e + "b0", "data/db/t/all_1_1_0/x.bin", bin);
  Expect(e + "b0", "data/db/log/data.bin", log0);
  Expect(e + "b0", "metadata/db/t.sql", sql0);
  Expect(e + "b0", "data/db/t/all_1_1_0/empty.idx", "");
  Expect(e + "b1", "data/db/t/all_1_1_0/columns.txt", cols);
  Expect(e + "b1", "data/db/t/all_1_3_1/x.bin", bin);
  Expect(e + "b1", "data/db/log/data.bin", log1);
  Expect(e + "b1", "metadata/db/t.sql", sql1);
  Expect(e + "b1", "data/db/t/all_1_1_0/empty.idx", "");
  Expect(e + "b2", "metadata/db/t.sql", sql1);
  Expect(e + "b2", "data/db/t/all_1_3_1/x.bin", bin);
  Expect(e + "b2", "data/db/log/data.bin", log2);
  Expect(e + "b2", "store/new & <odd> name.txt", "hello\n");
  Expect(e + "b2", "store/copy.txt", "hello\n");
  return 0;
}

std::string Manifest(engine::ManifestHeader h, const std::vector<engine::FileEntry>& entries) {
  std::string xml;
  Check(engine::RenderManifest(h, entries, &xml));
  return xml;
}

engine::ManifestHeader Header(engine::ChecksumAlgorithm alg) {
  engine::ManifestHeader h;
  h.timestamp = "2026-10-01 12:00:00";
  h.uuid = testutil::NewUuid();
  h.deduplicate_files = true;
  h.algorithm = alg;
  return h;
}

void AppendFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// One file of BYTES bytes, grown in N equal appends, one backup per append (b00..bNN), plus
// DIR/original holding the same bytes as a plain file.
int Grow(const std::string& dir, int n, uint64_t total, engine::ChecksumAlgorithm alg) {
  fs::create_directories(dir);
  engine::Hasher hasher(alg);
  std::mt19937_64 rng(1);
  std::string prev_uuid, chunk;
  engine::Checksum prev_sum;
  uint64_t size = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t part = total / n + (i == n - 1 ? total % n : 0);
    char name[16];
    std::snprintf(name, sizeof(name), "b%03d", i);
    const std::string bdir = dir + "/" + name;
    fs::create_directories(bdir);
    for (uint64_t done = 0; done < part;) {
      chunk.resize(std::min<uint64_t>(part - done, 8 << 20));
      for (size_t k = 0; k + 8 <= chunk.size(); k += 8)
        *reinterpret_cast<uint64_t*>(&chunk[k]) = rng();
      hasher.Update(chunk);
      AppendFile(bdir + "/grow.bin", chunk);
      AppendFile(dir + "/original", chunk);
      done += chunk.size();
    }
    engine::ManifestHeader h = Header(alg);
    engine::FileEntry e;
    e.name = "grow.bin";
    e.size = size + part;
    e.checksum = hasher.Digest();
    if (i > 0) {
      char base[16];
      std::snprintf(base, sizeof(base), "b%03d", i - 1);
      h.base_backup = engine::FileLocator(base);
      h.base_backup_uuid = prev_uuid;
      e.base_size = size;
      e.base_checksum = prev_sum;
    }
    Check(engine::WriteFileAtomically(bdir, ".backup", Manifest(h, {e})));
    prev_uuid = h.uuid;
    prev_sum = e.checksum;
    size += part;
  }
  return 0;
}

// A backup whose manifest lists N files with ClickHouse-like paths (data files are not written:
// this measures opening and indexing the manifest).
int BigManifest(const std::string& dir, uint64_t n) {
  fs::create_directories(dir);
  static const char* kCols[] = {"primary.idx", "checksums.txt", "columns.txt", "count.txt",
                                "id.bin",      "id.mrk2",       "value.bin",   "value.mrk2",
                                "ts.bin",      "ts.mrk2"};
  std::vector<std::string> names;
  names.reserve(n);
  for (uint64_t i = 0; names.size() < n; ++i) {
    const uint64_t table = i / 10000, part = i % 10000;
    for (const char* col : kCols) {
      if (names.size() == n) break;
      names.push_back("shards/1/replicas/1/data/analytics/events_" + std::to_string(table) + "/" +
                      "20261" + std::to_string(part % 10) + "_" + std::to_string(part) + "_" +
                      std::to_string(part + 7) + "_2/" + col);
    }
  }
  std::sort(names.begin(), names.end());
  std::vector<engine::FileEntry> entries(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    entries[i].name = names[i];
    entries[i].size = 1000 + i % 50000;
    entries[i].checksum = engine::Checksum{i * 0x9e3779b97f4a7c15ULL, i};
  }
  Check(engine::WriteFileAtomically(
      dir, ".backup", Manifest(Header(engine::ChecksumAlgorithm::kClickHouse), entries)));
  return 0;
}

// A full backup of FILES random files totalling about BYTES, with DIR/tree holding the source
// (only the tree when `with_backup` is false).
int Tree(const std::string& dir, uint64_t files, uint64_t bytes, bool with_backup = true) {
  FixtureBackup b(dir + "/backup", engine::ChecksumAlgorithm::kXxh3);
  std::mt19937 rng(3);
  std::vector<std::string> names, contents;
  for (uint64_t i = 0; i < files; ++i) {
    const uint64_t size = files == 1 ? bytes : (bytes / files) * (rng() % 200) / 100;
    std::string name =
        "d" + std::to_string(i % 37) + "/sub" + std::to_string(i % 5) + "/f" + std::to_string(i);
    std::string content = testutil::RandomBytes(size, static_cast<uint32_t>(i));
    testutil::WriteFile(dir + "/tree/" + name, content);
    if (with_backup) b.AddStored(name, content);
  }
  if (with_backup) Check(b.Write());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 2 ? argv[1] : "";
  if (cmd == "chain" && argc == 3) return Chain(argv[2]);
  if (cmd == "layouts" && argc == 3) return Check(tools::Layouts(argv[2]));
  if (cmd == "lightweight" && argc == 5)
    return Check(tools::Lightweight(argv[2], argv[3], argv[4]));
  if (cmd == "grow" && (argc == 5 || argc == 6)) {
    const bool ch = argc == 6 && std::string(argv[5]) == "clickhouse";
    return Grow(argv[2], std::atoi(argv[3]), std::strtoull(argv[4], nullptr, 10),
                ch ? engine::ChecksumAlgorithm::kClickHouse : engine::ChecksumAlgorithm::kXxh3);
  }
  if (cmd == "manifest" && argc == 4)
    return BigManifest(argv[2], std::strtoull(argv[3], nullptr, 10));
  if (cmd == "files" && argc == 5) {
    return Tree(argv[2], std::strtoull(argv[3], nullptr, 10), std::strtoull(argv[4], nullptr, 10),
                false);
  }
  if (cmd == "tree" && argc == 5) {
    return Tree(argv[2], std::strtoull(argv[3], nullptr, 10), std::strtoull(argv[4], nullptr, 10));
  }
  if (cmd == "hostile-zip" && argc == 3) {
    testutil::WriteFile(argv[2], testutil::SharedBombZip(300, 64 << 20));
    return 0;
  }
  std::fprintf(
      stderr,
      "usage: make_fixture chain DIR | layouts DIR | lightweight DIR ENDPOINT BUCKET | "
      "grow DIR N BYTES | manifest DIR N | tree|files DIR FILES BYTES | hostile-zip FILE\n");
  return 2;
}
