// ReadAhead: positional reads of a remote object, fast for streaming readers and cheap for
// random ones. A reader that goes on where it left off gets a stream: ranges fetched ahead of
// it in the background, the window starting at 1 MiB and doubling as it streams up to a cap
// (as mountpoint-s3 does), several ranges in flight. A range can be read while it arrives, so
// ranges can be long (fewer requests) without making the reader wait for a whole one. A read
// elsewhere fetches just its range.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "engine/base/random_access_file.h"
#include "engine/base/status_or.h"
#include "engine/s3/s3_client.h"

namespace stitchfs::engine {

// Fills all of `dst` with the object's bytes from `offset` (the caller never asks past the
// end), or fails. `streaming`: the range is read ahead for a sequential reader (not asked for
// by a random read); then `report` is set, to be told as bytes arrive (SinkReport) and to stop
// the fetch when it returns false.
using RangeFetch = std::function<Status(uint64_t offset, std::span<char> dst, bool streaming,
                                        const SinkReport* report)>;

struct ReadAheadOptions {
  uint64_t first_window = 1 << 20;
  uint64_t max_window = 64 << 20;  // Bytes fetched ahead of a stream at most.
  uint64_t max_chunk = 32 << 20;   // A range request (up to 1.5 times that to end the object).
  size_t max_streams = 4;          // Streams kept per object (several readers at once).
};

// Thread-safe.
class ReadAhead {
 public:
  ReadAhead(uint64_t size, RangeFetch fetch, ReadAheadOptions options = {});
  ~ReadAhead();  // Waits for the ranges in flight.

  // RandomAccessFile's contract: exactly min(dst.size(), size - offset) bytes, or an error
  // (a failed range fails only the reads that need it; a later read fetches it again).
  StatusOr<size_t> ReadAt(uint64_t offset, std::span<char> dst) const;
  // A sequential reader will soon come to `offset` (RandomAccessFile::Prefetch): a stream starts
  // there now, at full width (one max_chunk range), unless one already covers it.
  void Prefetch(uint64_t offset) const;
  // RandomAccessFile::Lend: the range if it lies within one range a stream fetched.
  StatusOr<RandomAccessFile::Loan> Lend(uint64_t offset, size_t n) const;

 private:
  struct Bytes;
  struct Chunk {
    uint64_t offset = 0, length = 0;
    std::shared_ptr<Bytes> bytes;   // Filling while the fetch runs.
    std::shared_future<void> done;  // The fetch ended.
  };
  struct Stream {
    uint64_t id = 0, pos = 0, next_fetch = 0, window = 0, last_use = 0;
    std::deque<Chunk> chunks;
  };

  // The chunk holding `pos`, topping its stream up; starts a stream at `pos` if a read ended
  // there. nullopt: no stream wants `pos` (a random read). Requires mu_.
  std::optional<std::pair<uint64_t, Chunk>> ChunkFor(uint64_t pos) const;
  void TopUp(Stream& s) const;
  // A new stream at `pos` with `window`, the least recently used one dropped beyond
  // max_streams. Requires mu_.
  Stream& NewStream(uint64_t pos, uint64_t window) const;
  void Consumed(uint64_t stream, const Chunk& c, uint64_t end) const;
  void DropStream(uint64_t stream) const;
  // Stops a stream's fetches and waits for them to end.
  static void Stop(Stream& s);

  const uint64_t size_;
  const RangeFetch fetch_;
  const ReadAheadOptions o_;
  mutable std::mutex mu_;
  mutable std::vector<Stream> streams_;
  mutable uint64_t clock_ = 0, next_id_ = 1;
  mutable uint64_t random_end_ = 0;  // Where the last random read ended: a stream starts there.
};

}  // namespace stitchfs::engine
