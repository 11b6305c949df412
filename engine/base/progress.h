// ProgressSink: where long work reports how far it has come, for a front end to show (a bar on
// a terminal) or not. Engine-neutral: the engine reports, the front end draws.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace stitchfs::engine {

// `task` names the work (an archive being indexed, "flatten"); `done` of `total` bytes are
// through; done >= total ends the task. May be called from any thread the work runs on.
using ProgressSink = std::function<void(const std::string& task, uint64_t done, uint64_t total)>;

}  // namespace stitchfs::engine
