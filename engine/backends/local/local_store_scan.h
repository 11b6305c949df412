// The local room's part of a store: which entries of a folder are backups (ScanLocalStore) and
// the identity of a folder's `.backup` now (StatLocalManifest). LocalStorage answers
// Storage::ScanStore and Storage::StatManifest with them; nothing else reads a store folder.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/format/manifest_identity.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// What identifies the file `st` describes as one version of a `.backup`.
ManifestIdentity LocalIdentityOf(const struct stat& st);

// The backups of the local folder `store` by name: real sub-folders (a symlink in the store is
// not followed), not starting with a dot (prune's work folders), holding a `.backup` that is a
// regular file (not a symlink, FIFO or folder), and regular files named as archives
// (LocationOf(name).is_archive(): whether one holds a `.backup` is learnt when it is opened).
// Folders without one (unfinished backups with only a `.lock`, other folders) are skipped.
// Sorted by name. Never blocks on what the store holds. kIOError if `store` cannot be read,
// kBackupNotFound if it is not a folder.
StatusOr<std::vector<StoreFolder>> ScanLocalStore(const std::string& store);

// The identity of `dir`/.backup now, or nullopt if there is no regular file of that name (a
// symlink, a FIFO or a folder named `.backup` is not a manifest); kIOError if it cannot be
// stat'ed for another reason than its absence. Never blocks.
StatusOr<std::optional<ManifestIdentity>> StatLocalManifest(const std::string& dir);

}  // namespace stitchfs::engine
