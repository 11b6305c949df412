// TarScanner: the members of a tar stream (ustar, pax and GNU headers, as libarchive, GNU tar
// and ClickHouse's pax_restricted writer produce them), from its bytes in order: each regular
// file's name, size and the offset of its data in the stream. A driver that can seek (a plain
// tar file) skips member data instead of feeding it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/backends/archive/archive_index.h"
#include "engine/backends/archive/index_budget.h"
#include "engine/base/status.h"

namespace stitchfs::engine {

// Not thread-safe.
class TarScanner {
 public:
  // `display` names the archive in errors.
  explicit TarScanner(std::string display) : display_(std::move(display)) {}

  // Members found are counted against `budget`'s index bytes (null: no limit), and an entry
  // whose data would end past `stream_limit` (the most the stream can hold) is refused at its
  // header, kBackupDamaged naming it: a pax size of 2^62 costs nothing.
  void Limit(IndexBudget* budget, uint64_t stream_limit) {
    budget_ = budget;
    stream_limit_ = stream_limit;
  }

  // The next bytes of the stream. kBackupDamaged for a header whose checksum or fields are
  // wrong, or a sparse member; nothing is consumed after the end-of-archive block.
  Status Feed(std::span<const char> data);
  // Member data (and padding) still to come before the next header, which a driver may Skip.
  uint64_t skippable() const { return state_ == State::kData ? remaining_ : 0; }
  void Skip(uint64_t n);
  // The stream ended here: kBackupDamaged if inside a header or a member's data.
  Status Finish() const;
  bool ended() const { return state_ == State::kEnd; }
  uint64_t position() const { return pos_; }
  // Regular files found so far (stream 0, in stream order).
  std::vector<ArchiveMember>& members() { return members_; }
  // The name of the last entry whose header was read ("" before the first), for messages.
  const std::string& last_name() const { return last_name_; }

 private:
  enum class State { kHeader, kData, kMeta, kEnd };
  Status Header();
  Status Meta();
  Status Damaged(const std::string& what) const;

  std::string display_;
  State state_ = State::kHeader;
  uint64_t pos_ = 0;        // Stream bytes consumed.
  uint64_t remaining_ = 0;  // kData: bytes to pass; kMeta: bytes to collect, padding included.
  uint64_t meta_size_ = 0;  // kMeta: bytes of the meta entry without padding.
  char meta_type_ = 0;
  std::string buffer_;      // The header or meta entry being collected.
  std::string next_name_;   // From a pax `path` or a GNU long name, for the next header.
  int64_t next_size_ = -1;  // From a pax `size`.
  std::vector<ArchiveMember> members_;
  std::string last_name_;
  IndexBudget* budget_ = nullptr;
  uint64_t stream_limit_ = UINT64_MAX;
};

}  // namespace stitchfs::engine
