// Names of temporary files that say which process wrote them, so that a later process can
// tell the leftover of a writer that died (killed midway) from a file still being written, and
// remove the one without ever touching the other.
#pragma once

#include <string>
#include <string_view>

namespace stitchfs::engine {

// A suffix for a new temporary file of this process, unique within it (thread-safe):
// ".tmp-<pid>-<start>-<scope>-<n>": <start> is when the process started (clock ticks after
// boot, /proc/PID/stat), <scope> 16 hex digits naming this boot and pid namespace.
std::string TempSuffix();

enum class TempOwner {
  kNotTemp,  // No ".tmp" in the name: not a temporary file.
  kAlive,    // Written by a process of this boot and pid namespace that still runs.
  kDead,     // Written by a process of this boot and pid namespace that is gone.
  kUnknown,  // Cannot be told: another boot, pid namespace or machine, or a name without
             // the writer's start and scope (written by an older stitchfs).
};

// Who wrote the file named `name` (a file name, not a path).
TempOwner OwnerOfTemp(std::string_view name);

}  // namespace stitchfs::engine
