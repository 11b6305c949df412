// ManifestFile: a parsed Manifest in a flat binary form, for the manifest cache. Native layout:
// meant for the machine that wrote it, not for exchange. Its sections are the ManifestTables
// themselves, so Read maps the file and uses them where they are.
#pragma once

#include <memory>

#include "engine/format/manifest.h"
#include "engine/format/manifest_identity.h"

namespace stitchfs::engine {

// The file is an index file (engine/base/index_codec.h) of kind "cached manifest".
struct ManifestFile {
  // Writes `m`, tagged with `id`, to `fd` from offset 0. kIOError on failure.
  static Status Write(int fd, const Manifest& m, const ManifestIdentity& id);
  // What Write wrote for `id`, mapped (`fd` must stay a file that is replaced, never cut
  // short, as the cache's are). kBackupDamaged on any mismatch: not a regular file, another
  // identity or layout, a wrong length or checksum, an index or name out of bounds, a name that
  // fails CheckRelativePath. kIOError if it cannot be mapped.
  static StatusOr<std::unique_ptr<const Manifest>> Read(int fd, const ManifestIdentity& id);

 private:
  // The manifest `t` holds if everything the XML reader would check holds in it
  // (manifest_check.cc): every entry and node (CheckEntry, CheckMeta, safe names), hard links,
  // and the indexes complete and in the order lookups rely on (a binary search of a shuffled or
  // partial index would silently miss entries), and the content-representative flags those the
  // index gives (checked, not trusted). nullptr otherwise.
  static std::unique_ptr<const Manifest> Consistent(ManifestTables t);
};

}  // namespace stitchfs::engine
