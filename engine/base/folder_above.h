// FolderAbove: the folder that a folder really lies in, bind mounts included. `..` of a mount's
// root leads to the folder the mount is attached in, not to where the mounted folder lies in
// its own file system: a bind mount of a backup's sub-folder looks like any folder from its
// `..`. For the root of a bind mount of a folder (not of a whole file system), the folder's own
// place is found from /proc/self/mountinfo, through a mount of its whole file system.
#pragma once

#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {

struct Above {
  UniqueFd folder;       // O_PATH; not valid when `dir` is the root of the tree ("/").
  bool crossed = false;  // `dir` is the root of a bind mount: `folder` holds the mounted folder.
};

// The folder holding the open folder `dir`. kNotSupported when `dir` is the root of a bind
// mount whose folder's own place cannot be found (no mount of its whole file system is
// visible); kIOError if /proc cannot be read or a folder cannot be opened.
StatusOr<Above> FolderAbove(int dir);

}  // namespace stitchfs::engine
