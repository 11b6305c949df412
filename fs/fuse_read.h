// The READ handler: a file's bytes, checked on their way out (fs/sequential_check.h).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

namespace stitchfs::fs {

// Replies: buf | err. A read that fails is tried once more where the namespace now reads the
// file otherwise (Namespace::ReadFailed).
void OnRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*);

}  // namespace stitchfs::fs
