// Libraries loaded with dlopen the first time a feature needs them rather than linked: a linked
// library costs every process its loading and relocation at start (a few milliseconds each from
// a cold disk), though most commands and mounts never use it (object storage's libcurl, the
// archive codecs). Each such library is a table of the functions used, filled here.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

// Loads `soname` (RTLD_NOW | RTLD_LOCAL) for the life of the process. kNotSupported saying that
// `feature` needs it, from Debian package `package`, and why it cannot be loaded (dlerror).
StatusOr<void*> OpenSharedLibrary(const char* soname, const char* package, const char* feature);

// `*fn` set to the function `name` of `handle`; false if it has none.
template <typename Fn>
bool FindFunction(void* handle, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(::dlsym(handle, name));
  return *fn != nullptr;
}

// The table `load()` gives, made by the first call that succeeds and kept for the process's life
// in `slot` (guarded by `mu` while it is made); a failure is returned and tried again by the next
// call. Thread-safe.
template <typename Api, typename Load>
StatusOr<const Api*> LoadOnce(std::atomic<const Api*>& slot, std::mutex& mu, const Load& load) {
  if (const Api* api = slot.load(std::memory_order_acquire)) return api;
  std::lock_guard<std::mutex> lock(mu);
  if (const Api* api = slot.load(std::memory_order_relaxed)) return api;
  StatusOr<Api> loaded = load();
  if (!loaded.ok()) return loaded.status();
  const Api* api = new Api(*loaded);  // Never freed: objects of the library may outlive any owner.
  slot.store(api, std::memory_order_release);
  return api;
}

}  // namespace stitchfs::engine
