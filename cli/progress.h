// Progress: the terminal's progress bar (engine/base/progress_bar.h) under the names the
// commands use. (Archives being indexed show through the Context's storage: cli/args.cc.)
#pragma once

#include "engine/base/progress_bar.h"

namespace stitchfs::cli {

using Progress = engine::ProgressBar;
using engine::HumanBytes;
using engine::HumanDuration;

}  // namespace stitchfs::cli
