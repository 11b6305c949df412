#include "engine/backends/archive/inflate_points.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "engine/backends/archive/codec_libraries.h"

namespace stitchfs::engine {

namespace {

constexpr size_t kWindow = 32768;
constexpr size_t kInChunk = 128 * 1024;

// RAII for a z_stream set up for inflating.
class Inflater {
 public:
  Inflater(const ZlibApi& zl, int window_bits) : zl_(zl) {
    live_ = zl_.InflateInit2(&z_, window_bits) == Z_OK;
  }
  ~Inflater() {
    if (live_) zl_.inflate_end(&z_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  bool live() const { return live_; }
  z_stream* get() { return &z_; }

 private:
  const ZlibApi& zl_;
  z_stream z_{};
  bool live_ = false;
};

Status Corrupt(const std::string& display, const z_stream& z, const char* fallback) {
  return Status::BackupDamaged("archive " + display + ": compressed data is damaged (" +
                               (z.msg != nullptr ? z.msg : fallback) + ")");
}

class DeflateIndexer {
 public:
  DeflateIndexer(const ZlibApi& zl, const DecodePass& pass, uint64_t in_offset, uint64_t in_length,
                 bool gzip, ArchiveIndex* index)
      : zl_(zl),
        pass_(pass),
        begin_(in_offset),
        end_(in_offset + in_length),
        gzip_(gzip),
        index_(index) {}

  StatusOr<ArchiveStream> Run(uint32_t* crc) {
    Inflater inf(zl_, gzip_ ? 15 + 16 : -15);
    if (!inf.live()) return Status::Internal("zlib: cannot start inflating");
    z_ = inf.get();
    ArchiveStream s;
    s.method = StreamMethod::kDeflate;
    s.in_offset = begin_;
    s.first_point = static_cast<uint32_t>(index_->points.size());
    first_point_ = s.first_point;
    RETURN_IF_ERROR(Charge(IndexLimits::kStartCost));
    if (!gzip_) RETURN_IF_ERROR(AddPoint(begin_ * 8));
    crc_ = zl_.crc32(0, nullptr, 0);
    RETURN_IF_ERROR(Loop());
    s.in_length = Consumed() - begin_;
    s.out_size = count_.total;
    s.point_count = static_cast<uint32_t>(index_->points.size()) - s.first_point;
    *crc = crc_;
    return s;
  }

 private:
  uint64_t Consumed() const { return pos_ - z_->avail_in; }

  // More input into the z_stream; false at the end of the range.
  StatusOr<bool> Refill() {
    if (pos_ >= end_) return false;
    ASSIGN_OR_RETURN(
        size_t n, ReadInput(pass_, pos_,
                            static_cast<size_t>(std::min<uint64_t>(kInChunk, end_ - pos_)), &in_));
    if (n == 0) return false;
    pos_ += n;
    z_->next_in = reinterpret_cast<Bytef*>(in_.data());
    z_->avail_in = static_cast<uInt>(n);
    if (pass_.progress) pass_.progress(pos_);
    return true;
  }

  Status Loop() {
    pos_ = begin_;
    bool eof = false;  // No input left: inflate may still end the stream, else it ends early.
    for (;;) {
      if (z_->avail_in == 0 && !eof) {
        ASSIGN_OR_RETURN(bool more, Refill());
        eof = !more;
      }
      if (ring_pos_ == kWindow) ring_pos_ = 0;
      z_->next_out = reinterpret_cast<Bytef*>(ring_ + ring_pos_);
      z_->avail_out = static_cast<uInt>(kWindow - ring_pos_);
      const int ret = zl_.inflate(z_, Z_BLOCK);
      if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
        return Corrupt(pass_.display, *z_, "inflate failed");
      if (ret == Z_BUF_ERROR && eof) return Corrupt(pass_.display, *z_, "it ends early");
      ASSIGN_OR_RETURN(bool go_on, Emit(kWindow - ring_pos_ - z_->avail_out));
      if (!go_on) return Status::OK();  // Far enough past a tar's end: the rest is not read.
      if (count_.total - last_boundary_out_ > kMaxBlockOut) {
        return Status::BackupDamaged("archive " + pass_.display + ": a deflate block decodes to " +
                                     "more than " + std::to_string(kMaxBlockOut >> 20) +
                                     " MiB, which no compressor writes: refused");
      }
      if (ret == Z_STREAM_END) {
        ASSIGN_OR_RETURN(bool next, gzip_ ? NextMember() : StatusOr<bool>(false));
        if (!next) return Status::OK();
        last_boundary_out_ = count_.total;
        continue;
      }
      const bool boundary = (z_->data_type & 128) && !(z_->data_type & 64);
      if (boundary) last_boundary_out_ = count_.total;
      if (boundary && (new_member_ || count_.total - last_point_out_ >= kPointSpacing)) {
        RETURN_IF_ERROR(AddPoint(Consumed() * 8 - static_cast<uint64_t>(z_->data_type & 7)));
      }
    }
  }

  // Passes on what inflate just wrote into the ring: false once the pass may end.
  StatusOr<bool> Emit(size_t produced) {
    if (produced == 0) return true;
    const char* p = ring_ + ring_pos_;
    ASSIGN_OR_RETURN(bool go_on, Deliver(pass_, {p, produced}, &count_));
    crc_ = zl_.crc32(crc_, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(produced));
    ring_pos_ += produced;
    ring_fill_ = std::min(kWindow, ring_fill_ + produced);
    return go_on;
  }

  // After a gzip member: true if another member follows (the stream goes on), false if the
  // file ends or what follows is not a gzip member (trailing padding, as gzip ignores).
  StatusOr<bool> NextMember() {
    while (z_->avail_in < 2) {
      const std::string rest(reinterpret_cast<const char*>(z_->next_in), z_->avail_in);
      ASSIGN_OR_RETURN(bool more, Refill());
      if (!more) {
        z_->avail_in = 0;
        return false;
      }
      in_.insert(0, rest);
      z_->next_in = reinterpret_cast<Bytef*>(in_.data());
      z_->avail_in = static_cast<uInt>(in_.size());
    }
    if (z_->next_in[0] != 0x1f || z_->next_in[1] != 0x8b) {
      end_ = Consumed();
      z_->avail_in = 0;
      pos_ = end_;
      return false;
    }
    if (zl_.inflate_reset(z_) != Z_OK) return Status::Internal("zlib: cannot reset");
    RETURN_IF_ERROR(Charge(IndexLimits::kStartCost));
    member_start_ = count_.total;
    ring_fill_ = 0;
    new_member_ = true;
    return true;
  }

  Status Charge(uint64_t work) {
    return pass_.budget ? pass_.budget->Work(work, pass_.display) : Status::OK();
  }

  // Every member of a gzip file has a point, and a hostile file may hold millions of empty
  // members: each point's bytes are counted against the budget's index bytes.
  Status AddPoint(uint64_t in_bit) {
    auto& points = index_->points;
    if (points.size() > first_point_ && points.back().out == count_.total) points.pop_back();
    const size_t w =
        static_cast<size_t>(std::min<uint64_t>(ring_fill_, count_.total - member_start_));
    if (pass_.budget) RETURN_IF_ERROR(pass_.budget->Index(sizeof(RestartPoint) + w, pass_.display));
    RestartPoint p;
    p.in_bit = in_bit;
    p.out = count_.total;
    p.window_offset = index_->windows.size();
    p.window_size = static_cast<uint32_t>(w);
    if (ring_pos_ >= w) {
      index_->windows.append(ring_ + ring_pos_ - w, w);
    } else {
      index_->windows.append(ring_ + kWindow - (w - ring_pos_), w - ring_pos_);
      index_->windows.append(ring_, ring_pos_);
    }
    points.push_back(p);
    last_point_out_ = count_.total;
    new_member_ = false;
    return Status::OK();
  }

  const ZlibApi& zl_;
  const DecodePass& pass_;
  const uint64_t begin_;
  uint64_t end_;
  const bool gzip_;
  ArchiveIndex* index_;
  z_stream* z_ = nullptr;
  std::string in_;
  uint64_t pos_ = 0;  // Next byte of the file to read.
  char ring_[kWindow];
  size_t ring_pos_ = 0, ring_fill_ = 0;
  DecodeCount count_;  // count_.total: the stream's output so far.
  uint64_t member_start_ = 0, last_point_out_ = 0;
  uint64_t last_boundary_out_ = 0;  // Output at the last block boundary (or stream start).
  bool new_member_ = true;
  uint32_t first_point_ = 0;
  uLong crc_ = 0;
};

}  // namespace

StatusOr<ArchiveStream> IndexDeflate(const DecodePass& pass, uint64_t in_offset, uint64_t in_length,
                                     bool gzip, ArchiveIndex* index, uint32_t* crc) {
  ASSIGN_OR_RETURN(const ZlibApi* zl, Zlib());
  auto indexer = std::make_unique<DeflateIndexer>(*zl, pass, in_offset, in_length, gzip, index);
  return indexer->Run(crc);
}

Status InflateFrom(const RandomAccessFile& file, const ArchiveStream& stream,
                   const RestartPoint& point, std::string_view window, std::span<char> dst,
                   const std::string& display) {
  ASSIGN_OR_RETURN(const ZlibApi* zl, Zlib());
  Inflater inf(*zl, -15);
  if (!inf.live()) return Status::Internal("zlib: cannot start inflating");
  z_stream* z = inf.get();
  uint64_t pos = point.in_bit / 8;
  const uint64_t end = stream.in_offset + stream.in_length;
  std::string in;
  if (const int used = static_cast<int>(point.in_bit % 8); used != 0) {
    char c;
    ASSIGN_OR_RETURN(size_t n, file.ReadAt(pos, {&c, 1}));
    if (n != 1) return Status::BackupDamaged("archive " + display + " is cut short");
    zl->inflate_prime(z, 8 - used, static_cast<unsigned char>(c) >> used);
    ++pos;
  }
  if (!window.empty() &&
      zl->inflate_set_dictionary(z, reinterpret_cast<const Bytef*>(window.data()),
                                 static_cast<uInt>(window.size())) != Z_OK) {
    return Corrupt(display, *z, "bad window");
  }
  z->next_out = reinterpret_cast<Bytef*>(dst.data());
  z->avail_out = static_cast<uInt>(dst.size());
  while (z->avail_out > 0) {
    if (z->avail_in == 0) {
      if (pos >= end) return Corrupt(display, *z, "it ends early");
      in.resize(static_cast<size_t>(std::min<uint64_t>(kInChunk, end - pos)));
      ASSIGN_OR_RETURN(size_t n, file.ReadAt(pos, in));
      if (n == 0) return Status::BackupDamaged("archive " + display + " is cut short");
      pos += n;
      z->next_in = reinterpret_cast<Bytef*>(in.data());
      z->avail_in = static_cast<uInt>(n);
    }
    const int ret = zl->inflate(z, Z_NO_FLUSH);
    if (ret == Z_STREAM_END && z->avail_out > 0) return Corrupt(display, *z, "it ends early");
    if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
      return Corrupt(display, *z, "inflate failed");
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
