#include "engine/base/remote_fs.h"

#include <sys/vfs.h>

#include <algorithm>
#include <array>

namespace stitchfs::engine {

bool IsRemoteFileSystemType(int64_t type) {
  // f_type values (linux/magic.h and the file systems' own headers).
  static constexpr std::array<uint32_t, 18> kRemote = {
      0x6969,      // NFS
      0x517B,      // SMB
      0xFF534D42,  // CIFS
      0xFE534D42,  // SMB2
      0x00C36400,  // Ceph
      0x01021997,  // 9p
      0x5346414F,  // AFS
      0x6B414653,  // kAFS
      0x73757245,  // Coda
      0x564C,      // NCP
      0x65735546,  // FUSE (sshfs, s3fs, GlusterFS, ...)
      0x01161970,  // GFS2
      0x7461636F,  // OCFS2
      0x0BD00BD0,  // Lustre
      0x47504653,  // GPFS
      0x19830326,  // BeeGFS
      0x20030528,  // OrangeFS
      0x786F4256,  // vboxsf
  };
  const auto t = static_cast<uint32_t>(type);
  return std::find(kRemote.begin(), kRemote.end(), t) != kRemote.end();
}

bool OnRemoteFileSystem(int fd) {
  struct statfs s;
  return ::fstatfs(fd, &s) == 0 && IsRemoteFileSystemType(static_cast<int64_t>(s.f_type));
}

}  // namespace stitchfs::engine
