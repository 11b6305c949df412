#include "engine/backends/s3/curl_library.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>

namespace stitchfs::engine {
namespace {

Status Missing(const char* library, const std::string& why) {
  return Status::NotSupported(std::string("object storage needs ") + library +
                              " (Debian package libcurl4), which cannot be loaded: " + why);
}

// `*fn` set to `name` from `handle`; false if it is not there.
template <typename Fn>
bool Find(void* handle, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(::dlsym(handle, name));
  return *fn != nullptr;
}

std::mutex g_mu;
std::atomic<const CurlApi*> g_api{nullptr};

}  // namespace

StatusOr<CurlApi> LoadCurlLibrary(const char* library) {
  // Kept loaded for the life of the process (curl_global_cleanup is never called).
  void* h = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    return Missing(library, e ? e : "dlopen failed");
  }
  CurlApi api{};
  const bool all = Find(h, "curl_global_init", &api.global_init) &&
                   Find(h, "curl_easy_init", &api.easy_init) &&
                   Find(h, "curl_easy_reset", &api.easy_reset) &&
                   Find(h, "curl_easy_cleanup", &api.easy_cleanup) &&
                   Find(h, "curl_easy_setopt", &api.easy_setopt) &&
                   Find(h, "curl_easy_perform", &api.easy_perform) &&
                   Find(h, "curl_easy_getinfo", &api.easy_getinfo) &&
                   Find(h, "curl_easy_strerror", &api.easy_strerror) &&
                   Find(h, "curl_slist_append", &api.slist_append) &&
                   Find(h, "curl_slist_free_all", &api.slist_free_all);
  if (!all) {
    ::dlclose(h);
    return Missing(library, "it lacks a function the S3 client calls");
  }
  return api;
}

StatusOr<const CurlApi*> Curl() {
  if (const CurlApi* api = g_api.load(std::memory_order_acquire)) return api;
  std::lock_guard<std::mutex> lock(g_mu);
  if (const CurlApi* api = g_api.load(std::memory_order_relaxed)) return api;
  ASSIGN_OR_RETURN(CurlApi loaded, LoadCurlLibrary(kCurlLibrary));
  if (loaded.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return Missing(kCurlLibrary, "curl_global_init failed");
  }
  const CurlApi* api = new CurlApi(loaded);  // Never freed: handles may outlive any owner.
  g_api.store(api, std::memory_order_release);
  return api;
}

const CurlApi& LoadedCurl() { return *g_api.load(std::memory_order_acquire); }

}  // namespace stitchfs::engine
