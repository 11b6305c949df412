#include "engine/backends/archive/codec_libraries.h"

#include <atomic>
#include <mutex>
#include <string>

#include "engine/base/shared_library.h"

namespace stitchfs::engine {
namespace {

constexpr const char* kFeature = "reading this archive";

// Opens `soname` and fills `api` with `find(handle, api)`; kNotSupported if anything lacks.
template <typename Api, typename Find>
StatusOr<Api> LoadCodec(const char* soname, const char* package, const Find& find) {
  ASSIGN_OR_RETURN(void* h, OpenSharedLibrary(soname, package, kFeature));
  Api api{};
  if (!find(h, api)) {
    ::dlclose(h);
    return Status::NotSupported(std::string(kFeature) + " needs " + soname + " (Debian package " +
                                package + "), but it lacks a function stitch calls");
  }
  return api;
}

template <typename Api>
struct Slot {
  std::mutex mu;
  std::atomic<const Api*> api{nullptr};
};

}  // namespace

StatusOr<const ZlibApi*> Zlib() {
  static Slot<ZlibApi> slot;
  return LoadOnce<ZlibApi>(slot.api, slot.mu, [] {
    return LoadCodec<ZlibApi>("libz.so.1", "zlib1g", [](void* h, ZlibApi& a) {
      return FindFunction(h, "inflateInit2_", &a.inflate_init2) &&
             FindFunction(h, "inflate", &a.inflate) &&
             FindFunction(h, "inflateEnd", &a.inflate_end) &&
             FindFunction(h, "inflateReset", &a.inflate_reset) &&
             FindFunction(h, "inflatePrime", &a.inflate_prime) &&
             FindFunction(h, "inflateSetDictionary", &a.inflate_set_dictionary) &&
             FindFunction(h, "crc32", &a.crc32);
    });
  });
}

StatusOr<const ZstdApi*> Zstd() {
  static Slot<ZstdApi> slot;
  return LoadOnce<ZstdApi>(slot.api, slot.mu, [] {
    return LoadCodec<ZstdApi>("libzstd.so.1", "libzstd1", [](void* h, ZstdApi& a) {
      return FindFunction(h, "ZSTD_createDStream", &a.create_dstream) &&
             FindFunction(h, "ZSTD_initDStream", &a.init_dstream) &&
             FindFunction(h, "ZSTD_freeDStream", &a.free_dstream) &&
             FindFunction(h, "ZSTD_decompressStream", &a.decompress_stream) &&
             FindFunction(h, "ZSTD_isError", &a.is_error) &&
             FindFunction(h, "ZSTD_getErrorName", &a.get_error_name);
    });
  });
}

StatusOr<const LzmaApi*> Lzma() {
  static Slot<LzmaApi> slot;
  return LoadOnce<LzmaApi>(slot.api, slot.mu, [] {
    return LoadCodec<LzmaApi>("liblzma.so.5", "liblzma5", [](void* h, LzmaApi& a) {
      return FindFunction(h, "lzma_auto_decoder", &a.auto_decoder) &&
             FindFunction(h, "lzma_code", &a.code) && FindFunction(h, "lzma_end", &a.end);
    });
  });
}

StatusOr<const Bzip2Api*> Bzip2() {
  static Slot<Bzip2Api> slot;
  return LoadOnce<Bzip2Api>(slot.api, slot.mu, [] {
    return LoadCodec<Bzip2Api>("libbz2.so.1.0", "libbz2-1.0", [](void* h, Bzip2Api& a) {
      return FindFunction(h, "BZ2_bzDecompressInit", &a.decompress_init) &&
             FindFunction(h, "BZ2_bzDecompress", &a.decompress) &&
             FindFunction(h, "BZ2_bzDecompressEnd", &a.decompress_end);
    });
  });
}

}  // namespace stitchfs::engine
