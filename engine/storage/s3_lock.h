// The `.lock` of a backup being written to object storage: who writes it (host, boot, pid
// and the process's start time), so that a later writer on the same machine can tell that it
// died and take its partial backup over. S3 has no flock: a writer on another machine is
// never judged dead.
#pragma once

#include <string>

namespace stitchfs::engine {

// The `.lock` text of this process writing backup `uuid`.
std::string S3LockText(const std::string& uuid);

// True if `lock` was written by a process of this machine's current boot that is gone.
bool S3LockWriterDied(const std::string& lock);

}  // namespace stitchfs::engine
