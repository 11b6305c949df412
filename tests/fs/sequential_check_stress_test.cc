// SequentialCheck under the ways reads really come: several threads serving a window of reads
// out of order, readers with holes, two passes at once, readers that throw, storage that is
// slow. A good file is never failed, a damaged one read whole is failed, the read of the end
// waits within its bounds, and what the checks keep goes back to zero.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <future>
#include <random>
#include <system_error>
#include <thread>

#include "engine/read/open_resolved.h"
#include "fs/file_reads.h"
#include "fs/sequential_check.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::fs::fstest {
namespace {

using engine::ErrorCode;
using std::chrono::milliseconds;

// The file's reader, made slow (per MiB) or made to throw, counting the bytes read through it.
class SlowFile : public engine::RandomAccessFile {
 public:
  explicit SlowFile(std::shared_ptr<const engine::RandomAccessFile> in) : in_(std::move(in)) {}
  uint64_t size() const override { return in_->size(); }
  mutable std::atomic<uint64_t> bytes_read{0};
  mutable std::atomic<int> throw_next{0};
  int us_per_mib = 0;

 protected:
  engine::Status ReadExact(uint64_t off, std::span<char> dst) const override {
    bytes_read += dst.size();
    std::this_thread::sleep_for(std::chrono::microseconds(dst.size() * us_per_mib >> 20));
    if (throw_next > 0 && throw_next-- > 0) {  // (As std::async does without a thread.)
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    }
    return in_->ReadAt(off, dst).status();
  }

 private:
  std::shared_ptr<const engine::RandomAccessFile> in_;
};

class CheckStressTest : public ::testing::Test {
 protected:
  static constexpr size_t kSize = 3 << 20;
  void SetUp() override {
    content_ = testutil::RandomBytes(kSize, 7);
    testutil::FixtureBackup b0(dir_ / "b0");
    b0.AddStored("big.bin", content_);
    ASSERT_OK(b0.Write());
    chain_ = engine::OpenResolved(b0.dir(), testutil::LocalChain(), {}).value();
    entry_ = *chain_->top().manifest().FindByName("big.bin");
  }
  // Flips the byte at `at` on disk; the bytes the reader reads now.
  std::string Damage(size_t at) {
    std::string d = content_;
    d[at] = static_cast<char>(d[at] ^ 1);
    testutil::WriteFile(dir_ / "b0/big.bin", d);
    return d;
  }
  std::shared_ptr<SlowFile> Reader() {
    return std::make_shared<SlowFile>(chain_->OpenEntry(entry_).value());
  }
  std::unique_ptr<engine::ContentCheck> Content() const {
    return std::make_unique<engine::ContentCheck>(*chain_, entry_, chain_);
  }
  std::unique_ptr<SequentialCheck> Check(std::shared_ptr<const engine::RandomAccessFile> reader,
                                         SequentialCheck::Bounds b = {}) {
    return std::make_unique<SequentialCheck>(Content(), std::move(reader), std::nullopt, b);
  }
  std::string_view At(const std::string& bytes, uint64_t off, uint64_t len = UINT64_MAX) {
    return std::string_view(bytes).substr(off, len);
  }
  testutil::TempDir dir_;
  std::string content_;
  std::shared_ptr<const engine::ResolvedBackup> chain_;
  size_t entry_ = 0;
};

// The kernel's way: reads in file order, `window` at once, served by `threads` threads that
// finish them in any order. The statuses the reads of the end got.
std::vector<engine::Status> ReadWhole(SequentialCheck& check, const std::string& bytes,
                                      std::mt19937& rng, int threads, int window, size_t max_read) {
  std::vector<std::pair<uint64_t, uint64_t>> reads;
  for (uint64_t off = 0; off < bytes.size();) {
    const uint64_t len = std::min<uint64_t>(1 + rng() % max_read, bytes.size() - off);
    reads.emplace_back(off, len);
    off += len;
  }
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0;
  int in_flight = 0;
  std::vector<engine::Status> ends;
  auto serve = [&](unsigned seed) {
    std::mt19937 r(seed);
    for (;;) {
      std::pair<uint64_t, uint64_t> rd;
      {
        std::unique_lock<std::mutex> l(mu);
        cv.wait(l, [&] { return next >= reads.size() || in_flight < window; });
        if (next >= reads.size()) return;
        rd = reads[next++];
        ++in_flight;
        check.Begin(rd.first, rd.second);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(r() % 300));
      const std::string_view b = std::string_view(bytes).substr(rd.first, rd.second);
      if (rd.first + rd.second == bytes.size()) {
        engine::Status s = check.Accept(rd.first, b);
        std::lock_guard<std::mutex> l(mu);
        ends.push_back(s);
      } else if (r() % 2) {
        ReadBuffer buf;
        buf.Reserve(b.size());
        std::memcpy(buf.data.get(), b.data(), b.size());
        (void)check.AcceptAnswered(rd.first, buf, b.size());
        if (buf.data) ReturnToPool(std::move(buf));
      } else {
        (void)check.AcceptAnswered(rd.first, b);
      }
      std::lock_guard<std::mutex> l(mu);
      --in_flight;
      cv.notify_all();
    }
  };
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i) ts.emplace_back(serve, rng());
  for (auto& t : ts) t.join();
  return ends;
}

TEST_F(CheckStressTest, ReadsServedOutOfOrderNeverFailAGoodFileNorPassADamagedOne) {
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 24; ++iter) {
    const bool damaged = iter % 3 == 2;
    const std::string bytes = damaged ? Damage(rng() % kSize) : content_;
    SequentialCheck::Bounds b;  // Room for all, for little, for none; reading again bounded.
    b.max_pending = iter % 4 == 0 ? 0 : iter % 4 == 1 ? 256 << 10 : 64 << 20;
    b.max_ahead = iter % 4 == 1 ? 200 << 10 : b.max_ahead;
    b.wait = milliseconds(1 + rng() % 30);
    b.arrival = milliseconds(rng() % 5);
    b.max_fill = iter % 5 == 0 ? 100000 : 64 << 20;
    auto check = Check(Reader(), b);
    const auto ends =
        ReadWhole(*check, bytes, rng, 2 + iter % 5, 2 + iter % 7, iter % 2 ? 256 << 10 : 9000);
    if (auto res = check->result()) {
      EXPECT_EQ(res->code(), damaged ? ErrorCode::kBackupDamaged : ErrorCode::kOk) << iter;
    }
    if (!damaged) {
      for (const auto& s : ends) EXPECT_TRUE(s.ok()) << iter << " " << s.ToString();
    }
    check.reset();
    EXPECT_EQ(SequentialCheck::KeptAll(), 0u) << iter;
    if (damaged) testutil::WriteFile(dir_ / "b0/big.bin", content_);
  }
}

// Two streams at once (a copier reading both halves): the second half cannot be kept. What is
// read again stays within max_fill, and the read of the end within its wait.
TEST_F(CheckStressTest, ReadingAgainAndTheWaitOfTheEndStayWithinTheirBounds) {
  SequentialCheck::Bounds b;
  b.max_pending = b.max_ahead = 128 << 10;
  b.wait = milliseconds(20);
  b.arrival = milliseconds(5);
  b.max_fill = 64 << 10;
  auto reader = Reader();
  reader->us_per_mib = 200'000;  // 5 MiB/s.
  auto check = Check(reader, b);
  const uint64_t half = kSize / 2, r = 64 << 10, end_at = kSize - r;
  for (uint64_t off = half; off < end_at; off += r)
    (void)check->AcceptAnswered(off, At(content_, off, r));
  check->Begin(0, half);
  auto end = std::async(std::launch::async, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    check->Begin(end_at, r);
    EXPECT_OK(check->Accept(end_at, At(content_, end_at)));
    return std::chrono::steady_clock::now() - t0;
  });
  std::this_thread::sleep_for(milliseconds(2));
  (void)check->AcceptAnswered(0, At(content_, 0, half));
  EXPECT_LT(end.get(), 10 * b.wait);
  EXPECT_LE(reader->bytes_read.load(), b.max_fill);
}

// Readers that leave a hole and read on far ahead give back what they kept: a whole reader
// after them still keeps its reads ahead (nothing read again).
TEST_F(CheckStressTest, ReadersWithAHoleDoNotHoldTheMemoryOfAllChecks) {
  std::vector<std::unique_ptr<SequentialCheck>> holes;
  for (int f = 0; f < 8; ++f) {
    holes.push_back(Check(Reader()));
    for (uint64_t off = 1 << 20; off < (200ull << 20); off += 1 << 20) {
      ReadBuffer buf;
      buf.Reserve(1 << 20);
      (void)holes.back()->AcceptAnswered(off, buf, 1 << 20);
      if (buf.data) ReturnToPool(std::move(buf));
    }
  }
  EXPECT_LT(SequentialCheck::KeptAll(), SequentialCheck::kMaxPendingAll / 2);
  auto reader = Reader();
  auto whole = Check(reader);
  const uint64_t r = 64 << 10;
  (void)whole->AcceptAnswered(r, At(content_, r, r));
  (void)whole->AcceptAnswered(0, At(content_, 0, r));
  EXPECT_EQ(reader->bytes_read.load(), 0u);
  holes.clear();
  whole.reset();
  EXPECT_EQ(SequentialCheck::KeptAll(), 0u);
}

// The reader throwing while the read of the end reads a gap: that read fails (the mount
// answers EIO, naming why), and a read of the end again returns at once.
TEST_F(CheckStressTest, AReaderThatThrowsLeavesNoReadWaitingForever) {
  SequentialCheck::Bounds b;
  b.wait = milliseconds(20);
  b.arrival = milliseconds(5);
  auto reader = Reader();
  auto check = Check(reader, b);
  const uint64_t end_at = kSize - (64 << 10);
  check->Begin(0, end_at);
  reader->throw_next = 1;
  engine::Status first = check->Accept(end_at, At(content_, end_at));
  EXPECT_EQ(first.code(), ErrorCode::kIOError) << first.ToString();
  auto again =
      std::async(std::launch::async, [&] { return check->Accept(end_at, At(content_, end_at)); });
  ASSERT_EQ(again.wait_for(std::chrono::seconds(3)), std::future_status::ready);
  EXPECT_OK(again.get());
}

// Two reads of the end at once (two direct readers): one finds the verdict; the other gets it,
// never an OK for bytes not checked, even while the first is hashing.
TEST_F(CheckStressTest, TwoReadsOfTheEndShareOneVerdict) {
  const std::string bad = Damage(100);
  for (int i = 0; i < 50; ++i) {
    auto check = Check(Reader());
    const uint64_t c = kSize - 4096;
    check->Begin(0, kSize);
    check->Begin(c, kSize - c);
    bool f1 = false, f2 = false;
    auto whole = std::async(std::launch::async, [&] { return check->Accept(0, bad, &f1); });
    std::this_thread::sleep_for(std::chrono::microseconds(50 * i));
    engine::Status end = check->Accept(c, At(bad, c), &f2);
    EXPECT_EQ(whole.get().code(), ErrorCode::kBackupDamaged) << i;
    EXPECT_EQ(end.code(), ErrorCode::kBackupDamaged) << i;
    EXPECT_FALSE(f1 && f2) << i;
  }
}

// A second `dd iflag=direct`: its 1 MiB requests come at once, the one at 1 MiB before the one
// at 0. The second pass is checked all the same (its bytes changed on disk since the first).
TEST_F(CheckStressTest, ASecondDirectReadWhoseStartComesSecondIsChecked) {
  FileReads reads(
      Reader(), [&] { return Content(); }, std::nullopt);
  const uint64_t m = 1 << 20;
  auto pass = [&](const std::string& bytes, std::vector<uint64_t> order) {
    std::vector<std::shared_ptr<SequentialCheck>> got;
    for (uint64_t off : order) {
      got.push_back(reads.CheckFor(off, m));
      got.back()->Begin(off, m);
    }
    engine::Status end;
    for (size_t i = 0; i < order.size(); ++i) {
      const std::string_view b = At(bytes, order[i], m);
      if (order[i] + b.size() == kSize) {
        end = got[i]->Accept(order[i], b);
      } else {
        (void)got[i]->AcceptAnswered(order[i], b);
      }
    }
    return end;
  };
  EXPECT_OK(pass(content_, {0, m, 2 * m}));
  EXPECT_EQ(pass(Damage(m + 5), {m, 0, 2 * m}).code(), ErrorCode::kBackupDamaged);
}

// Random reads after a whole read (a query on a file just copied): they stay with the ended
// check, keeping nothing, and its reads of the end answer at once with its verdict.
TEST_F(CheckStressTest, RandomReadsAfterAWholeReadKeepNothingAndWaitForNothing) {
  FileReads reads(
      Reader(), [&] { return Content(); }, std::nullopt);
  const uint64_t m = 1 << 20, page = 4096;
  for (uint64_t off = 0; off < kSize; off += m) {
    auto c = reads.CheckFor(off, m);
    c->Begin(off, m);
    if (off + m >= kSize) {
      ASSERT_OK(c->Accept(off, At(content_, off)));
    } else {
      (void)c->AcceptAnswered(off, At(content_, off, m));
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i) {
    const uint64_t off = (1 + rng() % (kSize / page - 2)) * page;
    auto c = reads.CheckFor(off, page);
    c->Begin(off, page);
    (void)c->AcceptAnswered(off, At(content_, off, page));
    const uint64_t end = kSize - page;
    auto e = reads.CheckFor(end, page);
    e->Begin(end, page);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_OK(e->Accept(end, At(content_, end)));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, SequentialCheck::Bounds().arrival) << i;
  }
  EXPECT_EQ(SequentialCheck::KeptAll(), 0u);
}

// `tail` then `cat`: the read of the end came alone and the kernel keeps its pages, so the
// whole read that follows never reads the end through the mount. Its last read is checked as
// the end (the end's bytes read again), whether the whole read joins the check or begins one,
// and whether the tail took one read or two (the first answered while the end waited for it).
TEST_F(CheckStressTest, AWholeReadAfterTheEndWasReadAloneIsChecked) {
  const uint64_t m = 1 << 20, page = 4096;
  for (const int tail_reads : {1, 2}) {
    for (const bool head_first : {false, true}) {
      for (const bool damaged : {false, true}) {
        const std::string bytes = damaged ? Damage(m + 5) : content_;
        FileReads reads(
            Reader(), [&] { return Content(); }, std::nullopt);
        if (head_first) {  // `head`: the start read, then nothing.
          auto h = reads.CheckFor(0, page);
          h->Begin(0, page);
          (void)h->AcceptAnswered(0, At(bytes, 0, page));
        }
        const uint64_t tail = kSize - page * (tail_reads == 1 ? 1 : 3), last = kSize - page;
        auto t = reads.CheckFor(last, page);
        if (tail_reads == 2) t->Begin(tail, last - tail);
        t->Begin(last, page);
        auto end = std::async(std::launch::async, [&] { return t->Accept(last, At(bytes, last)); });
        if (tail_reads == 2) {
          std::this_thread::sleep_for(milliseconds(10));
          (void)t->AcceptAnswered(tail, At(bytes, tail, last - tail));  // Kept, then let go.
        }
        EXPECT_OK(end.get());  // Unchecked: nothing before the tail read.
        const auto t0 = std::chrono::steady_clock::now();
        EXPECT_OK(t->Accept(last, At(bytes, last)));  // Again: at once.
        EXPECT_LT(std::chrono::steady_clock::now() - t0, SequentialCheck::Bounds().arrival);
        engine::Status verdict;
        for (uint64_t off = 0; off < tail; off += m) {  // `cat`: the tail's pages kept.
          const uint64_t len = std::min(m, tail - off);
          auto c = reads.CheckFor(off, len);
          c->Begin(off, len);
          if (c->Completes(off, len)) {
            verdict = c->Accept(off, At(bytes, off, len));
          } else {
            EXPECT_OK(c->AcceptAnswered(off, At(bytes, off, len)));
          }
        }
        EXPECT_EQ(verdict.code(), damaged ? ErrorCode::kBackupDamaged : ErrorCode::kOk)
            << tail_reads << " tail reads, head first " << head_first << ", damaged " << damaged
            << ": " << verdict.ToString();
        testutil::WriteFile(dir_ / "b0/big.bin", content_);
      }
    }
  }
  EXPECT_EQ(SequentialCheck::KeptAll(), 0u);
}

}  // namespace
}  // namespace stitchfs::fs::fstest
