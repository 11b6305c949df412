// ReadLinkWhole: a symlink's target is read whole whatever size an earlier lstat gave.
// OpenByComponents: OpenBeneath's way without openat2 follows no symlink anywhere on a path.
#include "engine/base/posix_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "engine/base/unique_fd.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

class PosixFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_fd_ = UniqueFd(::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(dir_fd_);
  }
  // A symlink `name` to `target`.
  void Link(const std::string& name, const std::string& target) {
    ASSERT_EQ(::symlinkat(target.c_str(), dir_fd_.get(), name.c_str()), 0) << name;
  }
  testutil::TempDir dir_;
  UniqueFd dir_fd_;
};

TEST_F(PosixFileTest, ATargetLongerThanTheHintIsReadWhole) {
  std::string deep;
  while (deep.size() < 3000) deep += "releases/";
  Link("long", deep);
  Link("short", "x");
  for (size_t hint : {size_t{0}, size_t{1}, size_t{255}, size_t{256}, deep.size() - 1}) {
    auto got = ReadLinkWhole(dir_fd_.get(), "long", hint);
    ASSERT_TRUE(got.ok()) << hint << ": " << got.status().ToString();
    EXPECT_EQ(*got, deep) << "hint " << hint;
  }
  auto got = ReadLinkWhole(dir_fd_.get(), "short", 4000);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "x") << "a hint longer than the target";
}

TEST_F(PosixFileTest, TargetsAtTheBufferSizesAreWhole) {
  for (size_t len :
       {size_t{255}, size_t{256}, size_t{257}, size_t{511}, size_t{512}, size_t{4095}}) {
    const std::string target(len, 't');
    const std::string name = "l" + std::to_string(len);
    Link(name, target);
    auto got = ReadLinkWhole(dir_fd_.get(), name.c_str(), 0);
    ASSERT_TRUE(got.ok()) << len;
    EXPECT_EQ(*got, target) << len;
  }
}

TEST_F(PosixFileTest, NotASymlinkIsAnIOError) {
  testutil::WriteFile(dir_.path() + "/plain", "bytes");
  auto got = ReadLinkWhole(dir_fd_.get(), "plain", 5);
  EXPECT_EQ(got.status().code(), ErrorCode::kIOError);
  EXPECT_EQ(got.status().sys_errno(), EINVAL);
  EXPECT_EQ(ReadLinkWhole(dir_fd_.get(), "absent", 5).status().sys_errno(), ENOENT);
}

TEST_F(PosixFileTest, OpeningNameByNameFollowsNoSymlinkOnTheWay) {
  testutil::WriteFile(dir_.path() + "/a/b/file", "inside");
  testutil::TempDir outside;
  testutil::WriteFile(outside.path() + "/b/file", "outside");
  Link("up", outside.path());  // A folder's name that leads out.
  Link("a/b/link", "file");    // The last name a symlink.
  auto in = OpenByComponents(dir_fd_.get(), "a/b/file", O_RDONLY);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  char buf[16] = {};
  EXPECT_EQ(::read(in->get(), buf, sizeof buf), 6);
  EXPECT_EQ(std::string(buf), "inside");
  EXPECT_EQ(OpenByComponents(dir_fd_.get(), "up/b/file", O_RDONLY).status().sys_errno(), ELOOP);
  testutil::WriteFile(dir_.path() + "/plain", "x");
  EXPECT_EQ(OpenByComponents(dir_fd_.get(), "plain/x", O_RDONLY).status().sys_errno(), ENOTDIR);
  EXPECT_EQ(OpenByComponents(dir_fd_.get(), "a/b/link", O_RDONLY).status().sys_errno(), ELOOP);
  for (const char* bad : {"../x", "a/../a/b/file", "a//b/file", "a/./b/file", "", "a/b/"}) {
    EXPECT_EQ(OpenByComponents(dir_fd_.get(), bad, O_RDONLY).status().sys_errno(), EXDEV) << bad;
  }
}

}  // namespace
}  // namespace stitchfs::engine
