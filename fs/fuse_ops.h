// The low-level FUSE operations: thin adapters that decode a request, ask the mount's Namespace,
// and reply exactly once (errors through engine::ErrnoFor).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

namespace stitchfs::fs {

// The operation table; the session's userdata must be a MountContext* (fs/namespace.h). Without
// `xattrs`, the extended attribute calls are left to libfuse (ENOSYS), which the kernel then
// answers itself.
const fuse_lowlevel_ops& Operations(bool xattrs = true);

}  // namespace stitchfs::fs
