#include "engine/archive/index_builder.h"

#include <zlib.h>

#include "engine/archive/inflate_points.h"
#include "engine/archive/stream_decoder.h"
#include "engine/archive/tar_scanner.h"
#include "engine/archive/zip_index.h"

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

StatusOr<BuiltIndex> IndexTar(const RandomAccessFile& file, ArchiveKind kind,
                              const ArchiveStamp& stamp, DecodePass pass,
                              const ArchiveCache* cache) {
  BuiltIndex out;
  out.index.kind = kind;
  TarScanner scanner(pass.display);
  bool done = false;
  pass.sink_done = &done;
  ArchiveStream s;
  if (kind.codec == StreamCodec::kNone) {
    RETURN_IF_ERROR(ScanPlainTar(file, pass, &scanner));
    s.method = StreamMethod::kStored;
    s.in_length = s.out_size = file.size();
  } else if (kind.codec == StreamCodec::kGzip) {
    pass.sink = [&](std::span<const char> d) {
      Status st = scanner.Feed(d);
      done = scanner.ended();
      return st;
    };
    uint32_t crc;
    ASSIGN_OR_RETURN(s, IndexDeflate(pass, 0, file.size(), true, &out.index, &crc));
    RETURN_IF_ERROR(scanner.Finish());
  } else {
    ASSIGN_OR_RETURN(auto writer, StreamCacheWriter::Create(cache, stamp, pass.display));
    pass.sink = [&](std::span<const char> d) {
      RETURN_IF_ERROR(writer->Append(d));
      Status st = scanner.Feed(d);
      done = scanner.ended();
      return st;
    };
    RETURN_IF_ERROR(DecodeWhole(kind.codec, pass).status());
    RETURN_IF_ERROR(scanner.Finish());
    ASSIGN_OR_RETURN(out.stream, writer->Commit(&out.index.piece_sums, &out.index.cached_size));
    s.method = StreamMethod::kCached;
    s.out_size = out.index.cached_size;
  }
  out.index.streams.push_back(s);
  out.index.members = std::move(scanner.members());
  return out;
}

}  // namespace

StatusOr<BuiltIndex> BuildArchiveIndex(const RandomAccessFile& file, ArchiveKind kind,
                                       const ArchiveStamp& stamp, const std::string& display,
                                       const ArchiveCache* cache,
                                       const std::function<void(uint64_t, uint64_t)>& progress) {
  DecodePass pass = PassOver(file, display, progress);
  StatusOr<BuiltIndex> built = kind.container == ArchiveContainer::kZip
                                   ? IndexZip(file, pass, stamp, cache)
                                   : IndexTar(file, kind, stamp, pass, cache);
  if (!built.ok()) return built.status();
  built->index.SortMembers();
  for (const ArchiveMember& m : built->index.members) {  // Within what the stream holds.
    const ArchiveStream& s = built->index.streams[m.stream];
    if (m.offset > s.out_size || m.size > s.out_size - m.offset) {
      return Status::BackupDamaged("archive " + display + " member " + m.name +
                                   " runs past the end of the archive");
    }
  }
  return built;
}

}  // namespace stitchfs::engine
