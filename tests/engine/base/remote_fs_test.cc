// RemoteFileSystem: network, cluster and FUSE file systems are told from local ones by
// statfs's f_type; the folder the tests run in is on a local one here.
#include "engine/base/remote_fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <initializer_list>

#include "engine/base/unique_fd.h"

namespace stitchfs::engine {
namespace {

TEST(RemoteFileSystemTest, NetworkAndFuseTypesAreRemoteLocalOnesAreNot) {
  for (int64_t remote : std::initializer_list<int64_t>{0x6969, 0xFE534D42, 0xFF534D42, 0x65735546,
                                                       0x00C36400, 0x01021997}) {
    EXPECT_TRUE(IsRemoteFileSystemType(remote)) << std::hex << remote;
  }
  // ext4, xfs, btrfs, tmpfs, overlayfs, zfs.
  for (int64_t local : std::initializer_list<int64_t>{0xEF53, 0x58465342, 0x9123683E, 0x01021994,
                                                      0x794C7630, 0x2FC12FC1}) {
    EXPECT_FALSE(IsRemoteFileSystemType(local)) << std::hex << local;
  }
  // f_type is a signed long: a magic number with its top bit set may come sign-extended.
  EXPECT_TRUE(IsRemoteFileSystemType(static_cast<int32_t>(0xFF534D42)));
}

TEST(RemoteFileSystemTest, ARootFolderOnTheProcFileSystemIsLocal) {
  UniqueFd fd(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  EXPECT_FALSE(OnRemoteFileSystem(fd.get()));
  EXPECT_FALSE(OnRemoteFileSystem(-1)) << "statfs failing is not remote";
}

}  // namespace
}  // namespace stitchfs::engine
