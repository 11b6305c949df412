#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "engine/backends/archive/archive_storage.h"

namespace stitchfs::cli {

void ShowArchiveIndexing() {
  engine::ArchiveStorage::SetIndexProgress(engine::TerminalProgress("index"));
}

}  // namespace stitchfs::cli
