#include "engine/backends/archive/stream_decoder.h"

#include <memory>

#include "engine/backends/archive/codec_libraries.h"

namespace stitchfs::engine {

namespace {

constexpr size_t kChunk = 256 * 1024;
// What a decoder may allocate. xz -9 needs 65 MiB and zstd's default window limit is 128 MiB (a
// frame asking for more is refused by libzstd); an xz header may ask for a 1.5 GiB dictionary.
constexpr uint64_t kLzmaMemLimit = 256 << 20;

// One library's decoder behind one shape: Step consumes input and fills output.
class Decoder {
 public:
  virtual ~Decoder() = default;
  // Decodes from `*in` (advanced past what was used) into `out`; the bytes written. `*ended` once
  // the stream is complete.
  virtual StatusOr<size_t> Step(std::string_view* in, std::span<char> out, bool* ended) = 0;
};

class ZstdDecoder final : public Decoder {
 public:
  explicit ZstdDecoder(const ZstdApi& z) : z_(z), d_(z.create_dstream()) {
    if (d_ != nullptr) z_.init_dstream(d_);
  }
  ~ZstdDecoder() override { z_.free_dstream(d_); }
  StatusOr<size_t> Step(std::string_view* in, std::span<char> out, bool* ended) override {
    if (d_ == nullptr) return Status::Internal("libzstd: cannot start decoding");
    ZSTD_inBuffer i{in->data(), in->size(), 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    const size_t r = z_.decompress_stream(d_, &o, &i);
    if (z_.is_error(r)) return Status::BackupDamaged(z_.get_error_name(r));
    in->remove_prefix(i.pos);
    *ended = r == 0;  // A frame is complete; another may follow.
    return o.pos;
  }

 private:
  const ZstdApi& z_;
  ZSTD_DStream* d_;
};

class LzmaDecoder final : public Decoder {
 public:
  // Either format, told by its magic: tools write `.tar.lzma` as either.
  explicit LzmaDecoder(const LzmaApi& x) : x_(x) {
    ok_ = x_.auto_decoder(&s_, kLzmaMemLimit, LZMA_CONCATENATED) == LZMA_OK;
  }
  ~LzmaDecoder() override { x_.end(&s_); }
  StatusOr<size_t> Step(std::string_view* in, std::span<char> out, bool* ended) override {
    if (!ok_) return Status::Internal("liblzma: cannot start decoding");
    s_.next_in = reinterpret_cast<const uint8_t*>(in->data());
    s_.avail_in = in->size();
    s_.next_out = reinterpret_cast<uint8_t*>(out.data());
    s_.avail_out = out.size();
    const lzma_ret r = x_.code(&s_, in->empty() ? LZMA_FINISH : LZMA_RUN);
    if (r == LZMA_MEMLIMIT_ERROR) {
      return Status::BackupDamaged("it needs more than " + std::to_string(kLzmaMemLimit >> 20) +
                                   " MiB of memory to decode");
    }
    if (r != LZMA_OK && r != LZMA_STREAM_END && r != LZMA_BUF_ERROR)
      return Status::BackupDamaged("liblzma error " + std::to_string(static_cast<int>(r)));
    in->remove_prefix(in->size() - s_.avail_in);
    *ended = r == LZMA_STREAM_END;
    return out.size() - s_.avail_out;
  }

 private:
  const LzmaApi& x_;
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool ok_ = false;
};

class Bzip2Decoder final : public Decoder {
 public:
  explicit Bzip2Decoder(const Bzip2Api& b) : b_(b) { ok_ = b_.decompress_init(&s_, 0, 0) == BZ_OK; }
  ~Bzip2Decoder() override { b_.decompress_end(&s_); }
  StatusOr<size_t> Step(std::string_view* in, std::span<char> out, bool* ended) override {
    if (!ok_) return Status::Internal("libbz2: cannot start decoding");
    if (restart_) {  // Streams concatenated (as pbzip2 writes them): a decoder each.
      b_.decompress_end(&s_);
      s_ = bz_stream{};
      if (b_.decompress_init(&s_, 0, 0) != BZ_OK) return Status::Internal("libbz2: restart");
      restart_ = false;
    }
    s_.next_in = const_cast<char*>(in->data());
    s_.avail_in = static_cast<unsigned>(in->size());
    s_.next_out = out.data();
    s_.avail_out = static_cast<unsigned>(out.size());
    const int r = b_.decompress(&s_);
    if (r != BZ_OK && r != BZ_STREAM_END)
      return Status::BackupDamaged("libbz2 error " + std::to_string(r));
    in->remove_prefix(in->size() - s_.avail_in);
    *ended = restart_ = r == BZ_STREAM_END;
    return out.size() - s_.avail_out;
  }

 private:
  const Bzip2Api& b_;
  bz_stream s_{};
  bool ok_ = false;
  bool restart_ = false;
};

// The decoder of `codec`, its library loaded; nullptr for a codec it has none of.
StatusOr<std::unique_ptr<Decoder>> MakeDecoder(StreamCodec codec) {
  switch (codec) {
    case StreamCodec::kZstd: {
      ASSIGN_OR_RETURN(const ZstdApi* z, Zstd());
      return std::unique_ptr<Decoder>(std::make_unique<ZstdDecoder>(*z));
    }
    case StreamCodec::kXz:
    case StreamCodec::kLzma: {
      ASSIGN_OR_RETURN(const LzmaApi* x, Lzma());
      return std::unique_ptr<Decoder>(std::make_unique<LzmaDecoder>(*x));
    }
    case StreamCodec::kBzip2: {
      ASSIGN_OR_RETURN(const Bzip2Api* b, Bzip2());
      return std::unique_ptr<Decoder>(std::make_unique<Bzip2Decoder>(*b));
    }
    case StreamCodec::kNone:
    case StreamCodec::kGzip:
      break;
  }
  return std::unique_ptr<Decoder>();
}

}  // namespace

StatusOr<uint64_t> DecodeWhole(StreamCodec codec, const DecodePass& pass) {
  ASSIGN_OR_RETURN(std::unique_ptr<Decoder> d, MakeDecoder(codec));
  if (!d) return Status::Internal("no whole-stream decoder for this codec");
  const uint64_t size = pass.file->size();
  std::string in, out(kChunk, '\0');
  uint64_t pos = 0;
  DecodeCount count;
  bool ended = false;
  std::string_view pending;
  auto start = [&pass] {  // A decoder, or a stream or frame after another, starts.
    return pass.budget ? pass.budget->Work(IndexLimits::kStartCost, pass.display) : Status::OK();
  };
  RETURN_IF_ERROR(start());
  for (;;) {
    if (pending.empty() && pos < size) {
      ASSIGN_OR_RETURN(size_t n, ReadInput(pass, pos, kChunk, &in));
      if (n == 0) break;
      pos += n;
      pending = in;
      if (pass.progress) pass.progress(pos);
    }
    if (pending.empty() && ended) break;  // Ended at a stream boundary with nothing after it.
    if (ended) RETURN_IF_ERROR(start());
    const size_t before = pending.size();
    auto n = d->Step(&pending, out, &ended);
    if (!n.ok()) {
      return Status::BackupDamaged("archive " + pass.display + ": compressed data is damaged (" +
                                   n.status().message() + ")");
    }
    if (*n > 0) {
      ASSIGN_OR_RETURN(bool go_on, Deliver(pass, {out.data(), *n}, &count));
      if (!go_on) return count.total;  // Far enough past a tar's end: the rest is not read.
    } else if (pending.size() == before && pos >= size) {
      break;  // No progress and no more input.
    }
  }
  if (!ended) {
    return Status::BackupDamaged("archive " + pass.display +
                                 ": compressed data is damaged (it ends early)");
  }
  return count.total;
}

}  // namespace stitchfs::engine
