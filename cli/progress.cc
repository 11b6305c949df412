#include "cli/progress.h"

#include "engine/storage/archive_storage.h"

namespace stitchfs::cli {

void ShowArchiveIndexing() {
  engine::ArchiveStorage::SetIndexProgress(engine::TerminalProgress("index"));
}

}  // namespace stitchfs::cli
