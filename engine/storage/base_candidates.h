// Where the base a backup's `<base_backup>` locator names may be, in the order a reader tries
// them. The "primary" candidate is the place the locator means to ClickHouse: an absolute
// File() path; a relative File() path under the backups root; a Disk() path in its disk; an
// S3 URL. Before it comes the same name beside the backup (a chain copied or moved whole reads
// its own bases, not the original's); after it, relative File() paths (which mean "under the
// server's backups root", which a backup alone does not record) are looked for in every folder
// above the backup, and absolute ones where a chain moved whole would have put them. A reader
// accepts a candidate other than the primary one only when the backup there has the uuid the
// child records (`<base_backup_uuid>`), so the search never picks another backup than the one
// the locator meant; the primary one's errors are the ones reported.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/location/locator.h"

namespace stitchfs::engine {

struct BaseCandidate {
  std::string location;  // In its one spelling (NormalLocation).
  std::string why;       // Why it is looked at, for `stitch info` and messages.
  bool primary = false;  // What the locator means to ClickHouse itself.
};

struct BaseSearch {
  std::vector<BaseCandidate> candidates;  // In order; at most one primary.
  // Why there is no primary candidate (a Disk() whose disk is not mapped), else "".
  std::string no_primary;
};

// The candidates for the base named by `locator` in the backup at `child` (a folder, archive
// or S3 prefix, in its one spelling). `override` (--base) not empty: that location alone.
// Errors: kBackupDamaged (a locator that does not parse, an S3 URL that names no bucket:
// the manifest's fault), kNotSupported (other engines, S3 argument counts, named
// collections), kInsecurePath (a Disk() path climbing out of its disk); messages show the
// locator without its secrets (RedactLocator).
StatusOr<BaseSearch> FindBaseCandidates(std::string_view locator, const std::string& child,
                                        const LocatorContext& context,
                                        const std::string& override = "");

// True if a candidate other than the primary one may be read as the base of `child`: in object
// storage always (the uuid decides); on this machine only if `candidate` belongs to the user who
// owns `child`, or to root, so that a backup planted with a copied uuid in a folder others may
// write (/tmp) is never taken.
bool MayStandIn(const std::string& child, const std::string& candidate);

// What `stitch info` says of how the base of `child` was found at `found`: the `why` of the
// candidate at that location ("" if it is none of them).
std::string WhyBaseFound(std::string_view locator, const std::string& child,
                         const std::string& found, const LocatorContext& context,
                         const std::string& override = "");

}  // namespace stitchfs::engine
