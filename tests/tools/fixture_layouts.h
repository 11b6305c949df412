// Fixtures of the backup forms current ClickHouse writes (fixture_layouts.cc).
#pragma once

#include <string>

#include "engine/base/status.h"

namespace stitchfs::tools {

// DIR/checksum (files named by checksum, backup_id), DIR/checksum-inc (an incremental on it),
// DIR/cluster (ON CLUSTER, dedup across shards), DIR/plain (deduplicate_files 0),
// DIR/s3base and DIR/azure (incrementals on DIR/checksum whose locators name S3 without
// credentials, with the copy-credentials marker, and Azure), DIR/packed (version 3), and the
// trees they show under DIR/expected/.
engine::Status Layouts(const std::string& dir);

// DIR/lw: a lightweight snapshot (version 2) whose data files are objects of `bucket` at
// `endpoint` (<object_key>); the objects' bytes under DIR/objects/KEY, to upload there.
engine::Status Lightweight(const std::string& dir, const std::string& endpoint,
                           const std::string& bucket);

}  // namespace stitchfs::tools
