// ContentCheck: the bytes of one file of a backup, checked against its manifest's checksum as
// they are read from the start to the end, so that no reader (stitch cat, restore, the mount)
// hands out a whole file whose bytes are not the ones the backup recorded. On a mismatch it
// names the backup of the chain that holds the bad bytes: the base's part [0, base_size) is
// checked against the prefix checksum the manifest records, the rest is this backup's own.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/base/checksum.h"
#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

// Not thread-safe.
class ContentCheck {
 public:
  // For entry `entry` of the top backup of `chain`, which must outlive this object (or be kept
  // alive by `keep`).
  ContentCheck(const ResolvedBackup& chain, size_t entry, std::shared_ptr<const void> keep = {});

  // The next bytes of the file, in order.
  void Update(std::string_view bytes);
  uint64_t bytes() const { return hasher_.bytes(); }
  uint64_t size() const { return size_; }
  // After exactly size() bytes: OK, or kBackupDamaged naming the backup, the file, the
  // checksums, and the backup(s) holding the bad bytes with their range in the file.
  Status Finish() const;
  // The same for bytes read from a copy of the file, not from the chain: kBackupDamaged saying
  // only how they differ (the length, or both checksums), blaming no backup.
  Status FinishCopy() const;

 private:
  // "" if the bytes read are the file's, else how they differ (the length, or both checksums).
  std::string Difference() const;
  // The backups holding bytes [from, to) of the file, for messages.
  std::string Holders(uint64_t from, uint64_t to) const;

  const ResolvedBackup& chain_;
  std::shared_ptr<const void> keep_;
  size_t entry_;
  uint64_t size_;
  uint64_t base_size_;  // The prefix the manifest records a checksum of (0: none).
  Hasher hasher_;
  Checksum at_base_;  // The digest at base_size_, once reached.
};

// Reads all of `file` through `buf` and checks it as entry `entry` of the top backup of `chain`
// (ContentCheck): OK, kBackupDamaged (the wrong length or bytes), or the read's error.
// `piece`, if set, hears of each piece's length as it is read. A stop asked for (CheckStop)
// ends it with that status. `copy`: `file` is a copy made elsewhere, not the chain's
// (FinishCopy's message). Bytes that fail their checksum when some may have come from a copy
// kept on the way (RandomAccessFile::DropCached) are read once more from the storage (`piece`
// hears only of the first read).
// What a reader that has handed a wrong file's bytes out already (cat, the mount) adds to the
// error once DropCached said some may have come from copies kept on the way.
inline constexpr char kKeptCopiesDropped[] =
    "; some of its bytes may have come from copies kept on the way (the object store's block "
    "cache or read-ahead), now dropped";

Status CheckFile(const ResolvedBackup& chain, size_t entry, const RandomAccessFile& file,
                 std::span<char> buf, const std::function<void(uint64_t)>& piece = {},
                 bool copy = false);

}  // namespace stitchfs::engine
