// SourceTree: the walk of a folder to back up: regular files, directories and symlinks, never
// following symlinks, sorted by name; everything else is skipped and reported.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "engine/base/posix_meta.h"
#include "engine/base/status_or.h"
#include "engine/format/manifest.h"

namespace stitchfs::engine {

struct SourceFile {
  std::string name;  // Relative, normalized.
  struct stat st;    // lstat at walk time.
};

struct SourceNode {
  NodeType type;
  std::string name;
  std::string target;  // Symlinks.
  PosixMeta meta;
};

struct SourceTree {
  std::vector<SourceFile> files;      // Sorted by name (byte order).
  std::vector<SourceNode> nodes;      // Directories and symlinks, sorted by name.
  std::vector<std::string> warnings;  // Skipped sockets, fifos, devices.
  std::vector<MissingFile> missing;   // Unreadable folders, names XML cannot carry, ...
  uint64_t total_bytes = 0;
  // Devices (st_dev) of the folders on a local file system (engine/base/remote_fs.h): a file
  // on any other device (a remote one, or one bind-mounted alone) is taken as remote.
  std::vector<uint64_t> local_devices;
};

// Walks `root`. kIOError if `root` itself cannot be opened; problems below it are collected.
// Nothing outside `root` is ever read: no symlink is followed, folders are opened beneath it.
// `root_fd` is an open folder; the caller keeps it (and reads the files beneath the same fd).
StatusOr<SourceTree> WalkSource(int root_fd);

// The short reason a Status gives for leaving a source file out ("No such file or directory").
std::string ReasonOf(const Status& s);

// Metadata of `st` as recorded in manifests.
PosixMeta MetaFromStat(const struct stat& st);

}  // namespace stitchfs::engine
