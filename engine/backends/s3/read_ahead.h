// ReadAhead: positional reads of a remote object, fast for streaming readers and cheap for
// random ones. A reader that goes on where it left off gets a stream: ranges fetched ahead of
// it in the background, the window starting at 1 MiB and doubling as it streams up to a cap
// (as mountpoint-s3 does), several ranges in flight. A range can be read while it arrives, so
// ranges can be long (fewer requests) without making the reader wait for a whole one. A read
// elsewhere fetches just its range.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "engine/backends/s3/s3_client.h"
#include "engine/base/random_access_file.h"
#include "engine/base/status_or.h"

namespace stitchfs::engine {

// A streaming fetch's reader: `report` is told as bytes arrive (SinkReport; false stops the
// fetch), and once `*cancel` is set the fetch should end as soon as it can, also while it
// waits for an answer or to retry (its range is no longer wanted).
struct StreamSink {
  const SinkReport* report = nullptr;
  const std::atomic<bool>* cancel = nullptr;
};

// Fills all of `dst` with the object's bytes from `offset` (the caller never asks past the
// end), or fails. `stream`: set when the range is read ahead for a sequential reader; null for
// a random read, whose caller waits for it.
using RangeFetch =
    std::function<Status(uint64_t offset, std::span<char> dst, const StreamSink* stream)>;

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
  ~ReadAhead();  // Stops the ranges in flight and waits for them to end.

  // RandomAccessFile's contract: exactly min(dst.size(), size - offset) bytes, or an error
  // (a failed range fails only the reads that need it; a later read fetches it again).
  StatusOr<size_t> ReadAt(uint64_t offset, std::span<char> dst) const;
  // A sequential reader will soon read about `length` bytes from `offset`
  // (RandomAccessFile::Prefetch): a stream starts there now, its first range as long as that
  // (from first_window up to max_chunk), unless one already covers it.
  void Prefetch(uint64_t offset, uint64_t length) const;
  // RandomAccessFile::Lend: the range if it lies within one range a stream fetched.
  StatusOr<RandomAccessFile::Loan> Lend(uint64_t offset, size_t n) const;
  // Drops every stream and the bytes it fetched (RandomAccessFile::DropCached); true if one
  // held any. Reads after it fetch anew.
  bool Forget() const;

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

  // The private methods require mu_. Chunks they take out of streams go to `retired`, stopped,
  // for the caller to destroy after releasing mu_: a chunk's future is std::async's, whose last
  // copy waits for its fetch to end.

  // The chunk holding `pos`, topping its stream up; starts a stream at `pos` if a read ended
  // there. nullopt: no stream wants `pos` (a random read).
  std::optional<std::pair<uint64_t, Chunk>> ChunkFor(uint64_t pos,
                                                     std::vector<Chunk>* retired) const;
  void TopUp(Stream& s) const;
  // A new stream at `pos` with `window`, the least recently used one dropped beyond
  // max_streams.
  Stream& NewStream(uint64_t pos, uint64_t window, std::vector<Chunk>* retired) const;
  // A reader of `stream` got the bytes before `end` from a chunk ending at `chunk_end`.
  void Consumed(uint64_t stream, uint64_t chunk_end, uint64_t end,
                std::vector<Chunk>* retired) const;
  void DropStream(uint64_t stream, std::vector<Chunk>* retired) const;
  static void Retire(Stream& s, std::vector<Chunk>* retired);
  static void RetireFront(Stream& s, std::vector<Chunk>* retired);

  const uint64_t size_;
  const RangeFetch fetch_;
  const ReadAheadOptions o_;
  mutable std::mutex mu_;
  mutable std::vector<Stream> streams_;
  mutable uint64_t clock_ = 0, next_id_ = 1;
  mutable uint64_t random_end_ = 0;  // Where the last random read ended: a stream starts there.
};

}  // namespace stitchfs::engine
