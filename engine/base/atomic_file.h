// Durable whole-file writes: temp file, fsync, rename, fsync of the folder.
#pragma once

#include <string>
#include <string_view>

#include "engine/base/status.h"

namespace stitchfs::engine {

// Writes `data` to `dir/name` so that a crash leaves either the old state or the complete new
// file, never a partial one: `dir/.name<TempSuffix()>` is written, fsynced, renamed over
// `name`, then `dir` is fsynced. kIOError (with errno) on any failure; the temp file is removed.
// Temp files of `name` left in `dir` by writers that died (IsLeftoverTemp) are removed first.
Status WriteFileAtomically(const std::string& dir, std::string_view name, std::string_view data);

// fsyncs the folder `dir` (makes a rename or a new entry in it durable).
Status SyncDir(const std::string& dir);

}  // namespace stitchfs::engine
