// The text of a writer's `.lock`: the backup's uuid first (ClickHouse's `.lock` holds just
// that), then "key value" lines: the base the backup is built on (so that prune keeps a base
// a running backup uses) and, in object storage, who writes it (S3LockText).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace stitchfs::engine {

// What a backup being written says of itself in its lock.
struct WriterIntent {
  std::string uuid;
  std::string base_uuid;      // "" for a full backup.
  std::string base_location;  // Where the base was opened (for messages).
};

// "UUID\n" then "base_uuid U\nbase LOCATION\n" when there is a base, then `more` (lines).
std::string LockText(const WriterIntent& w, std::string_view more = "");

struct LockFields {
  std::string uuid;
  std::string base_uuid, base_location;
  std::map<std::string, std::string> other;  // Further "key value" lines.
};

// Parses a lock's text: LockText's, ClickHouse's (a bare uuid, no newline) and older stitch
// S3 locks ("uuid U" as the first line). Never fails: what it cannot read stays empty.
LockFields ParseLockText(std::string_view text);

}  // namespace stitchfs::engine
