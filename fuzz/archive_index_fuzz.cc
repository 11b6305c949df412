// libFuzzer target for the archive index builder end to end (BuildArchiveIndex: zip with
// stored, deflate, bzip2, zstd and xz members; tar plain or compressed with gzip, bzip2, xz,
// lzma or zstd). The first byte picks the kind (its low 3 bits) and whether the rest is the
// archive as it is or, with bit 3, a tar the harness compresses with the kind's codec first (so
// that mutations reach the tar scanner behind every decoder's checksums). It runs under a budget
// of the default shape (a multiple of the archive's size plus a floor, smaller floors so that a
// run stays fast) and checks: errors are BACKUP_DAMAGED or NOT_SUPPORTED; the work and index
// bytes counted never pass their limits by more than one step of a decoder; what is built has
// members sorted and unique within their streams, stored and deflate streams within the
// archive, zip members that share no bytes, and survives EncodeArchiveIndex and
// DecodeArchiveIndex; every member reads whole, in one read and in small pieces alike, or fails
// with BACKUP_DAMAGED, never other bytes.
#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/backends/archive/archive_index.h"
#include "engine/backends/archive/archive_reader.h"
#include "engine/backends/archive/index_builder.h"
#include "engine/base/string_file.h"
#include "fuzz/fuzz_common.h"

namespace {

using namespace stitchfs::engine;
using stitchfs::fuzz::Printable;
using stitchfs::fuzz::Require;

constexpr const char* kKinds[] = {"f.zip",    "f.tar",      "f.tar.gz",  "f.tar.bz2",
                                  "f.tar.xz", "f.tar.lzma", "f.tar.zst", "f.zipx"};
constexpr uint64_t kMiB = 1 << 20;
// The most one step may charge past a limit: a decoder's output chunk or input read (256 KiB),
// a member's record with a name of up to 1 MiB (a pax path), a restart point (32 KiB window).
constexpr uint64_t kWorkStep = 256 * 1024 + IndexLimits::kStartCost;
constexpr uint64_t kIndexStep = kMiB + 1024;
constexpr uint64_t kMaxRead = 32 * kMiB;  // Members read back per input, in all.

void RequireArchiveError(const Status& s, const char* what) {
  Require(s.code() == ErrorCode::kBackupDamaged || s.code() == ErrorCode::kNotSupported, what,
          s.ToString());
}

// The built index holds together: streams within the archive, members sorted, unique and
// within their streams, zip's stored members disjoint.
void CheckIndex(const ArchiveIndex& x, uint64_t archive_size, bool zip) {
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const ArchiveStream& s : x.streams) {
    if (s.method == StreamMethod::kCached) continue;
    Require(s.in_offset <= archive_size && s.in_length <= archive_size - s.in_offset,
            "stream within the archive");
    if (s.method == StreamMethod::kStored && s.in_length > 0) {
      spans.emplace_back(s.in_offset, s.in_offset + s.in_length);
    }
  }
  if (zip) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      Require(spans[i].first >= spans[i - 1].second, "zip members share bytes");
    }
  }
  for (size_t i = 0; i < x.members.size(); ++i) {
    const ArchiveMember& m = x.members[i];
    Require(i == 0 || x.members[i - 1].name < m.name, "members sorted and unique");
    Require(m.stream < x.streams.size(), "member's stream exists");
    const ArchiveStream& s = x.streams[m.stream];
    Require(m.offset <= s.out_size && m.size <= s.out_size - m.offset, "member within stream");
    Require(x.Find(m.name) == &m, "Find finds the member");
  }
}

// Every member read whole and in pieces: the same bytes, or BACKUP_DAMAGED.
void ReadMembers(const std::shared_ptr<const ArchiveReader>& reader) {
  uint64_t budget = kMaxRead;
  for (const ArchiveMember& m : reader->index().members) {
    if (m.size > budget) return;
    budget -= m.size;
    auto file = reader->OpenMember(m);
    std::string whole(static_cast<size_t>(m.size), '\0');
    auto n = file->ReadAt(0, whole);
    if (!n.ok()) {
      RequireArchiveError(n.status(), "member read error code");
      continue;
    }
    Require(*n == m.size, "member reads its size", Printable(m.name));
    for (uint64_t at = 0; at < m.size; at += 4093) {
      std::string piece(static_cast<size_t>(std::min<uint64_t>(4093, m.size - at)), '\0');
      auto p = file->ReadAt(at, piece);
      Require(p.ok() && *p == piece.size(), "a piece of a member reads");
      Require(piece == std::string_view(whole).substr(at, piece.size()), "pieces differ");
    }
  }
}

// `data` compressed as `codec` would write it (empty if the codec fails).
std::string Compress(StreamCodec codec, const std::string& data) {
  std::string out(data.size() + data.size() / 2 + 1024, '\0');
  size_t n = 0;
  switch (codec) {
    case StreamCodec::kNone:
      return data;
    case StreamCodec::kGzip: {
      z_stream z{};
      if (deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      z.avail_in = static_cast<uInt>(data.size());
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      const bool ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
      n = ok ? z.total_out : 0;
      deflateEnd(&z);
      break;
    }
    case StreamCodec::kBzip2: {
      unsigned len = static_cast<unsigned>(out.size());
      if (BZ2_bzBuffToBuffCompress(out.data(), &len, const_cast<char*>(data.data()),
                                   static_cast<unsigned>(data.size()), 1, 0, 0) == BZ_OK) {
        n = len;
      }
      break;
    }
    case StreamCodec::kXz:
    case StreamCodec::kLzma: {
      lzma_stream z = LZMA_STREAM_INIT;
      lzma_options_lzma opt;
      if (lzma_lzma_preset(&opt, 0)) return {};
      const lzma_ret init = codec == StreamCodec::kXz ? lzma_easy_encoder(&z, 0, LZMA_CHECK_CRC32)
                                                      : lzma_alone_encoder(&z, &opt);
      if (init != LZMA_OK) return {};
      z.next_in = reinterpret_cast<const uint8_t*>(data.data());
      z.avail_in = data.size();
      z.next_out = reinterpret_cast<uint8_t*>(out.data());
      z.avail_out = out.size();
      if (lzma_code(&z, LZMA_FINISH) == LZMA_STREAM_END) n = out.size() - z.avail_out;
      lzma_end(&z);
      break;
    }
    case StreamCodec::kZstd: {
      const size_t r = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 1);
      n = ZSTD_isError(r) ? 0 : r;
      break;
    }
  }
  out.resize(n);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string name = kKinds[data[0] % 8];
  const ArchiveKind kind = ArchiveKindOf(name);
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 8) bytes = Compress(kind.codec, bytes);
  auto file = std::make_shared<const StringFile>(std::move(bytes));
  const uint64_t n = file->size();
  // The default's shape (IndexLimits::For) with floors of 16 MiB and 4 MiB.
  IndexBudget budget(
      {16 * kMiB + IndexLimits::kWorkPerByte * n, 4 * kMiB + IndexLimits::kIndexPerByte * n}, n);
  auto progress = [n](uint64_t done, uint64_t total) {
    Require(total == n && done <= n, "progress within the archive");
  };
  const ArchiveStamp stamp{1, 2, n, {3, 4}, {5, 6}};
  auto built = BuildArchiveIndex(*file, kind, stamp, name, nullptr, progress, &budget);
  Require(budget.work() <= budget.limits().work + kWorkStep, "work past the budget");
  Require(budget.index() <= budget.limits().index + kIndexStep, "index past the budget");
  if (!built.ok()) {
    RequireArchiveError(built.status(), "index build error code");
    Require(built.status().message().find(name) != std::string::npos, "error names the archive",
            built.status().ToString());
    return 0;
  }
  CheckIndex(built->index, n, kind.container == ArchiveContainer::kZip);
  auto decoded = DecodeArchiveIndex(EncodeArchiveIndex(built->index, stamp), stamp);
  Require(decoded.ok(), "a built index decodes", decoded.status().ToString());
  Require(decoded->members.size() == built->index.members.size(), "decoded members");
  auto reader = std::make_shared<const ArchiveReader>(
      file, std::move(built->index), std::move(built->stream), name, nullptr, stamp);
  ReadMembers(reader);
  return 0;
}
