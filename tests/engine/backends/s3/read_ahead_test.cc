#include "engine/backends/s3/read_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/base/concat_file.h"

namespace stitchfs::engine {
namespace {

// An object of `size` bytes whose byte i is i * 7 % 251, fetched by a counting function that
// fills a range in 256 KiB pieces, reporting each to a stream's SinkReport. A fetch reaching
// object offset `hold_at` (and below `hold_until`) waits there until `release`, or until its
// stream sink cancels it; one reaching `fail_at` fails there.
struct FakeObject {
  uint64_t size;
  std::atomic<int> fetches{0}, fail_next{0};
  std::atomic<uint64_t> bytes{0}, hold_at{UINT64_MAX}, hold_until{UINT64_MAX}, fail_at{UINT64_MAX};
  std::atomic<bool> release{false}, stopped{false}, cancelled{false};
  bool quiet = false;  // Reports nothing (as a range read from the block cache).

  RangeFetch Fetch() {
    return [this](uint64_t off, std::span<char> dst, const StreamSink* stream) -> Status {
      const SinkReport* report = stream ? stream->report : nullptr;
      ++fetches;
      if (fail_next > 0) {
        --fail_next;
        return Status::IOError("injected", EIO);
      }
      EXPECT_LE(off + dst.size(), size);
      for (size_t done = 0; done < dst.size();) {
        const size_t piece = std::min<size_t>(256 << 10, dst.size() - done);
        while (off + done >= hold_at && off + done < hold_until && !release) {
          if (stream && stream->cancel->load()) {  // As S3Client does, within about a second.
            cancelled = true;
            return Status::IOError("cancelled", ECANCELED);
          }
          std::this_thread::yield();
        }
        if (off + done >= fail_at) return Status::IOError("injected midway", EIO);
        for (size_t i = done; i < done + piece; ++i)
          dst[i] = static_cast<char>((off + i) * 7 % 251);
        done += piece;
        bytes += piece;
        if (report && !quiet && !(*report)(done, size)) {
          stopped = true;
          return Status::IOError("stopped", EIO);
        }
      }
      return Status::OK();
    };
  }
  static bool Right(uint64_t off, const std::string& got) {
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != static_cast<char>((off + i) * 7 % 251)) return false;
    }
    return true;
  }
};

TEST(ReadAheadTest, StreamsWithAGrowingWindow) {
  FakeObject obj{100 << 20};
  ReadAhead r(obj.size, obj.Fetch());
  std::string buf(128 << 10, '\0');
  for (uint64_t off = 0; off < obj.size; off += buf.size()) {
    auto n = r.ReadAt(off, {buf.data(), buf.size()});
    ASSERT_TRUE(n.ok());
    ASSERT_EQ(*n, buf.size());
    ASSERT_TRUE(FakeObject::Right(off, buf)) << off;
  }
  // 800 reads of 128 KiB went out as far fewer, larger ranges, and nothing twice.
  EXPECT_LT(obj.fetches.load(), 40);
  EXPECT_EQ(obj.bytes.load(), obj.size);
}

TEST(ReadAheadTest, RandomReadsFetchOnlyWhatTheyAsk) {
  FakeObject obj{64 << 20};
  ReadAhead r(obj.size, obj.Fetch());
  std::string buf(4096, '\0');
  for (uint64_t off : {5000000ull, 100ull, 33000000ull, 60000000ull}) {
    auto n = r.ReadAt(off, {buf.data(), buf.size()});
    ASSERT_TRUE(n.ok());
    EXPECT_TRUE(FakeObject::Right(off, buf));
  }
  EXPECT_EQ(obj.bytes.load(), 4u * 4096);
  auto tail = r.ReadAt(obj.size - 10, {buf.data(), buf.size()});
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, 10u);
  EXPECT_EQ(*r.ReadAt(obj.size, {buf.data(), buf.size()}), 0u);
}

TEST(ReadAheadTest, AFailedRangeFailsOnceThenIsFetchedAgain) {
  FakeObject obj{8 << 20};
  ReadAhead r(obj.size, obj.Fetch());
  std::string buf(64 << 10, '\0');
  obj.fail_next = 1;
  EXPECT_EQ(r.ReadAt(0, {buf.data(), buf.size()}).status().code(), ErrorCode::kIOError);
  auto n = r.ReadAt(0, {buf.data(), buf.size()});
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(FakeObject::Right(0, buf));
}

TEST(ReadAheadTest, ForgetDropsWhatStreamsFetched) {
  FakeObject obj{16 << 20};
  ReadAhead r(obj.size, obj.Fetch());
  EXPECT_FALSE(r.Forget()) << "nothing fetched yet";
  std::string buf(128 << 10, '\0');
  for (uint64_t off = 0; off < (4 << 20); off += buf.size()) {
    ASSERT_TRUE(r.ReadAt(off, {buf.data(), buf.size()}).ok());
  }
  ASSERT_FALSE(r.Lend(4 << 20, 4096)->bytes.empty()) << "the stream fetched ahead";
  EXPECT_TRUE(r.Forget());
  EXPECT_TRUE(r.Lend(4 << 20, 4096)->bytes.empty()) << "nothing is lent from before";
  const uint64_t before = obj.bytes;
  auto n = r.ReadAt(0, {buf.data(), buf.size()});
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(FakeObject::Right(0, buf));
  EXPECT_GT(obj.bytes.load(), before) << "fetched again";
}

TEST(ReadAheadTest, ConcurrentReadersGetTheirBytes) {
  FakeObject obj{32 << 20};
  ReadAhead r(obj.size, obj.Fetch());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::string buf(100000 + t * 777, '\0');
      for (uint64_t off = t * 1000; off < obj.size; off += buf.size()) {
        auto n = r.ReadAt(off, {buf.data(), buf.size()});
        if (!n.ok() || !FakeObject::Right(off, buf.substr(0, *n))) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace stitchfs::engine

namespace stitchfs::engine {
namespace {

// A stitched file's reader about to enter the next segment hints it (ConcatFile), and the
// object's read-ahead starts there with one full-width range, which the reads then use.
TEST(ReadAheadTest, PrefetchStartsAFullWidthStreamTheReaderThenUses) {
  FakeObject obj{40 << 20};
  ReadAhead r(obj.size, obj.Fetch());
  r.Prefetch(0, obj.size);
  r.Prefetch(0, obj.size);  // Once is enough.
  std::string buf(128 << 10, '\0');
  for (uint64_t off = 0; off < (16 << 20); off += buf.size()) {
    ASSERT_TRUE(r.ReadAt(off, {buf.data(), buf.size()}).ok());
    ASSERT_TRUE(FakeObject::Right(off, buf)) << off;
  }
  // The first 16 MiB came in one range; what followed was read ahead in 16 MiB ranges.
  EXPECT_LE(obj.fetches.load(), 3);
}

class HintedFile final : public RandomAccessFile {
 public:
  explicit HintedFile(uint64_t size) : size_(size) {}
  uint64_t size() const override { return size_; }
  void Prefetch(uint64_t offset, uint64_t length) const override {
    hints.push_back(offset);
    hint_lengths.push_back(length);
  }
  mutable std::vector<uint64_t> hints, hint_lengths;

 protected:
  Status ReadExact(uint64_t, std::span<char> dst) const override {
    std::memset(dst.data(), 'x', dst.size());
    return Status::OK();
  }

 private:
  uint64_t size_;
};

TEST(ConcatPrefetchTest, StreamingReadsNearASegmentEndHintTheNext) {
  auto a = std::make_shared<HintedFile>(32 << 20), b = std::make_shared<HintedFile>(32 << 20);
  ConcatFile f({{a, 0, 20 << 20}, {b, 5 << 20, 20 << 20}});
  std::string buf(128 << 10, '\0');
  ASSERT_TRUE(f.ReadAt(0, buf).ok());  // Far from the end: no hint.
  EXPECT_TRUE(b->hints.empty());
  std::string small(4096, '\0');
  ASSERT_TRUE(f.ReadAt((20 << 20) - 8192, small).ok());  // Small and random: no hint.
  EXPECT_TRUE(b->hints.empty());
  ASSERT_TRUE(f.ReadAt((15 << 20), buf).ok());
  ASSERT_TRUE(f.ReadAt((15 << 20) + buf.size(), buf).ok());
  ASSERT_EQ(b->hints.size(), 1u);  // Once, at where segment 2 starts in its file.
  EXPECT_EQ(b->hints[0], uint64_t{5} << 20);
  EXPECT_EQ(b->hint_lengths[0], uint64_t{20} << 20);  // Only the segment is wanted.
}

}  // namespace
}  // namespace stitchfs::engine

namespace stitchfs::engine {
namespace {

// A streaming reader borrows the bytes a range brought instead of copying them; a random read,
// or one across two ranges, gets no loan (and reads with ReadAt).
TEST(ReadAheadTest, LendsWhatAStreamFetchedAndNothingElse) {
  FakeObject obj{8 << 20};
  ReadAhead r(obj.size, obj.Fetch());
  auto first = r.Lend(0, 128 << 10);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->bytes.size(), size_t{128} << 10);
  EXPECT_TRUE(FakeObject::Right(0, std::string(first->bytes)));
  auto next = r.Lend(128 << 10, 128 << 10);  // Goes on where the first ended.
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(FakeObject::Right(128 << 10, std::string(next->bytes)));
  auto across = r.Lend((1 << 20) - 4096, 8192);  // The first range ends at 1 MiB.
  ASSERT_TRUE(across.ok());
  EXPECT_TRUE(across->bytes.empty());
  auto far = r.Lend(6 << 20, 4096);  // Nowhere a stream is: a random read.
  ASSERT_TRUE(far.ok());
  EXPECT_TRUE(far->bytes.empty());
  auto tail = r.Lend(obj.size - 100, 4096);  // No stream there: nothing to lend.
  ASSERT_TRUE(tail.ok());
  EXPECT_TRUE(tail->bytes.empty());
  auto past = r.Lend(obj.size, 4096);  // At the end: nothing at all.
  ASSERT_TRUE(past.ok());
  EXPECT_TRUE(past->bytes.empty());
}

}  // namespace
}  // namespace stitchfs::engine

namespace stitchfs::engine {
namespace {

// A range is read while it arrives: a reader of its first bytes does not wait for the rest.
TEST(ReadAheadTest, ReadsARangeWhileItArrives) {
  FakeObject obj{64 << 20};
  obj.hold_at = 4 << 20;
  ReadAhead r(obj.size, obj.Fetch());
  r.Prefetch(0, obj.size);  // One range of 32 MiB, held after 4 MiB.
  std::string buf(1 << 20, '\0');
  for (uint64_t off = 0; off < (4 << 20); off += buf.size()) {
    ASSERT_TRUE(r.ReadAt(off, {buf.data(), buf.size()}).ok());
    ASSERT_TRUE(FakeObject::Right(off, buf)) << off;
  }
  auto loan = r.Lend(3 << 20, 1 << 20);
  ASSERT_TRUE(loan.ok());
  EXPECT_TRUE(FakeObject::Right(3 << 20, std::string(loan->bytes)));
  obj.release = true;
  ASSERT_TRUE(r.ReadAt(30 << 20, {buf.data(), buf.size()}).ok());
  EXPECT_TRUE(FakeObject::Right(30 << 20, buf));
}

// A fetch that succeeds without reporting its bytes still gives them all.
TEST(ReadAheadTest, AnUnreportedRangeIsWholeWhenItEnds) {
  FakeObject obj{40 << 20};
  obj.quiet = true;
  ReadAhead r(obj.size, obj.Fetch());
  std::string buf(1 << 20, '\0');
  for (uint64_t off = 0; off < obj.size; off += buf.size()) {
    ASSERT_TRUE(r.ReadAt(off, {buf.data(), buf.size()}).ok()) << off;
    ASSERT_TRUE(FakeObject::Right(off, buf)) << off;
  }
}

// A range that fails midway: the bytes before the failure are good, a read past it fails, and
// a later read there fetches again.
TEST(ReadAheadTest, ARangeFailingMidwayKeepsWhatCameFirst) {
  FakeObject obj{64 << 20};
  obj.fail_at = 6 << 20;
  ReadAhead r(obj.size, obj.Fetch());
  r.Prefetch(0, obj.size);
  std::string buf(1 << 20, '\0');
  ASSERT_TRUE(r.ReadAt(2 << 20, {buf.data(), buf.size()}).ok());
  EXPECT_TRUE(FakeObject::Right(2 << 20, buf));
  auto bad = r.ReadAt(6 << 20, {buf.data(), buf.size()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("injected midway"), std::string::npos);
  obj.fail_at = UINT64_MAX;
  ASSERT_TRUE(r.ReadAt(6 << 20, {buf.data(), buf.size()}).ok());
  EXPECT_TRUE(FakeObject::Right(6 << 20, buf));
}

// A reader that goes away stops the ranges still arriving instead of waiting for them.
TEST(ReadAheadTest, ClosingStopsRangesInFlight) {
  FakeObject obj{256 << 20};
  obj.hold_at = 10 << 20;  // Past the reader, inside the ranges read ahead of it.
  std::thread releaser;
  {
    ReadAhead r(obj.size, obj.Fetch());
    std::string buf(1 << 20, '\0');
    for (uint64_t off = 0; off < (8 << 20); off += buf.size()) {
      ASSERT_TRUE(r.ReadAt(off, {buf.data(), buf.size()}).ok());
    }
    // Held fetches go on once the reader is gone; the next piece then hears of the stop.
    releaser = std::thread([&obj] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      obj.release = true;
    });
  }
  releaser.join();
  EXPECT_TRUE(obj.stopped.load() || obj.cancelled.load());
  EXPECT_LT(obj.bytes.load(), uint64_t{40} << 20);
}

}  // namespace
}  // namespace stitchfs::engine

namespace stitchfs::engine {
namespace {

// A reader waiting on a range whose stream is dropped under it (here: evicted by newer streams)
// still gets its bytes, fetched alone, not the stopped range's error.
TEST(ReadAheadTest, AReaderOfADroppedStreamStillGetsItsBytes) {
  FakeObject obj{256 << 20};
  obj.hold_at = 2 << 20;
  ReadAhead r(obj.size, obj.Fetch());
  r.Prefetch(0, obj.size);
  std::string got(1 << 20, '\0');
  std::thread reader([&] {
    auto n = r.ReadAt(10 << 20, {got.data(), got.size()});
    EXPECT_TRUE(n.ok()) << n.status().message();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // The reader waits.
  std::thread releaser([&obj] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    obj.release = true;
  });
  for (uint64_t at : {100, 150, 200, 250})
    r.Prefetch(at << 20, obj.size);  // The 5th evicts the first.
  releaser.join();
  reader.join();
  EXPECT_TRUE(obj.stopped.load() || obj.cancelled.load());
  EXPECT_TRUE(FakeObject::Right(10 << 20, got));
}

// A file closed while a range is stalled (no bytes, no error: a server gone quiet) does not
// wait for the stall timeout: the range is cancelled.
TEST(ReadAheadTest, ClosingDoesNotWaitForAStalledRange) {
  FakeObject obj{64 << 20};
  obj.hold_at = 1 << 20;
  auto r = std::make_unique<ReadAhead>(obj.size, obj.Fetch());
  r->Prefetch(0, obj.size);
  while (obj.bytes.load() < (1u << 20)) std::this_thread::yield();
  auto closed = std::async(std::launch::async, [&r] { r.reset(); });
  const bool in_time = closed.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  obj.release = true;  // (Lets a failing run end.)
  EXPECT_TRUE(in_time);
  EXPECT_TRUE(obj.cancelled.load() || obj.stopped.load());  // (Stopped if between pieces.)
}

// A reader that seeks ahead past a range still arriving stops that range, and neither it nor
// other readers wait for it (it was once waited for under the lock every reader needs).
TEST(ReadAheadTest, ARangeSkippedByASeekIsStoppedNotWaitedFor) {
  FakeObject obj{64 << 20};
  obj.hold_at = 3584 << 10;  // Inside the range [3, 5) MiB, which then stalls.
  obj.hold_until = 5 << 20;
  ReadAhead r(obj.size, obj.Fetch(),
              {.first_window = 1 << 20, .max_window = 16 << 20, .max_chunk = 4 << 20});
  std::string buf(1 << 20, '\0');
  for (uint64_t off = 0; off < (3 << 20); off += buf.size()) {  // Ranges up to [5, 9) MiB.
    ASSERT_TRUE(r.ReadAt(off, {buf.data(), buf.size()}).ok());
  }
  std::string small(4096, '\0');
  ASSERT_TRUE(r.ReadAt(3 << 20, {small.data(), small.size()}).ok());  // Before the stall.
  auto seek = std::async(std::launch::async, [&] {
    auto n = r.ReadAt(6 << 20, {small.data(), small.size()});  // In [5, 9) MiB, past [3, 5).
    EXPECT_TRUE(n.ok());
    EXPECT_TRUE(FakeObject::Right(6 << 20, small));
  });
  const bool in_time = seek.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  obj.release = true;
  EXPECT_TRUE(in_time);
  EXPECT_TRUE(obj.cancelled.load() || obj.stopped.load());  // (Stopped if between pieces.)
}

// A fetch that throws (out of memory in the S3 layers) ends its range with an error: readers
// waiting on it are answered, never left waiting for good.
TEST(ReadAheadTest, AFetchThatThrowsFailsItsReadersAndIsTriedAgain) {
  FakeObject obj{8 << 20};
  std::atomic<int> throws{1};
  RangeFetch inner = obj.Fetch();
  ReadAhead r(obj.size, [&](uint64_t off, std::span<char> dst, const StreamSink* stream) {
    if (stream && throws.fetch_sub(1) > 0) throw std::bad_alloc();
    return inner(off, dst, stream);
  });
  std::string buf(64 << 10, '\0');
  auto failed = std::async(std::launch::async, [&] {
    return r.ReadAt(0, {buf.data(), buf.size()});
  });
  ASSERT_EQ(failed.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  auto first = failed.get();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().sys_errno(), ENOMEM);
  auto again = r.ReadAt(0, {buf.data(), buf.size()});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(FakeObject::Right(0, buf));
}

}  // namespace
}  // namespace stitchfs::engine
