#include "engine/backends/archive/index_builder.h"

#include <optional>

#include "engine/backends/archive/inflate_points.h"
#include "engine/backends/archive/stream_decoder.h"
#include "engine/backends/archive/tar_scanner.h"
#include "engine/backends/archive/zip_index.h"

namespace stitchfs::engine {

namespace {

constexpr size_t kTarRead = 64 * 1024;

DecodePass PassOver(const RandomAccessFile& file, const std::string& display,
                    const std::function<void(uint64_t, uint64_t)>& progress) {
  DecodePass pass;
  pass.file = &file;
  pass.display = display;
  if (progress) pass.progress = [&file, &progress](uint64_t at) { progress(at, file.size()); };
  return pass;
}

// A plain tar: headers read in place, member data skipped.
Status ScanPlainTar(const RandomAccessFile& file, const DecodePass& pass, TarScanner* scanner) {
  std::string buffer;
  uint64_t pos = 0;
  const uint64_t size = file.size();
  while (!scanner->ended() && pos < size) {
    if (const uint64_t skip = std::min(scanner->skippable(), size - pos); skip > 0) {
      scanner->Skip(skip);
      pos += skip;
      continue;
    }
    ASSIGN_OR_RETURN(size_t n, ReadInput(pass, pos, kTarRead, &buffer));
    if (n == 0) break;
    RETURN_IF_ERROR(scanner->Feed(buffer));
    pos += n;
    if (pass.progress) pass.progress(pos);
  }
  return scanner->Finish();
}

// A tar whose indexing went over its budget: the member it had reached, named.
Status NameMember(Status s, const IndexBudget& budget, const TarScanner& scanner) {
  const bool over = budget.work() > budget.limits().work || budget.index() > budget.limits().index;
  if (!over || scanner.last_name().empty()) return s;
  return Status::BackupDamaged(s.message() + "; it had reached member " +
                               ShownName(scanner.last_name()));
}

// REQUIRES: pass.budget set.
StatusOr<BuiltIndex> IndexTar(const RandomAccessFile& file, ArchiveKind kind,
                              const ArchiveStamp& stamp, DecodePass pass,
                              const ArchiveCache* cache) {
  BuiltIndex out;
  out.index.kind = kind;
  TarScanner scanner(pass.display);
  // Everything decoded is work, so no stream can hold more than the budget's work.
  scanner.Limit(pass.budget,
                kind.codec == StreamCodec::kNone ? file.size() : pass.budget->limits().work);
  bool done = false;
  pass.sink_done = &done;
  ArchiveStream s;
  Status st;
  if (kind.codec == StreamCodec::kNone) {
    st = ScanPlainTar(file, pass, &scanner);
    s.method = StreamMethod::kStored;
    s.in_length = s.out_size = file.size();
  } else if (kind.codec == StreamCodec::kGzip) {
    pass.sink = [&](std::span<const char> d) {
      Status fed = scanner.Feed(d);
      done = scanner.ended();
      return fed;
    };
    uint32_t crc;
    auto deflated = IndexDeflate(pass, 0, file.size(), true, &out.index, &crc);
    st = deflated.ok() ? scanner.Finish() : deflated.status();
    if (st.ok()) s = *deflated;
  } else {
    ASSIGN_OR_RETURN(auto writer, StreamCacheWriter::Create(cache, stamp, pass.display));
    pass.sink = [&](std::span<const char> d) {
      RETURN_IF_ERROR(writer->Append(d));
      Status fed = scanner.Feed(d);
      done = scanner.ended();
      return fed;
    };
    st = DecodeWhole(kind.codec, pass).status();
    if (st.ok()) st = scanner.Finish();
    if (st.ok()) {
      ASSIGN_OR_RETURN(out.stream, writer->Commit(&out.index.piece_sums, &out.index.cached_size));
      s.method = StreamMethod::kCached;
      s.out_size = out.index.cached_size;
    }
  }
  if (!st.ok()) return NameMember(std::move(st), *pass.budget, scanner);
  out.index.streams.push_back(s);
  out.index.members = std::move(scanner.members());
  return out;
}

}  // namespace

StatusOr<BuiltIndex> BuildArchiveIndex(const RandomAccessFile& file, ArchiveKind kind,
                                       const ArchiveStamp& stamp, const std::string& display,
                                       const ArchiveCache* cache,
                                       const std::function<void(uint64_t, uint64_t)>& progress,
                                       IndexBudget* budget) {
  std::optional<IndexBudget> own;
  if (budget == nullptr) budget = &own.emplace(IndexLimits::For(file.size()), file.size());
  DecodePass pass = PassOver(file, display, progress);
  pass.budget = budget;
  StatusOr<BuiltIndex> built = kind.container == ArchiveContainer::kZip
                                   ? IndexZip(file, pass, stamp, cache)
                                   : IndexTar(file, kind, stamp, pass, cache);
  if (!built.ok()) return built.status();
  built->index.SortMembers();
  for (const ArchiveMember& m : built->index.members) {  // Within what the stream holds.
    const ArchiveStream& s = built->index.streams[m.stream];
    if (m.offset > s.out_size || m.size > s.out_size - m.offset) {
      return Status::BackupDamaged("archive " + display + " member " + ShownName(m.name) +
                                   " runs past the end of the archive");
    }
  }
  return built;
}

}  // namespace stitchfs::engine
