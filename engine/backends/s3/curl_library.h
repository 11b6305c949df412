// CurlLibrary: libcurl's functions, loaded the first time object storage is used rather than
// linked. libcurl and the libraries it pulls in (TLS, Kerberos, LDAP, SSH, IDN: about thirty)
// made every process start slower, by ~30 ms from a cold disk and ~6 MB of pages touched while
// relocating them, though most commands and mounts never reach object storage.
#pragma once

#include <curl/curl.h>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

// The libcurl calls the S3 client makes (the library's own signatures).
struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  void (*easy_reset)(CURL*);
  void (*easy_cleanup)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// The soname of the libcurl this build was compiled against (Debian's package libcurl4).
inline constexpr const char* kCurlLibrary = "libcurl.so.4";

// libcurl, loaded and initialised (curl_global_init) by the first call; every later call
// gives the same table. Thread-safe. kNotSupported naming the library, its package and why
// (dlerror) if it cannot be loaded or lacks a function; a later call tries again.
StatusOr<const CurlApi*> Curl();

// REQUIRES: Curl() succeeded (a curl handle or list exists only then). The same table.
const CurlApi& LoadedCurl();

// Loads `library` and looks its functions up, as Curl() does with kCurlLibrary, without
// initialising it or keeping it (for tests of a library that is missing or incomplete).
StatusOr<CurlApi> LoadCurlLibrary(const char* library);

}  // namespace stitchfs::engine
