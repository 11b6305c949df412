// A process-wide request to stop: set from a signal handler (SIGINT, SIGTERM), polled by long
// writes, so that a backup stopped by the user unwinds like a failed one (its partial data
// removed, multipart uploads aborted) instead of leaving them behind.
#pragma once

#include "engine/base/status.h"

namespace stitchfs::engine {

// Async-signal-safe.
void RequestStop();
bool StopRequested();
// kIOError (EINTR) "interrupted" once a stop was requested, else OK.
Status CheckStop();

// Installs handlers for SIGINT and SIGTERM that call RequestStop() the first time and restore
// the default action, so a second signal ends the process at once.
void StopOnSignals();

}  // namespace stitchfs::engine
