// RemoteFileSystem: whether a folder is on a file system whose times a server sets (NFS, SMB,
// FUSE, cluster file systems), by statfs's f_type. The files cache compares such times with this
// machine's clock, so it allows more for them. FUSE-free.
#pragma once

#include <cstdint>

namespace stitchfs::engine {

// True if f_type `type` (statfs) is a network, cluster or FUSE file system.
bool IsRemoteFileSystemType(int64_t type);

// True if open folder `fd` is on such a file system (false if statfs fails).
bool OnRemoteFileSystem(int fd);

}  // namespace stitchfs::engine
