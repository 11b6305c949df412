#include "engine/base/shared_bytes.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>

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

}  // namespace
}  // namespace stitchfs::engine
