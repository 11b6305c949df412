// StoreIndex: the backups of a store as a store mount numbers and names them. One slot per
// generation of a backup folder; a slot number is never reused, so a mount can derive inode
// numbers from it. Rescans (at most once a second; the I/O outside the caller's lock) notice
// backups that appear, go, or are replaced in place, with ScanStore's rule (the one of `stitch
// log` and `stitch prune`); the index resolves the names a store mount shows: backups by folder
// name, `latest`, `at/<time>` and `by-uuid/<uuid>`. FUSE-free.
//
// Replacement rules: a folder whose `.backup` (or the folder itself) has another identity than
// its slot's is read again. The same backup rewritten (same uuid and timestamp: prune's
// flattening) keeps its slot, as long as it shows the same content (Show); any other backup
// gets a new slot, and the old one retires for good. A folder whose header cannot be read (a
// damaged manifest, a uuid with '/', a timestamp "..") gets a slot with that error: it is
// listed by name but never resolved by latest, at/ or by-uuid/.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/civil_time.h"
#include "engine/storage/backup.h"
#include "engine/storage/store.h"

namespace stitchfs::engine {

// One generation of one backup folder of a store.
struct StoreSlot {
  std::string name;  // Folder name inside the store.
  std::string path;  // Absolute.
  // The folder and the `.backup` the header was read from.
  FolderIdentity folder;
  ManifestIdentity manifest;
  // From the header: empty when it could not be read (a damaged manifest, a hostile uuid or
  // timestamp), and then `error` says why. The timestamp as written, "YYYY-MM-DD hh:mm:ss".
  std::string uuid;
  std::string timestamp;
  CivilSeconds time = 0;
  Status error;
  bool present = true;  // False once retired: the folder went, or another backup took its place.
  // Manifest::ContentSignature() of what the slot has shown (Show); 0: nothing yet.
  uint64_t signature = 0;
  bool has_header() const { return !uuid.empty(); }
};

// What one rescan changed.
struct StoreChanges {
  bool scanned = false;  // A scan took place (backups outside the store may have changed too).
  // Slots that retired or whose folder was rewritten in place: whatever was opened from them
  // is stale.
  std::vector<uint64_t> reset;
};

// Thread-compatible: every call needs the caller's mutex held (Rescan releases it while it
// reads the store, so requests for other backups are not held up by a slow or hostile store).
class StoreIndex {
 public:
  using Clock = std::function<int64_t()>;  // Nanoseconds since the epoch.
  using Log = std::function<void(const std::string&)>;

  // An empty index of the store at `store`, read through `storage` (REQUIRES: not null); the
  // first Rescan fills it. `clock` (default: the system clock) times rescans and changes; `log`
  // receives a line when the store cannot be read.
  StoreIndex(std::string store, std::shared_ptr<const Storage> storage, Clock clock = {},
             Log log = {});

  // Reads the store and merges what it finds, if the storage's StoreRescanNs have passed since
  // the last scan
  // (always with `force`, or the first time), unless another thread is scanning right now. A
  // store that cannot be read because of an I/O error (EMFILE, EIO, ...) keeps what was known;
  // a store that is gone has no backups. REQUIRES: `lock` holds the mutex that guards this
  // index; it is released during the I/O and held again on return.
  StoreChanges Rescan(std::unique_lock<std::mutex>& lock, bool force);

  // Slots are numbered 1..size(); retired ones stay. nullptr for any other number. The
  // pointer stays valid for the index's life (what it points to changes under Rescan, Show).
  size_t size() const { return slots_.size(); }
  const StoreSlot* slot(uint64_t k) const;

  // Each lookup gives a present slot, or 0 if there is none.
  uint64_t Named(std::string_view name) const;     // The folder `name`.
  uint64_t AtPath(const std::string& path) const;  // The folder at absolute `path`.
  // Slots with a readable header only: the newest by (timestamp, name), the newest not newer
  // than the end of the period `name` names (engine::PeriodEnd; 0 if it names none), the last
  // slot with `uuid`, and the first one (stable while that slot stays: for inode numbers).
  uint64_t Latest() const;
  uint64_t At(std::string_view name) const;
  uint64_t ByUuid(std::string_view uuid) const;
  uint64_t FirstWithUuid(std::string_view uuid) const;

  // Every generation has a name of its own, "<folder name>@<k>", which always means slot k:
  // links to it (`latest`, `at/`, `by-uuid/`) never lead into another backup that took the
  // folder's place while they were followed (a retired generation is gone). Generation(k)
  // REQUIRES 1 <= k <= size(); OfGeneration gives the present slot such a name means, or 0.
  std::string Generation(uint64_t k) const;
  uint64_t OfGeneration(std::string_view generation) const;

  // Listing order: present slots by folder name (the store's root), and present slots with a
  // readable header by slot number (at/ and by-uuid/).
  std::vector<uint64_t> ByName() const;
  std::vector<uint64_t> WithHeader() const;

  // Records that slot `k`, just opened, shows content with `signature`. True if it may show
  // that under its slot: the first content it shows, or the same again. Otherwise the same
  // backup was rewritten with other content: slot `k` retires for good, its folder gets a new
  // slot with the same header, and the answer is false. REQUIRES: slot k is present.
  bool Show(uint64_t k, uint64_t signature);

  // When the index was made, and when the set of present backups last changed (clock time).
  int64_t created_ns() const { return created_ns_; }
  int64_t changed_ns() const { return changed_ns_; }
  // Changes whenever a listing of the index would: a slot added, retired or back, a folder
  // rewritten in place (what the store's own folders show is the same for the same version).
  uint64_t version() const { return version_; }

 private:
  struct Scanned {  // One folder as a scan found it.
    StoreFolder folder;
    bool known = false;  // Same folder and manifest as its slot: no header read.
    StatusOr<ManifestHeader> header = ManifestHeader{};
  };
  // Lists the store and reads the headers that are new; nullopt to keep what is known.
  // REQUIRES: lock held on entry and on return; released in between.
  std::optional<std::vector<Scanned>> Scan(std::unique_lock<std::mutex>& lock);
  bool Known(const StoreFolder& f) const;
  StoreChanges Merge(const std::vector<Scanned>& scanned, int64_t now);
  void MergeOne(const Scanned& sc, int64_t now, StoreChanges* changes);
  uint64_t Add(StoreSlot s, int64_t now);  // A new present slot for its name.
  void Reindex();                          // The uuid and path maps, from the present slots.
  uint64_t Newest(CivilSeconds limit) const;

  const std::string store_;
  const std::shared_ptr<const Storage> storage_;
  const Clock clock_;
  const Log log_;
  std::deque<StoreSlot> slots_;                                 // [k - 1]; references stay valid.
  std::map<std::string, uint64_t, std::less<>> last_of_name_;   // Newest slot of each name.
  std::map<std::string, uint64_t, std::less<>> first_of_uuid_;  // Present slots only.
  std::map<std::string, uint64_t> at_path_;                     // Present slots only.
  std::optional<int64_t> last_scan_ns_;
  bool scanning_ = false;
  const int64_t created_ns_;
  int64_t changed_ns_;
  uint64_t version_ = 1;
};

}  // namespace stitchfs::engine
