#include "engine/base/shared_bytes.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "engine/base/unique_fd.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

bool Aligned(std::string_view s) { return reinterpret_cast<uintptr_t>(s.data()) % 8 == 0; }

class SharedBytesTest : public ::testing::Test {
 protected:
  UniqueFd Write(const std::string& bytes) {
    const std::string path = dir_.path() + "/f";
    std::ofstream(path, std::ios::binary) << bytes;
    return UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  }
  testutil::TempDir dir_;
};

TEST_F(SharedBytesTest, ReadMapAndCopyHoldTheBytesAligned) {
  const std::string bytes = testutil::RandomBytes(100003, 7);
  UniqueFd fd = Write(bytes);
  ASSERT_TRUE(fd);
  auto read = SharedBytes::Read(fd.get(), bytes.size(), "f");
  auto mapped = SharedBytes::Map(fd.get(), bytes.size(), "f");
  ASSERT_TRUE(read.ok() && mapped.ok());
  const SharedBytes copy = SharedBytes::Copy(bytes.substr(1));
  EXPECT_EQ(read->view(), bytes);
  EXPECT_EQ(mapped->view(), bytes);
  EXPECT_EQ(copy.view(), bytes.substr(1));
  EXPECT_TRUE(Aligned(read->view()) && Aligned(mapped->view()) && Aligned(copy.view()));
  // Copies share the bytes, which live as long as any holder does.
  std::string_view view;
  {
    SharedBytes held = *mapped;
    mapped = SharedBytes();
    view = held.view();
    EXPECT_EQ(view, bytes);
  }
  EXPECT_TRUE(mapped->view().empty());
}

TEST_F(SharedBytesTest, AShortFileIsAnErrorAndNothingIsEmpty) {
  UniqueFd fd = Write("short");
  auto read = SharedBytes::Read(fd.get(), 6, "f");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), ErrorCode::kBackupDamaged);
  auto none = SharedBytes::Map(fd.get(), 0, "f");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->view().empty());
  EXPECT_TRUE(SharedBytes::Copy("").view().empty());
}

// The resident bytes (smaps "Rss") of this process's mapping that starts at `addr`.
size_t ResidentKb(const void* addr) {
  char start[32];
  std::snprintf(start, sizeof(start), "%lx-", reinterpret_cast<unsigned long>(addr));
  std::ifstream smaps("/proc/self/smaps");
  bool in = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind(start, 0) == 0) in = true;
    if (in && line.rfind("Rss:", 0) == 0) return std::stoul(line.substr(4));
  }
  ADD_FAILURE() << "no mapping at " << start;
  return 0;
}

TEST_F(SharedBytesTest, ReleasedMappedPagesLeaveTheResidentSetAndReadTheSameAfter) {
  const std::string bytes = testutil::RandomBytes(4 << 20, 9);
  UniqueFd fd = Write(bytes);
  ASSERT_TRUE(fd);
  auto mapped = SharedBytes::Map(fd.get(), bytes.size(), "f", /*populate=*/true);
  ASSERT_TRUE(mapped.ok());
  const void* addr = mapped->view().data();
  EXPECT_GE(ResidentKb(addr), size_t{4 << 10}) << "populated";
  EXPECT_GE(SharedBytes::ReleaseMappedPages(), bytes.size());
  EXPECT_EQ(ResidentKb(addr), 0u) << "released";
  EXPECT_EQ(mapped->view(), bytes) << "touched again: the same bytes, from the page cache";
  EXPECT_GE(ResidentKb(addr), size_t{4 << 10});
  // Bytes read into memory of their own are never released (they would read as zeros).
  auto read = SharedBytes::Read(fd.get(), bytes.size(), "f");
  ASSERT_TRUE(read.ok());
  SharedBytes::ReleaseMappedPages();
  EXPECT_EQ(read->view(), bytes);
}

TEST_F(SharedBytesTest, ReleasingWhileMappingsComeAndGoIsSafe) {
  const std::string bytes = testutil::RandomBytes(256 << 10, 10);
  UniqueFd fd = Write(bytes);
  ASSERT_TRUE(fd);
  std::atomic<bool> done{false};
  std::thread releaser([&] {
    while (!done.load()) SharedBytes::ReleaseMappedPages();
  });
  for (int i = 0; i < 300; ++i) {
    auto mapped = SharedBytes::Map(fd.get(), bytes.size(), "f", i % 2 == 0);
    ASSERT_TRUE(mapped.ok());
    ASSERT_EQ(mapped->view(), bytes);
  }  // (Each mapping is unmapped here, perhaps while the releaser runs.)
  done = true;
  releaser.join();
}

}  // namespace
}  // namespace stitchfs::engine
