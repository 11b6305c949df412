#include "fs/inode_table.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "engine/format/manifest_reader.h"

namespace stitchfs::fs {
namespace {

std::unique_ptr<const engine::Manifest> Parse(const std::string& files,
                                              const std::string& nodes = "") {
  auto m = engine::ParseManifest(
      "<config><version>1</version><timestamp>2026-10-01 12:00:00</timestamp>"
      "<uuid>11111111-2222-4333-8444-555555555555</uuid><contents>" +
          files + "</contents>" + nodes + "</config>",
      "x");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(*m);
}

std::string File(const std::string& name, const std::string& meta = "") {
  return "<file><name>" + name + "</name><size>0</size>" +
         (meta.empty() ? "" : "<stitchfs_meta>" + meta + "</stitchfs_meta>") + "</file>";
}

TEST(InodeTableTest, ImpliedFoldersLookupAndSortedChildren) {
  auto m = Parse(File("b/z") + File("b/a") + File("c") + File("b/sub/x"));
  InodeTable t = InodeTable::Build(*m);
  const uint32_t b = t.Lookup(InodeTable::kRoot, "b");
  ASSERT_NE(b, 0u);
  EXPECT_EQ(t.Get(b)->type, InodeType::kDir);
  std::vector<std::string> names;
  for (const auto& d : t.Children(*t.Get(b))) names.emplace_back(d.Name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "sub", "z"}));
  EXPECT_EQ(t.Get(b)->nlink, 3u);  // ".", its entry in the root, and "sub/.."
  EXPECT_EQ(t.Lookup(b, "missing"), 0u);
  EXPECT_EQ(t.Lookup(t.Lookup(InodeTable::kRoot, "c"), "x"), 0u) << "a file has no children";
  EXPECT_EQ(t.Get(0), nullptr);
  EXPECT_EQ(t.Get(t.size() + 1), nullptr);
  struct stat st = t.Stat(t.Lookup(InodeTable::kRoot, "c"), AttrOptions{});
  EXPECT_EQ(st.st_mode, static_cast<mode_t>(S_IFREG | 0444));
}

TEST(InodeTableTest, InodesAreNumberedFoldersFirstThenFilesInPathOrder) {
  // Inode numbers are positions: folders as first met in name order (parents first), then files
  // in name order, which is the order a walk reads them (NextFile).
  auto m = Parse(File("b/z") + File("b/a") + File("c") + File("b/sub/x"));
  InodeTable t = InodeTable::Build(*m);
  const uint32_t b = t.Lookup(InodeTable::kRoot, "b");
  const uint32_t sub = t.Lookup(b, "sub");
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(sub, 3u);
  EXPECT_EQ(t.Lookup(b, "a"), 4u);
  EXPECT_EQ(t.Lookup(sub, "x"), 5u);
  EXPECT_EQ(t.Lookup(b, "z"), 6u);
  EXPECT_EQ(t.Lookup(InodeTable::kRoot, "c"), 7u);
  EXPECT_EQ(t.size(), 7u);
}

TEST(InodeTableTest, DeepFoldersAreFoundLevelByLevel) {
  // Eight files 4,000 folders deep (a hostile manifest can go to 32,000 within the name limit):
  // folders are keyed by (parent, leaf), so building costs the paths' length, not a hash of
  // each folder's full path (quadratic in the depth).
  constexpr int kDepth = 4000, kFiles = 8;
  std::string files, deep;
  for (int i = 0; i < kDepth; ++i) deep += "a/";
  for (int k = 0; k < kFiles; ++k) files += File("x" + std::to_string(k) + "/" + deep + "f");
  auto m = Parse(files);
  InodeTable t = InodeTable::Build(*m);
  EXPECT_EQ(t.size(), static_cast<size_t>(1 + kFiles * (1 + kDepth + 1)));
  uint32_t ino = t.Lookup(InodeTable::kRoot, "x5");
  for (int i = 0; i < kDepth && ino != 0; ++i) {
    ASSERT_EQ(t.Children(*t.Get(ino)).size(), 1u);
    ino = t.Lookup(ino, "a");
  }
  ASSERT_NE(ino, 0u);
  const uint32_t f = t.Lookup(ino, "f");
  ASSERT_NE(f, 0u);
  EXPECT_EQ(t.Get(f)->type, InodeType::kFile);
  EXPECT_EQ(t.Get(ino)->nlink, 2u);
}

// (A name that is both a file and a folder never reaches here: engine::CheckNames refuses the
// manifest, name_check_test.cc.)
TEST(InodeTableTest, HardLinksShareAnInode) {
  const std::string meta = "644 0 0 0 0 77 9";
  auto m = Parse(File("a", meta) + File("d/b", meta) + File("x/y"),
                 "<stitchfs_symlink>777 0 0 0 0 0 0 1 lt</stitchfs_symlink>");
  InodeTable t = InodeTable::Build(*m);
  const uint32_t a = t.Lookup(InodeTable::kRoot, "a");
  EXPECT_EQ(a, t.Lookup(t.Lookup(InodeTable::kRoot, "d"), "b"));
  EXPECT_EQ(t.Get(a)->nlink, 2u);
  EXPECT_EQ(t.Get(t.Lookup(InodeTable::kRoot, "x"))->type, InodeType::kDir);
  const uint32_t l = t.Lookup(InodeTable::kRoot, "l");
  ASSERT_NE(l, 0u);
  EXPECT_EQ(t.Get(l)->type, InodeType::kSymlink);
  AttrOptions o;
  o.uid = 5;
  o.umask = 022;
  struct stat st = t.Stat(a, o);
  EXPECT_EQ(st.st_uid, 5u);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

// Names whose order by full path differs from their folders' order ('!' and '-' sort before
// '/'), built many times at random: every name is found level by level, every folder that a
// name implies exists once, and every folder lists its children sorted and once.
TEST(InodeTableTest, EveryNameIsFoundWhateverOrderItsFoldersSortIn) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::set<std::string> names;
    for (int i = 0; i < 40; ++i) {
      std::string name;
      const int parts = 1 + static_cast<int>(rng() % 4);
      for (int p = 0; p < parts; ++p) {
        if (p) name += '/';
        const int len = 1 + static_cast<int>(rng() % 3);
        for (int c = 0; c < len; ++c) name += "ab!-"[rng() % 4];
      }
      names.insert(name);
    }
    // A name that is also another's folder would be refused by the reader: keep the folder.
    std::set<std::string> folders;
    for (const std::string& n : names) {
      for (size_t s = n.find('/'); s != std::string::npos; s = n.find('/', s + 1)) {
        folders.insert(n.substr(0, s));
      }
    }
    std::string xml;
    std::vector<std::string> files;
    for (const std::string& n : names) {
      if (folders.count(n)) continue;
      xml += File(n);
      files.push_back(n);
    }
    std::set<std::string> kept_folders;
    for (const std::string& n : files) {
      for (size_t s = n.find('/'); s != std::string::npos; s = n.find('/', s + 1)) {
        kept_folders.insert(n.substr(0, s));
      }
    }
    auto m = Parse(xml);
    const InodeTable t = InodeTable::Build(*m);
    ASSERT_EQ(t.size(), 1 + kept_folders.size() + files.size()) << round;
    for (const std::string& n : files) {
      uint32_t ino = InodeTable::kRoot;
      size_t start = 0;
      for (size_t s = n.find('/'); s != std::string::npos; start = s + 1, s = n.find('/', s + 1)) {
        ino = t.Lookup(ino, n.substr(start, s - start));
        ASSERT_NE(ino, 0u) << n;
        ASSERT_EQ(t.Get(ino)->type, InodeType::kDir) << n;
      }
      ino = t.Lookup(ino, n.substr(start));
      ASSERT_NE(ino, 0u) << n;
      ASSERT_EQ(t.Get(ino)->type, InodeType::kFile) << n;
      EXPECT_EQ(m->name(t.Get(ino)->ref), n);
    }
    for (uint32_t ino = 1; ino <= t.size(); ++ino) {
      const auto kids = t.Children(*t.Get(ino));
      for (size_t k = 1; k < kids.size(); ++k) {
        EXPECT_LT(kids[k - 1].Name(), kids[k].Name()) << round;
      }
    }
  }
}

}  // namespace
}  // namespace stitchfs::fs
