// WritableFd: a WritableFile over an open file descriptor of this machine: a local backup's data
// files, and the files restore writes.
#pragma once

#include <memory>
#include <string>

#include "engine/base/unique_fd.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// A WritableFile over `fd` (its fd() is `fd`, for in-kernel copies); Append stops with
// kInterrupted once a stop was asked for (CheckStop). `name` is for messages.
std::unique_ptr<WritableFile> WritableFd(UniqueFd fd, std::string name);

}  // namespace stitchfs::engine
