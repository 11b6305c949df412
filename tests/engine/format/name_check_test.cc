// CheckNames (engine/format/name_check.h) through the XML reader and the manifest cache: a
// manifest that names one path twice (two files, a file and a folder, a symlink and a file...)
// or has a file under a file or a symlink is BACKUP_DAMAGED naming the backup and both entries;
// names that only begin with another ("a.txt" beside "a") are not under it.
#include "engine/format/name_check.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/base/unique_fd.h"
#include "engine/format/manifest_file.h"
#include "engine/format/manifest_reader.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

std::string File(const std::string& name) {
  return "<file><name>" + name + "</name><size>0</size></file>";
}
std::string Dir(const std::string& name) {
  return "<stitchfs_dir>755 0 0 0 0 0 0 " + name + "</stitchfs_dir>";
}
std::string Symlink(const std::string& name) {
  return "<stitchfs_symlink>777 0 0 0 0 0 0 " + std::to_string(name.size()) + " " + name +
         "target</stitchfs_symlink>";
}

// The manifest of `files` (<file> elements) and `nodes` (stitchfs's nodes), parsed.
StatusOr<std::unique_ptr<const Manifest>> Parse(const std::string& files,
                                                const std::string& nodes = "") {
  std::string doc =
      "<config><version>1</version><timestamp>2026-10-01 12:00:00</timestamp>"
      "<uuid>11111111-2222-4333-8444-555555555555</uuid><contents>";
  doc += files;
  doc += "</contents>";
  doc += nodes;
  doc += "</config>";
  return ParseManifest(doc, "/b/x");
}

void ExpectRefused(const std::string& files, const std::string& nodes,
                   const std::vector<std::string>& says) {
  auto m = Parse(files, nodes);
  ASSERT_FALSE(m.ok()) << files << nodes;
  EXPECT_EQ(m.status().code(), ErrorCode::kBackupDamaged);
  const std::string msg = m.status().message();
  EXPECT_EQ(msg.rfind("Backup /b/x: ", 0), 0u) << msg;
  for (const std::string& s : says) EXPECT_NE(msg.find(s), std::string::npos) << s << " | " << msg;
}

TEST(NameCheckTest, OnePathNamedTwiceIsRefused) {
  ExpectRefused(
      File("m/a") + File("z") + File("m/a"), "",
      {"file \"m/a\" (<file> number 1) and file \"m/a\" (<file> number 3) have one name"});
  ExpectRefused(File("a"), Dir("a"), {"file \"a\" (<file> number 1)", "folder \"a\""});
  ExpectRefused(File("d/a"), Symlink("d/a"),
                {"file \"d/a\"", "symlink \"d/a\" (<stitchfs_symlink>)"});
  ExpectRefused("", Dir("a") + Symlink("a"), {"folder \"a\"", "symlink \"a\"", "one name"});
  ExpectRefused("", Dir("a") + Dir("a"), {"folder \"a\" (<stitchfs_dir>) and folder \"a\""});
  ExpectRefused("", Symlink("l") + Symlink("l"), {"symlink \"l\"", "one name"});
  EXPECT_TRUE(Parse(File("a") + File("b"), Dir("c") + Symlink("d")).ok());
}

TEST(NameCheckTest, APathUnderAFileOrASymlinkIsRefused) {
  ExpectRefused(File("a") + File("a/b"), "",
                {"file \"a/b\" (<file> number 2) is under file \"a\" (<file> number 1), which is "
                 "not a folder"});
  ExpectRefused(File("x/a/b/c"), Symlink("x/a"), {"file \"x/a/b/c\"", "under symlink \"x/a\""});
  ExpectRefused(File("a"), Dir("a/sub"), {"folder \"a/sub\"", "under file \"a\""});
  ExpectRefused("", Symlink("l") + Symlink("l/m"), {"symlink \"l/m\"", "under symlink \"l\""});
  // Out of order in the manifest, and with names between them in sorted order.
  ExpectRefused(File("a/b") + File("a.txt") + File("a-b") + File("a"), "",
                {"file \"a/b\"", "under file \"a\""});
  ExpectRefused(File("a") + File("a.b") + File("a.b.c") + File("a/x"), "",
                {"file \"a/x\"", "under file \"a\""});
}

TEST(NameCheckTest, NamesThatOnlyBeginAnotherAndFoldersAreAccepted) {
  // "a", "a.txt", "a-b", "ab" and "a.b/c" begin with "a" but are not under it; under a folder
  // node, a symlink or file is fine; nodes need not come sorted.
  auto m = Parse(File("a") + File("a.txt") + File("a-b") + File("ab") + File("a.b/c") +
                     File("d/e/f") + File("d/g"),
                 Symlink("a0") + Dir("d/e") + Dir("d") + Symlink("d/l") + Dir("empty"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectRefused(File("a") + File("a.txt") + File("a-b") + File("ab") + File("a.b/c"),
                Symlink("a.txt/x"), {"symlink \"a.txt/x\"", "under file \"a.txt\""});
}

// Manifests built without the reader (a cache file written by a bug, or by someone who can
// write the cache folder) are held to the same rule when loaded.
TEST(NameCheckTest, TheCacheRefusesWhatTheReaderWould) {
  ManifestBuilder b;
  ManifestHeader h;
  h.uuid = "11111111-2222-4333-8444-555555555555";
  h.timestamp = "2026-10-01 12:00:00";
  ASSERT_TRUE(CheckHeader(&h).ok());
  b.set_header(h);
  FileEntry e;
  e.name = "a";
  ASSERT_TRUE(b.Add(e).ok());
  e.name = "a/b";
  ASSERT_TRUE(b.Add(e).ok());
  auto m = b.Finish();
  EXPECT_EQ(CheckNames(*m).code(), ErrorCode::kBackupDamaged);
  testutil::TempDir dir;
  const std::string path = dir / "m.bin";
  const ManifestIdentity id{1, 2, 3, {0, 4}, {0, 5}};
  UniqueFd w(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600));
  ASSERT_TRUE(ManifestFile::Write(w.get(), *m, id).ok());
  UniqueFd r(::open(path.c_str(), O_RDONLY));
  EXPECT_EQ(ManifestFile::Read(r.get(), id).status().code(), ErrorCode::kBackupDamaged);
}

}  // namespace
}  // namespace stitchfs::engine
