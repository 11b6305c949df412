// ManifestCache: parsed manifests kept in a flat binary form in a per-user cache folder, keyed
// by the `.backup`'s identity, so that opening a large backup again reads one flat file instead
// of parsing XML. Nothing is written into backup folders. A cached copy is used only if its
// identity, format, length and checksum match and every name in it passes the path checks;
// anything else is a miss (the manifest is parsed, as without a cache).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/shared_bytes.h"
#include "engine/format/manifest.h"
#include "engine/format/manifest_identity.h"

namespace stitchfs::engine {

// Thread-safe (no state but the folder).
class ManifestCache {
 public:
  // `dir` is created (0700) on first store. At most `max_bytes` of cached manifests are kept;
  // the least recently used go first.
  ManifestCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_(max_bytes) {}

  // The per-user cache, for the front ends to pass in options (the engine never looks for it):
  // $STITCH_CACHE_DIR, else $XDG_CACHE_HOME/stitchfs, else $HOME/.cache/stitchfs; nullptr when
  // STITCH_CACHE_DIR is "off" or no folder is known. $STITCH_CACHE_MB bounds it (default 4096).
  // Trimmed (Trim) when first asked for, at most once an hour (StartTrimDue).
  static const ManifestCache* Default();

  // Manifests smaller than this are parsed each time (parsing them is as fast as loading).
  static constexpr uint64_t kMinManifestBytes = 1 << 20;

  // The manifest cached for `id`, or nullptr (a miss).
  std::unique_ptr<const Manifest> Load(const ManifestIdentity& id) const;
  // Saves `m` for `id` (best effort: failures leave no file behind and are not reported).
  // Not a manifest whose base locator or endpoint holds a credential (LocatorHasCredentials):
  // no cache file holds a secret, and one kept without it could not open its base.
  void Store(const ManifestIdentity& id, const Manifest& m) const;

  // Resolved indexes (ResolvedIndex) of backups, by a key of the caller's: built for backups
  // that have none of their own, copied for those that do so that they are mapped rather than
  // read into memory (the same rules: best effort, least recently used go first). Load gives
  // nullopt on a miss, else the file mapped (cache files are replaced, never cut short); Drop
  // removes one found stale.
  std::optional<SharedBytes> LoadIndex(std::string_view key) const;
  void StoreIndex(std::string_view key, std::string_view bytes) const;
  void DropIndex(std::string_view key) const;

  const std::string& dir() const { return dir_; }
  // Removes the temporary files of writers that died and the least recently used files beyond
  // max_, counting the temporary files being written (TrimCacheFolder). Default() calls it
  // once, at the start of a process; every store calls it.
  void Trim() const;

 private:
  std::string FileFor(const ManifestIdentity& id) const;
  std::string IndexFileFor(std::string_view key) const;
  // Writes a new file at `path` with `write(fd)`, then renames it into place; false on failure.
  bool StoreFile(const std::string& path, const std::function<bool(int)>& write) const;

  std::string dir_;
  uint64_t max_;
};

}  // namespace stitchfs::engine
