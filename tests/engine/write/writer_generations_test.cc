// A tree mutated over many generations, each backed up on the previous one; every generation
// must restore byte-exact with its metadata.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "engine/read/open_resolved.h"
#include "engine/read/restore.h"
#include "engine/write/snapshot_writer.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"
#include "tests/testutil/tree.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {
namespace {

class Mutator {
 public:
  Mutator(std::string root, uint32_t seed) : root_(std::move(root)), rng_(seed) {}

  void Step() {
    for (int i = 0; i < 12; ++i) One();
  }

 private:
  std::vector<std::string> Files() {
    std::vector<std::string> out;
    for (auto& e : fs::recursive_directory_iterator(root_)) {
      if (e.is_symlink() || !e.is_regular_file()) continue;
      out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string NewPath() {
    return root_ + "/d" + std::to_string(rng_() % 4) + "/f" + std::to_string(counter_++);
  }
  void Append(const std::string& p, size_t n) {
    std::ofstream(p, std::ios::app | std::ios::binary) << testutil::RandomBytes(n, rng_());
  }

  void One() {
    auto files = Files();
    const unsigned op = rng_() % 11;
    if (files.empty() || op == 0) {
      const std::string p = NewPath();
      fs::create_directories(fs::path(p).parent_path());
      testutil::WriteFile(p, testutil::RandomBytes(rng_() % 5000, rng_()));
      return;
    }
    const std::string f = files[rng_() % files.size()];
    switch (op) {
      case 1:
      case 2:
        Append(f, 1 + rng_() % 3000);
        break;  // append
      case 3:
        testutil::WriteFile(f, testutil::RandomBytes(fs::file_size(f), rng_()));
        break;  // rewrite
      case 4: {
        std::string p = NewPath();
        fs::create_directories(fs::path(p).parent_path());
        fs::rename(f, p);
        break;
      }
      case 5:
        fs::remove(f);
        break;
      case 6:
        fs::resize_file(f, fs::file_size(f) / 2);
        break;  // truncate
      case 7:
        ::chmod(f.c_str(), 0600 | (rng_() % 2 ? 0044 : 0));
        break;
      case 8: {  // symlink
        const std::string l = root_ + "/link" + std::to_string(rng_() % 3);
        fs::remove(l);
        fs::create_symlink(fs::relative(f, root_), l);
        break;
      }
      case 9:
        fs::create_directories(root_ + "/empty" + std::to_string(rng_() % 3));
        break;
      case 10: {  // hard link
        const std::string h = root_ + "/hard" + std::to_string(counter_++);
        fs::create_hard_link(f, h);
        break;
      }
    }
  }

  std::string root_;
  std::mt19937 rng_;
  int counter_ = 0;
};

TEST(WriterGenerationsTest, EveryGenerationRestoresExactly) {
  testutil::TempDir dir;
  const std::string src = dir / "src";
  fs::create_directories(src);
  Mutator mutate(src, 2026);
  std::vector<std::string> expected;
  for (int gen = 0; gen < 14; ++gen) {
    mutate.Step();
    BackupOptions o;
    o.chain = testutil::LocalChain();
    o.source = src;
    o.dest = dir / ("g" + std::to_string(gen));
    if (gen > 0) o.base = dir / ("g" + std::to_string(gen - 1));
    o.jobs = 1 + gen % 3;
    o.files_cache = gen % 2 == 1;
    auto s = WriteBackup(o, nullptr);
    ASSERT_TRUE(s.ok()) << "generation " << gen << ": " << s.status().ToString();
    ASSERT_TRUE(s->missing.empty());
    expected.push_back(testutil::DescribeTree(src));
  }
  for (int gen = 0; gen < 14; ++gen) {
    auto chain = OpenResolved(dir / ("g" + std::to_string(gen)), testutil::LocalChain());
    ASSERT_TRUE(chain.ok()) << chain.status().ToString();
    RestoreOptions r;
    r.target = dir / ("r" + std::to_string(gen));
    auto res = RestoreBackup(**chain, r, nullptr);
    ASSERT_TRUE(res.ok()) << "generation " << gen << ": " << res.status().ToString();
    EXPECT_EQ(testutil::DescribeTree(r.target), expected[gen]) << "generation " << gen;
  }
}

}  // namespace
}  // namespace stitchfs::engine
