// POSIX file helpers: safe opens beneath a backup folder and complete positional reads.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {

// Opens `relative` beneath the folder `dir_fd` for reading, refusing to follow any symlink or
// to leave the folder (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the kernel has it,
// else OpenByComponents).
// Never blocks (O_NONBLOCK: a FIFO put in a file's place opens at once); callers check the
// type of what they opened before reading it.
StatusOr<UniqueFd> OpenBeneath(int dir_fd, const std::string& relative, int extra_flags = 0);

// The same without openat2: `relative` opened one name at a time, each folder with O_NOFOLLOW
// (a symlink anywhere on the way is ELOOP, as with openat2), the last with `flags` |
// O_NOFOLLOW. An empty, "." or ".." name is EXDEV (a path that would not stay beneath).
StatusOr<UniqueFd> OpenByComponents(int dir_fd, const std::string& relative, int flags);

// Opens folder `rel` beneath `root` (empty: root itself), creating missing folders (0755), never
// following a symlink. kIOError naming the folder on failure (ELOOP/ENOTDIR for a symlink).
// `before`, if set, is asked about each folder on the way (its fd, and its path beneath root)
// before anything is made in it; an error it gives stops there.
using BeforeMaking = std::function<Status(int dir, std::string_view path)>;
StatusOr<UniqueFd> MakeDirsBeneath(int root, std::string_view rel,
                                   const BeforeMaking& before = nullptr);

// Writes all of `data` at the fd's position (retrying short writes and EINTR); kIOError naming
// `what` otherwise.
Status WriteFully(int fd, std::string_view data, const std::string& what);

// The whole target of symlink `name` in folder `dir_fd`, however long (`size_hint`, the size an
// lstat gave, only sizes the first try: a link replaced since by one with a longer target, or a
// file system that reports no size, never cuts it short). kIOError (errno) if it cannot be read,
// kInvalidArgument if it is longer than 64 KiB (Linux's are under 4 KiB).
StatusOr<std::string> ReadLinkWhole(int dir_fd, const char* name, size_t size_hint);

// Reads `[offset, offset + dst.size())` of `fd` completely; kBackupDamaged if the file ends first.
Status PreadFully(int fd, uint64_t offset, std::span<char> dst, const std::string& display_name);

}  // namespace stitchfs::engine
