// Hard links in a manifest: which entries are names of one file. The one rule every reader
// (the mount, restore, the manifest checks) applies, so they never disagree with `stitch cat`.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "engine/format/manifest.h"

namespace stitchfs::engine {

// The identity (dev, ino) under which entry `e` claims to share its file with other entries:
// its source identity when its metadata says the source had more than one link, or, for
// manifests written before link counts were recorded (nlink 0), any source identity. nullopt
// for entries that claim no link (no metadata, inode 0, link count 1).
std::optional<std::pair<uint64_t, uint64_t>> LinkClaim(const PosixMeta* meta);
inline std::optional<std::pair<uint64_t, uint64_t>> LinkClaim(const FileEntry& e) {
  return LinkClaim(e.meta ? &*e.meta : nullptr);
}

// True if `a` and `b` can be names of one file: same size, checksum, mode, owner and mtime.
bool SameLinkedFile(const FileEntry& a, const FileEntry& b);
// The same for entries `a` and `b` of `m`, without copying them.
bool SameLinkedFile(const Manifest& m, size_t a, size_t b);

// Entry indexes grouped into hard links: for each entry, the first entry (in name order) of
// its group, or itself. Entries of a legacy group (nlink 0) that disagree are not linked.
// Thread-compatible; computed once per manifest by its users.
std::vector<uint32_t> LinkLeaders(const Manifest& m);

// kBackupDamaged naming both entries if two entries that claim a link by their recorded link
// count (nlink > 1) with one identity disagree in content or attributes: a manifest that
// contradicts itself. OK otherwise.
Status CheckLinks(const Manifest& m);

}  // namespace stitchfs::engine
