// The archive codecs' libraries (zlib, libzstd, liblzma, libbz2), loaded the first time an
// archive needs one rather than linked: linked, the four cost every process ~3.5 ms at start from
// a cold disk (measured: a program linking them starts in 7-9 ms cold, 3.5-5 ms without), though
// most commands and mounts read no archive. Each is a table of the functions the archive code
// calls (the libraries' own signatures), filled by the first call (shared_library.h).
#pragma once

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct ZlibApi {
  int (*inflate_init2)(z_stream*, int window_bits, const char* version, int stream_size);
  int (*inflate)(z_stream*, int flush);
  int (*inflate_end)(z_stream*);
  int (*inflate_reset)(z_stream*);
  int (*inflate_prime)(z_stream*, int bits, int value);
  int (*inflate_set_dictionary)(z_stream*, const Bytef*, uInt);
  uLong (*crc32)(uLong, const Bytef*, uInt);
  // inflateInit2 (a macro over inflateInit2_ with the header's version).
  int InflateInit2(z_stream* z, int window_bits) const {
    return inflate_init2(z, window_bits, ZLIB_VERSION, static_cast<int>(sizeof(z_stream)));
  }
};

struct ZstdApi {
  ZSTD_DStream* (*create_dstream)();
  size_t (*init_dstream)(ZSTD_DStream*);
  size_t (*free_dstream)(ZSTD_DStream*);
  size_t (*decompress_stream)(ZSTD_DStream*, ZSTD_outBuffer*, ZSTD_inBuffer*);
  unsigned (*is_error)(size_t);
  const char* (*get_error_name)(size_t);
};

struct LzmaApi {
  lzma_ret (*auto_decoder)(lzma_stream*, uint64_t memlimit, uint32_t flags);
  lzma_ret (*code)(lzma_stream*, lzma_action);
  void (*end)(lzma_stream*);
};

struct Bzip2Api {
  int (*decompress_init)(bz_stream*, int verbosity, int small);
  int (*decompress)(bz_stream*);
  int (*decompress_end)(bz_stream*);
};

// Each library, loaded by the first call; the same table after. Thread-safe. kNotSupported
// naming the library, its Debian package and why, if it cannot be loaded or lacks a function
// (a later call tries again).
StatusOr<const ZlibApi*> Zlib();
StatusOr<const ZstdApi*> Zstd();
StatusOr<const LzmaApi*> Lzma();
StatusOr<const Bzip2Api*> Bzip2();

}  // namespace stitchfs::engine
