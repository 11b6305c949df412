#include "engine/backends/s3/curl_library.h"

#include <atomic>
#include <mutex>
#include <string>

#include "engine/base/shared_library.h"

namespace stitchfs::engine {
namespace {

constexpr const char* kFeature = "object storage";

std::mutex g_mu;
std::atomic<const CurlApi*> g_api{nullptr};

}  // namespace

StatusOr<CurlApi> LoadCurlLibrary(const char* library) {
  // Kept loaded for the life of the process (curl_global_cleanup is never called).
  ASSIGN_OR_RETURN(void* h, OpenSharedLibrary(library, "libcurl4", kFeature));
  CurlApi api{};
  const bool all = FindFunction(h, "curl_global_init", &api.global_init) &&
                   FindFunction(h, "curl_easy_init", &api.easy_init) &&
                   FindFunction(h, "curl_easy_reset", &api.easy_reset) &&
                   FindFunction(h, "curl_easy_cleanup", &api.easy_cleanup) &&
                   FindFunction(h, "curl_easy_setopt", &api.easy_setopt) &&
                   FindFunction(h, "curl_easy_perform", &api.easy_perform) &&
                   FindFunction(h, "curl_easy_getinfo", &api.easy_getinfo) &&
                   FindFunction(h, "curl_easy_strerror", &api.easy_strerror) &&
                   FindFunction(h, "curl_slist_append", &api.slist_append) &&
                   FindFunction(h, "curl_slist_free_all", &api.slist_free_all);
  if (!all) {
    ::dlclose(h);
    return Status::NotSupported(std::string(kFeature) + " needs " + library +
                                " (Debian package libcurl4), but it lacks a function the S3 "
                                "client calls");
  }
  return api;
}

StatusOr<const CurlApi*> Curl() {
  return LoadOnce<CurlApi>(g_api, g_mu, []() -> StatusOr<CurlApi> {
    ASSIGN_OR_RETURN(CurlApi loaded, LoadCurlLibrary(kCurlLibrary));
    if (loaded.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      return Status::NotSupported(std::string(kFeature) + " needs " + kCurlLibrary +
                                  ", whose curl_global_init failed");
    }
    return loaded;
  });
}

const CurlApi& LoadedCurl() { return *g_api.load(std::memory_order_acquire); }

}  // namespace stitchfs::engine
