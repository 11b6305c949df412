#include "engine/backends/archive/zip_index.h"

#include "engine/backends/archive/codec_libraries.h"
#include "engine/backends/archive/inflate_points.h"
#include "engine/backends/archive/stream_decoder.h"
#include "engine/backends/archive/zip_directory.h"
#include "engine/base/concat_file.h"

namespace stitchfs::engine {

namespace {

// Deflate's densest coding: 258 bytes from a 1-bit length and a 1-bit distance.
constexpr uint64_t kDeflateMaxRatio = 1032;

// The whole-stream codec of a zip method, if it has one.
std::optional<StreamCodec> WholeCodec(uint16_t method) {
  switch (method) {
    case 12:
      return StreamCodec::kBzip2;
    case 93:
      return StreamCodec::kZstd;
    case 95:
      return StreamCodec::kXz;
    default:
      return std::nullopt;
  }
}

Status Mismatch(const std::string& member, uint64_t got, uint64_t want) {
  return Status::BackupDamaged("archive " + member + " is damaged: it decodes to " +
                               std::to_string(got) + " bytes with another CRC-32 than its " +
                               "directory gives (" + std::to_string(want) + " bytes)");
}

class ZipIndexer {
 public:
  ZipIndexer(const RandomAccessFile& file, const DecodePass& pass, const ArchiveStamp& stamp,
             const ArchiveCache* cache)
      : file_(file), pass_(pass), stamp_(stamp), cache_(cache) {}

  StatusOr<BuiltIndex> Run() {
    ASSIGN_OR_RETURN(std::vector<ZipEntry> entries, ReadZipDirectory(file_, pass_.display));
    out_.index.kind = {ArchiveContainer::kZip, StreamCodec::kNone};
    RETURN_IF_ERROR(Plan(entries));
    for (const ZipEntry& e : entries) RETURN_IF_ERROR(Member(e));
    if (writer_) {
      ASSIGN_OR_RETURN(out_.stream,
                       writer_->Commit(&out_.index.piece_sums, &out_.index.cached_size));
      out_.index.streams[cached_stream_].out_size = out_.index.cached_size;
    }
    return std::move(out_);
  }

 private:
  // Before anything is decoded: the sizes the directory declares must be ones the member's bytes
  // can decode to (deflate) and, in all, within the budget.
  Status Plan(const std::vector<ZipEntry>& entries) const {
    uint64_t planned = 0;
    for (const ZipEntry& e : entries) {
      if (e.method != 8 && !WholeCodec(e.method)) continue;  // Stored: read where it lies.
      const std::string member = pass_.display + " member " + ShownName(e.name);
      if (e.method == 8 && e.size / kDeflateMaxRatio > e.packed_size) {
        return Status::BackupDamaged("archive " + member + " is damaged: it declares " +
                                     std::to_string(e.size) + " bytes, more than deflate can " +
                                     "give from its " + std::to_string(e.packed_size));
      }
      // Saturating: the sizes are the archive's to choose.
      for (uint64_t n : {e.size, e.packed_size})
        planned = n > UINT64_MAX - planned ? UINT64_MAX : planned + n;
      if (pass_.budget != nullptr) RETURN_IF_ERROR(pass_.budget->Expect(planned, member));
    }
    return Status::OK();
  }

  Status Member(const ZipEntry& e) {
    const std::string member = pass_.display + " member " + ShownName(e.name);
    if (pass_.budget != nullptr) {
      RETURN_IF_ERROR(pass_.budget->Index(sizeof(ArchiveMember) + e.name.size(), member));
    }
    if (e.flags & 1) return Status::NotSupported("archive " + member + " is encrypted");
    ArchiveIndex& x = out_.index;
    if (auto codec = WholeCodec(e.method)) return Whole(e, *codec, member);
    ArchiveStream s;
    if (e.method == 0) {
      s.method = StreamMethod::kStored;
      s.in_offset = e.data_offset;
      s.in_length = s.out_size = e.size;
    } else if (e.method == 8) {
      uint32_t crc = 0;
      DecodePass one = pass_;
      one.display = member;
      one.max_output = e.size;
      one.sink = [](std::span<const char>) { return Status::OK(); };
      ASSIGN_OR_RETURN(s, IndexDeflate(one, e.data_offset, e.packed_size, false, &x, &crc));
      if (s.out_size != e.size || crc != e.crc32) return Mismatch(member, s.out_size, e.size);
    } else {
      return Status::NotSupported("archive " + member + " is compressed with zip method " +
                                  std::to_string(e.method) +
                                  "; stored, deflate, bzip2, zstd and xz members are read");
    }
    if (pass_.budget != nullptr) RETURN_IF_ERROR(pass_.budget->Index(sizeof s, member));
    x.members.push_back({e.name, static_cast<uint32_t>(x.streams.size()), 0, e.size});
    x.streams.push_back(s);
    return Status::OK();
  }

  // Decodes the member onto the end of the archive's one cached stream.
  Status Whole(const ZipEntry& e, StreamCodec codec, const std::string& member) {
    ArchiveIndex& x = out_.index;
    if (!writer_) {
      ASSIGN_OR_RETURN(writer_, StreamCacheWriter::Create(cache_, stamp_, pass_.display));
      cached_stream_ = static_cast<uint32_t>(x.streams.size());
      ArchiveStream s;
      s.method = StreamMethod::kCached;
      x.streams.push_back(s);
    }
    // A view of the member's bytes, not owning the archive (which outlives the pass).
    std::shared_ptr<const RandomAccessFile> archive(&file_, [](const RandomAccessFile*) {});
    auto bytes = Concatenate({{archive, e.data_offset, e.packed_size}});
    DecodePass one = pass_;
    one.file = bytes.get();
    one.display = member;
    one.max_output = e.size;
    const uint64_t at = cached_bytes_;
    ASSIGN_OR_RETURN(const ZlibApi* zl, Zlib());
    uLong crc = zl->crc32(0, nullptr, 0);
    one.sink = [&](std::span<const char> d) {
      crc = zl->crc32(crc, reinterpret_cast<const Bytef*>(d.data()), static_cast<uInt>(d.size()));
      cached_bytes_ += d.size();
      return writer_->Append(d);
    };
    if (pass_.progress) {
      one.progress = [&](uint64_t done) { pass_.progress(e.data_offset + done); };
    }
    ASSIGN_OR_RETURN(uint64_t n, DecodeWhole(codec, one));
    if (n != e.size || crc != e.crc32) return Mismatch(member, n, e.size);
    x.members.push_back({e.name, cached_stream_, at, e.size});
    return Status::OK();
  }

  const RandomAccessFile& file_;
  const DecodePass& pass_;
  const ArchiveStamp& stamp_;
  const ArchiveCache* cache_;
  BuiltIndex out_;
  std::unique_ptr<StreamCacheWriter> writer_;
  uint32_t cached_stream_ = 0;
  uint64_t cached_bytes_ = 0;
};

}  // namespace

StatusOr<BuiltIndex> IndexZip(const RandomAccessFile& file, const DecodePass& pass,
                              const ArchiveStamp& stamp, const ArchiveCache* cache) {
  return ZipIndexer(file, pass, stamp, cache).Run();
}

}  // namespace stitchfs::engine
