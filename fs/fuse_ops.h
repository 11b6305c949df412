// The low-level FUSE operations: thin adapters that decode a request, make one call into the
// InodeTable or the engine, and reply exactly once.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

namespace stitchfs::fs {

// The operation table; the session's userdata must be a MountState*. Without `xattrs`, the
// extended attribute calls are left to libfuse (ENOSYS), which the kernel then answers itself.
const fuse_lowlevel_ops& Operations(bool xattrs = true);

}  // namespace stitchfs::fs
