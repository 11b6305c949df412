// Progress: the terminal's progress bar (engine/base/progress_bar.h) under the names the
// commands use, and the bars of archives being indexed.
#pragma once

#include "engine/base/progress_bar.h"

namespace stitchfs::cli {

using Progress = engine::ProgressBar;
using engine::HumanBytes;
using engine::HumanDuration;

// Shows each archive being indexed (ArchiveStorage) as a progress bar on stderr when it is a
// terminal. Called once at start.
void ShowArchiveIndexing();

}  // namespace stitchfs::cli
