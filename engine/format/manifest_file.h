// ManifestFile: a parsed Manifest in a flat binary form, for the manifest cache. Native layout:
// meant for the machine that wrote it, not for exchange.
#pragma once

#include <memory>

#include "engine/format/manifest.h"
#include "engine/format/manifest_identity.h"

namespace stitchfs::engine {

class IndexFileReader;

// The file is an index file (engine/base/index_codec.h) of kind "cached manifest".
struct ManifestFile {
  // Writes `m`, tagged with `id`, to `fd` from offset 0. kIOError on failure.
  static Status Write(int fd, const Manifest& m, const ManifestIdentity& id);
  // Reads what Write wrote for `id`. kBackupDamaged on any mismatch: another identity or
  // layout, a wrong length or checksum, an index or name out of bounds, a name that fails
  // CheckRelativePath. kIOError if reading fails.
  static StatusOr<std::unique_ptr<const Manifest>> Read(int fd, const ManifestIdentity& id);

 private:
  // The length of the names section: each record's name and data file name, then each node's
  // name and target.
  static uint64_t NamesBytes(const Manifest& m);
  // The records and nodes of `m` (sized already; its metadata too) read from `in`, their names
  // pointing into `names` (`names_size` bytes, read later): kBackupDamaged if one is out of
  // bounds.
  static Status ReadRecords(IndexFileReader& in, const char* names, uint64_t names_size,
                            ManifestTables& m);
  static Status ReadNodes(IndexFileReader& in, const char* names, uint64_t names_size,
                          ManifestTables& m);
  // The manifest `t` holds if everything the XML reader would check holds in it
  // (manifest_check.cc): every entry and node (CheckEntry, CheckMeta, safe names), hard links,
  // and the indexes complete and in the order lookups rely on (a binary search of a shuffled or
  // partial index would silently miss entries); the content-representative flags are set again
  // from the index, not trusted. nullptr otherwise.
  static std::unique_ptr<const Manifest> Consistent(ManifestTables t);
};

}  // namespace stitchfs::engine
